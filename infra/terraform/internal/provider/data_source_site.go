package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework-validators/datasourcevalidator"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/edgefleet/edgefleet/infra/terraform/internal/client"
)

var (
	_ datasource.DataSourceWithConfigure        = (*siteDataSource)(nil)
	_ datasource.DataSourceWithConfigValidators = (*siteDataSource)(nil)
)

type siteDataSource struct{ client *client.Client }

func newSiteDataSource() datasource.DataSource { return &siteDataSource{} }

type siteDataModel struct {
	ID          types.String `tfsdk:"id"`
	Name        types.String `tfsdk:"name"`
	Description types.String `tfsdk:"description"`
	TimeZone    types.String `tfsdk:"time_zone"`
	Nodes       types.Int64  `tfsdk:"nodes"`
}

func (d *siteDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_site"
}

func (d *siteDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "One site, by id or by name.",
		Attributes: map[string]schema.Attribute{
			"id":          schema.StringAttribute{Optional: true, Computed: true, MarkdownDescription: "The site's id (give id or name)."},
			"name":        schema.StringAttribute{Optional: true, Computed: true, MarkdownDescription: "The site's name (give id or name)."},
			"description": schema.StringAttribute{Computed: true, MarkdownDescription: "Its description."},
			"time_zone":   schema.StringAttribute{Computed: true, MarkdownDescription: "Its IANA time zone."},
			"nodes":       schema.Int64Attribute{Computed: true, MarkdownDescription: "How many nodes it has."},
		},
	}
}

func (d *siteDataSource) ConfigValidators(context.Context) []datasource.ConfigValidator {
	return []datasource.ConfigValidator{datasourcevalidator.ExactlyOneOf(path.MatchRoot("id"), path.MatchRoot("name"))}
}

func (d *siteDataSource) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	d.client = configureDataSource(req, resp)
}

func (d *siteDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	var config siteDataModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &config)...)
	if resp.Diagnostics.HasError() {
		return
	}
	id := config.ID.ValueString()
	if id == "" {
		sites, err := d.client.ListSites(ctx)
		if err != nil {
			resp.Diagnostics.AddError("Could not list the sites", err.Error())
			return
		}
		for _, s := range sites {
			if s.ID != nil && deref(s.Name) == config.Name.ValueString() {
				id = *s.ID
			}
		}
		if id == "" {
			resp.Diagnostics.AddAttributeError(path.Root("name"), "No such site", fmt.Sprintf("the organization has no site named %q", config.Name.ValueString()))
			return
		}
	}
	site, err := d.client.GetSite(ctx, id)
	if err != nil {
		resp.Diagnostics.AddError("Could not read the site", err.Error())
		return
	}
	state := siteDataModel{ID: types.StringValue(site.ID), Name: types.StringValue(site.Name),
		Description: types.StringPointerValue(site.Description), TimeZone: types.StringPointerValue(site.TimeZone), Nodes: types.Int64Value(site.Total)}
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}
