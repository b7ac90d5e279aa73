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
	_ datasource.DataSourceWithConfigure        = (*appDataSource)(nil)
	_ datasource.DataSourceWithConfigValidators = (*appDataSource)(nil)
)

type appDataSource struct{ client *client.Client }

func newAppDataSource() datasource.DataSource { return &appDataSource{} }

type appDataModel struct {
	ID          types.String `tfsdk:"id"`
	Name        types.String `tfsdk:"name"`
	Description types.String `tfsdk:"description"`
	Versions    types.Int64  `tfsdk:"versions"`
}

func (d *appDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_app"
}

func (d *appDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "One app, by id or by name.",
		Attributes: map[string]schema.Attribute{
			"id":          schema.StringAttribute{Optional: true, Computed: true, MarkdownDescription: "The app's id (give id or name)."},
			"name":        schema.StringAttribute{Optional: true, Computed: true, MarkdownDescription: "The app's name (give id or name)."},
			"description": schema.StringAttribute{Computed: true, MarkdownDescription: "Its description."},
			"versions":    schema.Int64Attribute{Computed: true, MarkdownDescription: "How many versions it has."},
		},
	}
}

func (d *appDataSource) ConfigValidators(context.Context) []datasource.ConfigValidator {
	return []datasource.ConfigValidator{datasourcevalidator.ExactlyOneOf(path.MatchRoot("id"), path.MatchRoot("name"))}
}

func (d *appDataSource) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	d.client = configureDataSource(req, resp)
}

func (d *appDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	var config appDataModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &config)...)
	if resp.Diagnostics.HasError() {
		return
	}
	var app *client.App
	if id := config.ID.ValueString(); id != "" {
		var err error
		if app, err = d.client.GetApp(ctx, id); err != nil {
			resp.Diagnostics.AddError("Could not read the app", err.Error())
			return
		}
	} else {
		apps, err := d.client.ListApps(ctx)
		if err != nil {
			resp.Diagnostics.AddError("Could not list the apps", err.Error())
			return
		}
		for i := range apps {
			if apps[i].Name == config.Name.ValueString() {
				app = &apps[i]
			}
		}
		if app == nil {
			resp.Diagnostics.AddAttributeError(path.Root("name"), "No such app", fmt.Sprintf("the organization has no app named %q", config.Name.ValueString()))
			return
		}
	}
	state := appDataModel{ID: types.StringValue(app.ID), Name: types.StringValue(app.Name),
		Description: types.StringPointerValue(app.Description), Versions: types.Int64Value(app.Versions)}
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}
