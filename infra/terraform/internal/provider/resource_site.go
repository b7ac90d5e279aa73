package provider

import (
	"context"

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
	_ resource.ResourceWithConfigure   = (*siteResource)(nil)
	_ resource.ResourceWithImportState = (*siteResource)(nil)
)

type siteResource struct{ client *client.Client }

func newSiteResource() resource.Resource { return &siteResource{} }

type siteModel struct {
	ID          types.String `tfsdk:"id"`
	Name        types.String `tfsdk:"name"`
	Description types.String `tfsdk:"description"`
	TimeZone    types.String `tfsdk:"time_zone"`
}

var siteAttributes = map[string]bool{"name": true, "description": true, "time_zone": true}

func (r *siteResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_site"
}

func (r *siteResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "A site: a place where nodes run (a plant, a store), with its own NATS leaf node. " +
			"A site with nodes cannot be deleted: move or delete its nodes first.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{
				Computed: true, MarkdownDescription: "The site's id.",
				PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"name": schema.StringAttribute{
				Required: true, MarkdownDescription: "Unique in the organization; letters, digits, `.`, `_`, `-`.",
				Validators: []validator.String{stringvalidator.RegexMatches(siteNamePattern, "must be 1–63 letters, digits, '.', '_' or '-', starting and ending with a letter or digit")},
			},
			"description": schema.StringAttribute{
				Optional: true, MarkdownDescription: "Free text, at most 500 characters.",
				Validators: []validator.String{stringvalidator.LengthAtMost(500)},
			},
			"time_zone": schema.StringAttribute{
				Optional: true, MarkdownDescription: "IANA time zone of the site, e.g. `Europe/Berlin` (maintenance windows use it).",
			},
		},
	}
}

func (r *siteResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.client = configureResource(req, resp)
}

func (m *siteModel) fill(s *client.Site) {
	m.ID = types.StringValue(s.ID)
	m.Name = types.StringValue(s.Name)
	m.Description = types.StringPointerValue(s.Description)
	m.TimeZone = types.StringPointerValue(s.TimeZone)
}

func (r *siteResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan siteModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	site, err := r.client.CreateSite(ctx, client.SiteCreate{
		Name: plan.Name.ValueString(), Description: stringPtr(plan.Description), TimeZone: stringPtr(plan.TimeZone),
	})
	if err != nil {
		addAPIError(&resp.Diagnostics, "Could not create the site", err, siteAttributes, nil)
		return
	}
	plan.fill(site)
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

func (r *siteResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state siteModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	site, err := r.client.GetSite(ctx, state.ID.ValueString())
	if client.IsNotFound(err) {
		resp.State.RemoveResource(ctx)
		return
	}
	if err != nil {
		resp.Diagnostics.AddError("Could not read the site", err.Error())
		return
	}
	state.fill(site)
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

func (r *siteResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan siteModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	site, err := r.client.UpdateSite(ctx, plan.ID.ValueString(), client.SiteUpdate{
		Name: plan.Name.ValueString(), Description: stringPtr(plan.Description), TimeZone: stringPtr(plan.TimeZone),
	})
	if err != nil {
		addAPIError(&resp.Diagnostics, "Could not update the site", err, siteAttributes, nil)
		return
	}
	plan.fill(site)
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

func (r *siteResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state siteModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if err := r.client.DeleteSite(ctx, state.ID.ValueString()); err != nil && !client.IsNotFound(err) {
		resp.Diagnostics.AddError("Could not delete the site", err.Error())
	}
}

func (r *siteResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	resource.ImportStatePassthroughID(ctx, path.Root("id"), req, resp)
}
