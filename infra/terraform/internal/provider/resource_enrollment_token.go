package provider

import (
	"context"
	"math"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/mapvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/boolplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64default"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/mapplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/edgefleet/edgefleet/infra/terraform/internal/client"
)

var (
	_ resource.ResourceWithConfigure   = (*enrollmentTokenResource)(nil)
	_ resource.ResourceWithImportState = (*enrollmentTokenResource)(nil)
)

type enrollmentTokenResource struct{ client *client.Client }

func newEnrollmentTokenResource() resource.Resource { return &enrollmentTokenResource{} }

type enrollmentTokenModel struct {
	ID               types.String `tfsdk:"id"`
	Description      types.String `tfsdk:"description"`
	ExpiresInHours   types.Int64  `tfsdk:"expires_in_hours"`
	MaxUses          types.Int64  `tfsdk:"max_uses"`
	Labels           types.Map    `tfsdk:"labels"`
	RequiresApproval types.Bool   `tfsdk:"requires_approval"`
	SiteID           types.String `tfsdk:"site_id"`
	Token            types.String `tfsdk:"token"`
	InstallCommand   types.String `tfsdk:"install_command"`
	ExpiresAt        types.String `tfsdk:"expires_at"`
	Uses             types.Int64  `tfsdk:"uses"`
	Usable           types.Bool   `tfsdk:"usable"`
}

var enrollmentTokenAttributes = map[string]bool{
	"description": true, "expires_in_hours": true, "max_uses": true, "labels": true, "requires_approval": true, "site_id": true,
}

func (r *enrollmentTokenResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_enrollment_token"
}

func (r *enrollmentTokenResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	replace := []planmodifier.String{stringplanmodifier.RequiresReplace()}
	resp.Schema = schema.Schema{
		MarkdownDescription: "An enrollment token: the secret an agent trades for node credentials. The secret is shown " +
			"at create only (`token`, `install_command`; not after import). Every input forces a new token. " +
			"Destroying it revokes it; a token revoked outside Terraform is planned for re-creation.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{Computed: true, MarkdownDescription: "The token's id.",
				PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()}},
			"description": schema.StringAttribute{Optional: true, MarkdownDescription: "What the token is for (at most 200 characters).",
				Validators: []validator.String{stringvalidator.LengthAtMost(200)}, PlanModifiers: replace},
			"expires_in_hours": schema.Int64Attribute{Optional: true, Computed: true, Default: int64default.StaticInt64(24),
				MarkdownDescription: "Lifetime from creation, 1–8760 hours. Default: 24.",
				Validators:          []validator.Int64{int64validator.Between(1, 8760)},
				PlanModifiers:       []planmodifier.Int64{int64planmodifier.RequiresReplace()}},
			"max_uses": schema.Int64Attribute{Optional: true, MarkdownDescription: "How many nodes may enroll with it (default: unlimited).",
				Validators:    []validator.Int64{int64validator.Between(1, 1000000)},
				PlanModifiers: []planmodifier.Int64{int64planmodifier.RequiresReplace()}},
			"labels": schema.MapAttribute{Optional: true, ElementType: types.StringType,
				MarkdownDescription: "Labels every node enrolled with it starts with (with a site, the API adds `site = <site name>`).",
				Validators: []validator.Map{mapvalidator.KeysAre(stringvalidator.RegexMatches(tokenLabelKeyPattern, "must be a label key")),
					mapvalidator.ValueStringsAre(stringvalidator.LengthAtMost(63))},
				PlanModifiers: []planmodifier.Map{mapplanmodifier.RequiresReplace()}},
			"requires_approval": schema.BoolAttribute{Optional: true, Computed: true, Default: booldefault.StaticBool(false),
				MarkdownDescription: "Whether nodes wait for an operator's approval. Default: false.",
				PlanModifiers:       []planmodifier.Bool{boolplanmodifier.RequiresReplace()}},
			"site_id": schema.StringAttribute{Optional: true, MarkdownDescription: "The site nodes enrolled with it are placed in.",
				PlanModifiers: replace},
			"token": schema.StringAttribute{Computed: true, Sensitive: true, MarkdownDescription: "The secret (known after create only).",
				PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()}},
			"install_command": schema.StringAttribute{Computed: true, Sensitive: true,
				MarkdownDescription: "A shell line that installs and starts an agent with this token (known after create only).",
				PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown()}},
			"expires_at": schema.StringAttribute{Computed: true, MarkdownDescription: "When it expires (RFC 3339).",
				PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()}},
			"uses":   schema.Int64Attribute{Computed: true, MarkdownDescription: "How many nodes enrolled with it."},
			"usable": schema.BoolAttribute{Computed: true, MarkdownDescription: "Not revoked, not expired, uses left."},
		},
	}
}

