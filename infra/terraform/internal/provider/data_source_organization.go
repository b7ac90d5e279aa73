package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/edgefleet/edgefleet/infra/terraform/internal/client"
)

var _ datasource.DataSourceWithConfigure = (*organizationDataSource)(nil)

type organizationDataSource struct{ client *client.Client }

func newOrganizationDataSource() datasource.DataSource { return &organizationDataSource{} }

type organizationModel struct {
	ID   types.String `tfsdk:"id"`
	Slug types.String `tfsdk:"slug"`
	Name types.String `tfsdk:"name"`
	Role types.String `tfsdk:"role"`
}

func (d *organizationDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_organization"
}

func (d *organizationDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "The organization the provider's API key belongs to, and the key's role in it.",
		Attributes: map[string]schema.Attribute{
			"id":   schema.StringAttribute{Computed: true, MarkdownDescription: "The organization's id."},
			"slug": schema.StringAttribute{Computed: true, MarkdownDescription: "Its short name (in console URLs)."},
			"name": schema.StringAttribute{Computed: true, MarkdownDescription: "Its display name."},
			"role": schema.StringAttribute{Computed: true, MarkdownDescription: "The API key's role: `owner`, `admin`, `operator` or `viewer`."},
		},
	}
}

func (d *organizationDataSource) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	d.client = configureDataSource(req, resp)
}

func (d *organizationDataSource) Read(ctx context.Context, _ datasource.ReadRequest, resp *datasource.ReadResponse) {
	org, err := d.client.Organization(ctx)
	if err != nil {
		resp.Diagnostics.AddError("Could not read the organization", err.Error())
		return
	}
	state := organizationModel{ID: types.StringValue(org.ID), Slug: types.StringValue(org.Slug),
		Name: types.StringValue(org.Name), Role: types.StringValue(org.Role)}
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}
