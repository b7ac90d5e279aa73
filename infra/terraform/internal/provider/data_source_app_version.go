package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/edgefleet/edgefleet/infra/terraform/internal/client"
)

var _ datasource.DataSourceWithConfigure = (*appVersionDataSource)(nil)

type appVersionDataSource struct{ client *client.Client }

func newAppVersionDataSource() datasource.DataSource { return &appVersionDataSource{} }

type appVersionDataModel struct {
	AppID          types.String `tfsdk:"app_id"`
	Version        types.String `tfsdk:"version"`
	ReadyOnly      types.Bool   `tfsdk:"ready_only"`
	ID             types.String `tfsdk:"id"`
	Command        types.List   `tfsdk:"command"`
	ArtifactState  types.String `tfsdk:"artifact_state"`
	ArtifactSHA256 types.String `tfsdk:"artifact_sha256"`
	CreatedAt      types.String `tfsdk:"created_at"`
}

func (d *appVersionDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_app_version"
}

func (d *appVersionDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "One version of an app: by its label (`version`), or the latest (newest made; with `ready_only`, the newest whose artifact is ready).",
		Attributes: map[string]schema.Attribute{
			"app_id":          schema.StringAttribute{Required: true, MarkdownDescription: "The app."},
			"version":         schema.StringAttribute{Optional: true, Computed: true, MarkdownDescription: "The label, e.g. `1.4.2`. Omitted: the latest."},
			"ready_only":      schema.BoolAttribute{Optional: true, MarkdownDescription: "With no label: only versions whose artifact is ready count."},
			"id":              schema.StringAttribute{Computed: true, MarkdownDescription: "The version's id."},
			"command":         schema.ListAttribute{Computed: true, ElementType: types.StringType, MarkdownDescription: "Its command."},
			"artifact_state":  schema.StringAttribute{Computed: true, MarkdownDescription: "`pending`, `ready` or `failed`."},
			"artifact_sha256": schema.StringAttribute{Computed: true, MarkdownDescription: "The artifact's SHA-256, once stored."},
			"created_at":      schema.StringAttribute{Computed: true, MarkdownDescription: "When it was made (RFC 3339)."},
		},
	}
}

func (d *appVersionDataSource) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	d.client = configureDataSource(req, resp)
}

func (d *appVersionDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	var config appVersionDataModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &config)...)
	if resp.Diagnostics.HasError() {
		return
	}
	versions, err := d.client.ListAppVersions(ctx, config.AppID.ValueString())
	if err != nil {
		resp.Diagnostics.AddError("Could not list the app's versions", err.Error())
		return
	}
	found := pickVersion(versions, config.Version.ValueString(), config.ReadyOnly.ValueBool())
	if found == nil {
		what := "no version"
		if label := config.Version.ValueString(); label != "" {
			what = fmt.Sprintf("no version %q", label)
		} else if config.ReadyOnly.ValueBool() {
			what = "no ready version"
		}
		resp.Diagnostics.AddAttributeError(path.Root("version"), "No such app version", "the app has "+what)
		return
	}
	config.ID = types.StringValue(found.ID)
	config.Version = types.StringValue(found.Version)
	config.ArtifactState = types.StringValue(found.Artifact.State)
	config.ArtifactSHA256 = types.StringPointerValue(found.Artifact.SHA256)
	config.CreatedAt = types.StringValue(found.CreatedAt)
	command, diags := types.ListValueFrom(ctx, types.StringType, found.RunSpec.Command)
	resp.Diagnostics.Append(diags...)
	config.Command = command
	resp.Diagnostics.Append(resp.State.Set(ctx, &config)...)
}

// pickVersion finds a label, or the newest (the API lists newest first), ready only if asked.
func pickVersion(versions []client.AppVersion, label string, readyOnly bool) *client.AppVersion {
	for i := range versions {
		v := &versions[i]
		if label != "" {
			if v.Version == label {
				return v
			}
			continue
		}
		if !readyOnly || v.Artifact.State == "ready" {
			return v
		}
	}
	return nil
}
