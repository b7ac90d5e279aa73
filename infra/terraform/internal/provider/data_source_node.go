package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/edgefleet/edgefleet/infra/terraform/internal/client"
)

var _ datasource.DataSourceWithConfigure = (*nodeDataSource)(nil)

type nodeDataSource struct{ client *client.Client }

func newNodeDataSource() datasource.DataSource { return &nodeDataSource{} }

type nodeModel struct {
	ID           types.String `tfsdk:"id"`
	Name         types.String `tfsdk:"name"`
	SiteID       types.String `tfsdk:"site_id"`
	Status       types.String `tfsdk:"status"`
	Labels       types.Map    `tfsdk:"labels"`
	AgentVersion types.String `tfsdk:"agent_version"`
	LastSeenAt   types.String `tfsdk:"last_seen_at"`
}

func (d *nodeDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_node"
}

func (d *nodeDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "One node, by id. To find nodes by their labels, use `edgefleet_nodes`.",
		Attributes: map[string]schema.Attribute{
			"id":            schema.StringAttribute{Required: true, MarkdownDescription: "The node's id."},
			"name":          schema.StringAttribute{Computed: true, MarkdownDescription: "Its name."},
			"site_id":       schema.StringAttribute{Computed: true, MarkdownDescription: "Its site (null: none)."},
			"status":        schema.StringAttribute{Computed: true, MarkdownDescription: "`pending`, `online`, `offline` or `revoked`."},
			"labels":        schema.MapAttribute{Computed: true, ElementType: types.StringType, MarkdownDescription: "Its labels."},
			"agent_version": schema.StringAttribute{Computed: true, MarkdownDescription: "The agent version it reported."},
			"last_seen_at":  schema.StringAttribute{Computed: true, MarkdownDescription: "When it was last heard from (RFC 3339)."},
		},
	}
}

func (d *nodeDataSource) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	d.client = configureDataSource(req, resp)
}

func (d *nodeDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	var config nodeModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &config)...)
	if resp.Diagnostics.HasError() {
		return
	}
	node, err := d.client.GetNode(ctx, config.ID.ValueString())
	if err != nil {
		resp.Diagnostics.AddError("Could not read the node", err.Error())
		return
	}
	state := nodeModel{ID: types.StringValue(node.ID), Name: types.StringValue(node.Name), Status: types.StringValue(node.Status),
		AgentVersion: types.StringPointerValue(node.AgentVersion), LastSeenAt: types.StringPointerValue(node.LastSeenAt), SiteID: types.StringNull()}
	if node.Site != nil {
		state.SiteID = types.StringValue(node.Site.ID)
	}
	labels, diags := types.MapValueFrom(ctx, types.StringType, node.Labels)
	resp.Diagnostics.Append(diags...)
	state.Labels = labels
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}
