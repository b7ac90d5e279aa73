package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework-timetypes/timetypes"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/edgefleet/edgefleet/infra/terraform/internal/client"
)

var (
	_ resource.ResourceWithConfigure   = (*apiKeyResource)(nil)
	_ resource.ResourceWithImportState = (*apiKeyResource)(nil)
)

type apiKeyResource struct{ client *client.Client }

func newAPIKeyResource() resource.Resource { return &apiKeyResource{} }

type apiKeyModel struct {
	ID        types.String      `tfsdk:"id"`
	Name      types.String      `tfsdk:"name"`
	Role      types.String      `tfsdk:"role"`
	ExpiresAt timetypes.RFC3339 `tfsdk:"expires_at"`
	Key       types.String      `tfsdk:"key"`
	Prefix    types.String      `tfsdk:"prefix"`
}

var apiKeyAttributes = map[string]bool{"name": true, "role": true, "expires_at": true}

func (r *apiKeyResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_api_key"
}

func (r *apiKeyResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	replace := []planmodifier.String{stringplanmodifier.RequiresReplace()}
	resp.Schema = schema.Schema{
		MarkdownDescription: "An API key of the organization, limited to a role (never above the role of the key Terraform " +
			"uses). The key is shown at create only (`key`; not after import). Every input forces a new key. Destroying it " +
			"revokes it; a key revoked outside Terraform is planned for re-creation.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{Computed: true, MarkdownDescription: "The key's id.",
				PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()}},
			"name": schema.StringAttribute{Required: true, MarkdownDescription: "Unique in the organization, 1–100 characters.",
				Validators: []validator.String{stringvalidator.LengthBetween(1, 100)}, PlanModifiers: replace},
			"role": schema.StringAttribute{Required: true, MarkdownDescription: "One of `owner`, `admin`, `operator`, `viewer`.",
				Validators: []validator.String{stringvalidator.OneOf(roles...)}, PlanModifiers: replace},
			"expires_at": schema.StringAttribute{Optional: true, CustomType: timetypes.RFC3339Type{},
				MarkdownDescription: "When it stops working (RFC 3339, in the future). Default: never.", PlanModifiers: replace},
			"key": schema.StringAttribute{Computed: true, Sensitive: true, MarkdownDescription: "The key (`efk_…`), known after create only.",
				PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()}},
			"prefix": schema.StringAttribute{Computed: true, MarkdownDescription: "The key's first characters, as lists show them.",
				PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()}},
		},
	}
}

func (r *apiKeyResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.client = configureResource(req, resp)
}

func (m *apiKeyModel) fill(k *client.APIKey) {
	m.ID = types.StringValue(k.ID)
	m.Name = types.StringValue(k.Name)
	m.Role = types.StringValue(k.Role)
	m.Prefix = types.StringValue(k.Prefix)
	// The API answers in its own format (UTC, milliseconds): keep the configured spelling when it is the same instant.
	if k.ExpiresAt == nil {
		m.ExpiresAt = timetypes.NewRFC3339Null()
	} else if same, _ := m.ExpiresAt.StringSemanticEquals(context.Background(), timetypes.NewRFC3339ValueMust(*k.ExpiresAt)); !same {
		m.ExpiresAt = timetypes.NewRFC3339ValueMust(canonicalTime(*k.ExpiresAt))
	}
	if m.Key.IsUnknown() {
		m.Key = types.StringNull()
	}
}

func (r *apiKeyResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan apiKeyModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	created, err := r.client.CreateAPIKey(ctx, client.APIKeyCreate{
		Name: plan.Name.ValueString(), Role: plan.Role.ValueString(), ExpiresAt: stringPtr(plan.ExpiresAt.StringValue),
	})
	if err != nil {
		addAPIError(&resp.Diagnostics, "Could not create the API key", err, apiKeyAttributes, nil)
		return
	}
	plan.fill(&created.APIKey)
	plan.Key = types.StringValue(created.Key)
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

func (r *apiKeyResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state apiKeyModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	key, err := r.client.GetAPIKey(ctx, state.ID.ValueString())
	if client.IsNotFound(err) || (err == nil && key.RevokedAt != nil) {
		resp.State.RemoveResource(ctx)
		return
	}
	if err != nil {
		resp.Diagnostics.AddError("Could not read the API key", err.Error())
		return
	}
	state.fill(key)
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

// Update is never called with a change (every input forces replacement).
func (r *apiKeyResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan apiKeyModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

func (r *apiKeyResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state apiKeyModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if err := r.client.RevokeAPIKey(ctx, state.ID.ValueString()); err != nil && !client.IsNotFound(err) {
		resp.Diagnostics.AddError("Could not revoke the API key", err.Error())
	}
}

func (r *apiKeyResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	resource.ImportStatePassthroughID(ctx, path.Root("id"), req, resp)
}
