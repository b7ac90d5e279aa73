// Package provider is the Terraform provider: one file per resource and data source, each a thin
// adapter from Terraform's schema to the typed REST client (../client).
package provider

import (
	"context"
	"os"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/provider/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/edgefleet/edgefleet/infra/terraform/internal/client"
)

var _ provider.Provider = (*edgefleetProvider)(nil)

type edgefleetProvider struct{ version string }

// New returns the provider factory providerserver and the acceptance tests use.
func New(version string) func() provider.Provider {
	return func() provider.Provider { return &edgefleetProvider{version: version} }
}

type providerModel struct {
	Endpoint   types.String `tfsdk:"endpoint"`
	APIKey     types.String `tfsdk:"api_key"`
	MaxRetries types.Int64  `tfsdk:"max_retries"`
}

func (p *edgefleetProvider) Metadata(_ context.Context, _ provider.MetadataRequest, resp *provider.MetadataResponse) {
	resp.TypeName = "edgefleet"
	resp.Version = p.version
}

func (p *edgefleetProvider) Schema(_ context.Context, _ provider.SchemaRequest, resp *provider.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "Manage an Edgefleet organization as code over its REST API: sites, enrollment tokens, " +
			"API keys, members, node labels, apps, app versions and rollouts. The API key's organization is the one managed, " +
			"and its role limits what the provider may do (the API refuses the rest).",
		Attributes: map[string]schema.Attribute{
			"endpoint": schema.StringAttribute{
				MarkdownDescription: "The console's origin, e.g. `http://127.0.0.1:3000` (the REST API is under `/api/v1`). " +
					"Default: the `EDGEFLEET_ENDPOINT` environment variable.",
				Optional: true,
			},
			"api_key": schema.StringAttribute{
				MarkdownDescription: "An API key (`efk_…`) made in the console. Default: the `EDGEFLEET_API_KEY` environment variable.",
				Optional:            true,
				Sensitive:           true,
			},
			"max_retries": schema.Int64Attribute{
				MarkdownDescription: "How often a request answered 429 or 5xx is retried (honouring `Retry-After`). Default: 5.",
				Optional:            true,
			},
		},
	}
}

func (p *edgefleetProvider) Configure(ctx context.Context, req provider.ConfigureRequest, resp *provider.ConfigureResponse) {
	var config providerModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &config)...)
	if resp.Diagnostics.HasError() {
		return
	}
	endpoint := firstSet(config.Endpoint, os.Getenv("EDGEFLEET_ENDPOINT"))
	apiKey := firstSet(config.APIKey, os.Getenv("EDGEFLEET_API_KEY"))
	if endpoint == "" {
		resp.Diagnostics.AddAttributeError(path.Root("endpoint"), "Missing Edgefleet endpoint",
			"Set endpoint in the provider block or the EDGEFLEET_ENDPOINT environment variable, e.g. http://127.0.0.1:3000.")
	}
	if apiKey == "" {
		resp.Diagnostics.AddAttributeError(path.Root("api_key"), "Missing Edgefleet API key",
			"Set api_key in the provider block or the EDGEFLEET_API_KEY environment variable (an efk_… key made in the console).")
	}
	if resp.Diagnostics.HasError() {
		return
	}
	c := client.New(endpoint, apiKey, "terraform-provider-edgefleet/"+p.version)
	if !config.MaxRetries.IsNull() && !config.MaxRetries.IsUnknown() {
		c.MaxRetries = int(config.MaxRetries.ValueInt64())
	}
	resp.ResourceData = c
	resp.DataSourceData = c
}

func firstSet(value types.String, fallback string) string {
	if !value.IsNull() && !value.IsUnknown() && value.ValueString() != "" {
		return value.ValueString()
	}
	return fallback
}

func (p *edgefleetProvider) Resources(_ context.Context) []func() resource.Resource {
	return []func() resource.Resource{
		newSiteResource,
		newEnrollmentTokenResource,
		newAPIKeyResource,
		newMemberResource,
		newNodeLabelsResource,
		newAppResource,
		newAppVersionResource,
		newRolloutResource,
		newAlertPolicyResource,
	}
}

func (p *edgefleetProvider) DataSources(_ context.Context) []func() datasource.DataSource {
	return []func() datasource.DataSource{
		newOrganizationDataSource,
		newSiteDataSource,
		newSitesDataSource,
		newNodeDataSource,
		newNodesDataSource,
		newAppDataSource,
		newAppVersionDataSource,
	}
}
