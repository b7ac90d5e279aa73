package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/edgefleet/edgefleet/infra/terraform/internal/client"
)

var _ datasource.DataSourceWithConfigure = (*nodesDataSource)(nil)

type nodesDataSource struct{ client *client.Client }

func newNodesDataSource() datasource.DataSource { return &nodesDataSource{} }

type nodesModel struct {
	Selector types.String `tfsdk:"selector"`
	Limit    types.Int64  `tfsdk:"limit"`
	IDs      types.List   `tfsdk:"ids"`
	Nodes    types.List   `tfsdk:"nodes"`
}

var nodeItemTypes = map[string]attr.Type{"id": types.StringType, "name": types.StringType, "status": types.StringType,
	"labels": types.MapType{ElemType: types.StringType}, "agent_version": types.StringType}

func (d *nodesDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_nodes"
}

func (d *nodesDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "The nodes a label selector picks, by name.",
		Attributes: map[string]schema.Attribute{
			"selector": schema.StringAttribute{Optional: true,
				MarkdownDescription: "Label selector, e.g. `site=plant-7,tier!=canary` or `region in (eu-west,eu-north)`. Default: every node.",
				Validators:          []validator.String{selectorValidator{}}},
			"limit": schema.Int64Attribute{Optional: true, MarkdownDescription: "At most this many nodes (default 1000).",
				Validators: []validator.Int64{int64validator.Between(1, 100000)}},
			"ids": schema.ListAttribute{Computed: true, ElementType: types.StringType, MarkdownDescription: "The nodes' ids."},
			"nodes": schema.ListNestedAttribute{Computed: true, MarkdownDescription: "The nodes.",
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"id":            schema.StringAttribute{Computed: true, MarkdownDescription: "The node's id."},
					"name":          schema.StringAttribute{Computed: true, MarkdownDescription: "Its name."},
					"status":        schema.StringAttribute{Computed: true, MarkdownDescription: "Its status."},
					"labels":        schema.MapAttribute{Computed: true, ElementType: types.StringType, MarkdownDescription: "Its labels."},
					"agent_version": schema.StringAttribute{Computed: true, MarkdownDescription: "Its agent version."},
				}}},
		},
	}
}

func (d *nodesDataSource) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	d.client = configureDataSource(req, resp)
}

func (d *nodesDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	var config nodesModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &config)...)
	if resp.Diagnostics.HasError() {
		return
	}
	limit := 1000
	if !config.Limit.IsNull() {
		limit = int(config.Limit.ValueInt64())
	}
	nodes, err := d.client.SearchNodes(ctx, config.Selector.ValueString(), limit)
	if err != nil {
		addAPIError(&resp.Diagnostics, "Could not search the nodes", err, map[string]bool{"selector": true}, nil)
		return
	}
	ids := []attr.Value{}
	items := []attr.Value{}
	for _, n := range nodes {
		labels, diags := types.MapValueFrom(ctx, types.StringType, n.Labels)
		resp.Diagnostics.Append(diags...)
		item, diags := types.ObjectValue(nodeItemTypes, map[string]attr.Value{"id": types.StringValue(n.ID), "name": types.StringValue(n.Name),
			"status": types.StringValue(n.Status), "labels": labels, "agent_version": types.StringPointerValue(n.AgentVersion)})
		resp.Diagnostics.Append(diags...)
		ids = append(ids, types.StringValue(n.ID))
		items = append(items, item)
	}
	config.IDs, _ = types.ListValue(types.StringType, ids)
	config.Nodes, _ = types.ListValue(types.ObjectType{AttrTypes: nodeItemTypes}, items)
	resp.Diagnostics.Append(resp.State.Set(ctx, &config)...)
}
