package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/edgefleet/edgefleet/infra/terraform/internal/client"
)

var _ datasource.DataSourceWithConfigure = (*sitesDataSource)(nil)

type sitesDataSource struct{ client *client.Client }

func newSitesDataSource() datasource.DataSource { return &sitesDataSource{} }

var siteItemTypes = map[string]attr.Type{"id": types.StringType, "name": types.StringType, "description": types.StringType, "nodes": types.Int64Type}

func (d *sitesDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_sites"
}

func (d *sitesDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "Every site of the organization, by name.",
		Attributes: map[string]schema.Attribute{
			"sites": schema.ListNestedAttribute{Computed: true, MarkdownDescription: "The sites, by name.",
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"id":          schema.StringAttribute{Computed: true, MarkdownDescription: "The site's id."},
					"name":        schema.StringAttribute{Computed: true, MarkdownDescription: "Its name."},
					"description": schema.StringAttribute{Computed: true, MarkdownDescription: "Its description."},
					"nodes":       schema.Int64Attribute{Computed: true, MarkdownDescription: "How many nodes it has."},
				}}},
		},
	}
}

func (d *sitesDataSource) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	d.client = configureDataSource(req, resp)
}

func (d *sitesDataSource) Read(ctx context.Context, _ datasource.ReadRequest, resp *datasource.ReadResponse) {
	sites, err := d.client.ListSites(ctx)
	if err != nil {
		resp.Diagnostics.AddError("Could not list the sites", err.Error())
		return
	}
	items := []attr.Value{}
	for _, s := range sites {
		if s.ID == nil {
			continue // the "no site" row of the list: nodes without a site
		}
		item, diags := types.ObjectValue(siteItemTypes, map[string]attr.Value{"id": types.StringPointerValue(s.ID),
			"name": types.StringPointerValue(s.Name), "description": types.StringPointerValue(s.Description), "nodes": types.Int64Value(s.Total)})
		resp.Diagnostics.Append(diags...)
		items = append(items, item)
	}
	list, diags := types.ListValue(types.ObjectType{AttrTypes: siteItemTypes}, items)
	resp.Diagnostics.Append(diags...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, pathRoot("sites"), list)...)
}