func (r *enrollmentTokenResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.client = configureResource(req, resp)
}

func (m *enrollmentTokenModel) fill(ctx context.Context, t *client.EnrollmentToken) {
	m.ID = types.StringValue(t.ID)
	m.Description = types.StringPointerValue(t.Description)
	m.MaxUses = types.Int64PointerValue(t.MaxUses)
	// The API adds `site = <site name>` to the labels of a token with a site; unless configured,
	// that label is the site's, not the configuration's.
	labels := map[string]string{}
	configured := map[string]string{}
	if !m.Labels.IsNull() && !m.Labels.IsUnknown() {
		m.Labels.ElementsAs(ctx, &configured, false)
	}
	for key, value := range t.Labels {
		if _, ok := configured[key]; !ok && key == "site" && t.Site != nil && value == t.Site.Name {
			continue
		}
		labels[key] = value
	}
	if len(labels) > 0 || !m.Labels.IsNull() {
		m.Labels, _ = types.MapValueFrom(ctx, types.StringType, labels)
	}
	m.RequiresApproval = types.BoolValue(t.RequiresApproval)
	if t.Site != nil {
		m.SiteID = types.StringValue(t.Site.ID)
	} else {
		m.SiteID = types.StringNull()
	}
	m.ExpiresAt = types.StringValue(t.ExpiresAt)
	m.Uses = types.Int64Value(t.Uses)
	m.Usable = types.BoolValue(t.Usable)
	// Imported: the lifetime is not stored, but it is the distance from creation to expiry.
	if m.ExpiresInHours.IsNull() || m.ExpiresInHours.IsUnknown() {
		created, err1 := time.Parse(time.RFC3339, t.CreatedAt)
		expires, err2 := time.Parse(time.RFC3339, t.ExpiresAt)
		if err1 == nil && err2 == nil {
			m.ExpiresInHours = types.Int64Value(int64(math.Round(expires.Sub(created).Hours())))
		}
	}
	if m.Token.IsUnknown() {
		m.Token = types.StringNull()
	}
	if m.InstallCommand.IsUnknown() {
		m.InstallCommand = types.StringNull()
	}
}

func (r *enrollmentTokenResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan enrollmentTokenModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	labels := map[string]string{}
	resp.Diagnostics.Append(plan.Labels.ElementsAs(ctx, &labels, false)...)
	if resp.Diagnostics.HasError() {
		return
	}
	created, err := r.client.CreateEnrollmentToken(ctx, client.EnrollmentTokenCreate{
		Description: stringPtr(plan.Description), ExpiresInHours: plan.ExpiresInHours.ValueInt64(),
		MaxUses: int64Ptr(plan.MaxUses), Labels: labels, RequiresApproval: plan.RequiresApproval.ValueBool(),
		SiteID: stringPtr(plan.SiteID),
	})
	if err != nil {
		addAPIError(&resp.Diagnostics, "Could not create the enrollment token", err, enrollmentTokenAttributes, nil)
		return
	}
	plan.fill(ctx, &created.EnrollmentToken)
	plan.Token = types.StringValue(created.Token)
	plan.InstallCommand = types.StringValue(created.InstallCommand)
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

func (r *enrollmentTokenResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state enrollmentTokenModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	token, err := r.client.GetEnrollmentToken(ctx, state.ID.ValueString())
	// Revoked outside Terraform is as good as deleted: plan a new one.
	if client.IsNotFound(err) || (err == nil && token.RevokedAt != nil) {
		resp.State.RemoveResource(ctx)
		return
	}
	if err != nil {
		resp.Diagnostics.AddError("Could not read the enrollment token", err.Error())
		return
	}
	state.fill(ctx, token)
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

// Update is never called with a change (every input forces replacement); it keeps the state.
func (r *enrollmentTokenResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan enrollmentTokenModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

func (r *enrollmentTokenResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state enrollmentTokenModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if err := r.client.RevokeEnrollmentToken(ctx, state.ID.ValueString()); err != nil && !client.IsNotFound(err) {
		resp.Diagnostics.AddError("Could not revoke the enrollment token", err.Error())
	}
}

func (r *enrollmentTokenResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	resource.ImportStatePassthroughID(ctx, path.Root("id"), req, resp)
}
