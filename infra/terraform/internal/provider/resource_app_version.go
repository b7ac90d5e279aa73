package provider

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/mapvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/boolplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/listplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/mapplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/objectplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/edgefleet/edgefleet/infra/terraform/internal/client"
)

var (
	_ resource.ResourceWithConfigure   = (*appVersionResource)(nil)
	_ resource.ResourceWithImportState = (*appVersionResource)(nil)
)

type appVersionResource struct{ client *client.Client }

func newAppVersionResource() resource.Resource { return &appVersionResource{} }

type appVersionModel struct {
	ID               types.String   `tfsdk:"id"`
	AppID            types.String   `tfsdk:"app_id"`
	Version          types.String   `tfsdk:"version"`
	Command          types.List     `tfsdk:"command"`
	Env              types.Map      `tfsdk:"env"`
	Cwd              types.String   `tfsdk:"cwd"`
	Restart          types.String   `tfsdk:"restart"`
	StopGraceSeconds types.Int64    `tfsdk:"stop_grace_seconds"`
	RevertOnFailure  types.Bool     `tfsdk:"revert_on_failure"`
	Health           types.Object   `tfsdk:"health"`
	ArtifactURL      types.String   `tfsdk:"artifact_url"`
	ArtifactFile     types.String   `tfsdk:"artifact_file"`
	ArtifactSHA256   types.String   `tfsdk:"artifact_sha256"`
	ArtifactSize     types.Int64    `tfsdk:"artifact_size"`
	ArtifactState    types.String   `tfsdk:"artifact_state"`
	Timeouts         timeouts.Value `tfsdk:"timeouts"`
}

type healthModel struct {
	Exec             types.List   `tfsdk:"exec"`
	HTTP             types.String `tfsdk:"http"`
	IntervalSeconds  types.Int64  `tfsdk:"interval_seconds"`
	TimeoutSeconds   types.Int64  `tfsdk:"timeout_seconds"`
	FailureThreshold types.Int64  `tfsdk:"failure_threshold"`
}

var healthTypes = map[string]attr.Type{
	"exec": types.ListType{ElemType: types.StringType}, "http": types.StringType,
	"interval_seconds": types.Int64Type, "timeout_seconds": types.Int64Type, "failure_threshold": types.Int64Type,
}

var appVersionAttributes = map[string]bool{"version": true, "command": true, "env": true, "cwd": true, "restart": true,
	"stop_grace_seconds": true, "revert_on_failure": true, "health": true, "artifact_url": true, "artifact_sha256": true}

// The API's run spec and artifact fields, as this resource names them (issue paths point at these).
var appVersionRenames = map[string]string{"runSpec": "command", "artifact": "artifact_url", "sha256": "artifact_sha256"}

func (r *appVersionResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_app_version"
}

func (r *appVersionResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	replaceString := []planmodifier.String{stringplanmodifier.RequiresReplace()}
	replaceInt := []planmodifier.Int64{int64planmodifier.RequiresReplace()}
	resp.Schema = schema.Schema{
		MarkdownDescription: "One version of an app: how nodes run it and its artifact. Versions are immutable: every " +
			"input forces a new version. The artifact is either imported by the gateway from an https URL " +
			"(`artifact_url`; the resource waits until it is `ready`) or uploaded from a local file (`artifact_file`). " +
			"To replace the version when the file's content changes, set `artifact_sha256 = filesha256(path)`. " +
			"Import with `<app_id>/<version_id>`.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{Computed: true, MarkdownDescription: "The version's id.",
				PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()}},
			"app_id": schema.StringAttribute{Required: true, MarkdownDescription: "The app.", PlanModifiers: replaceString},
			"version": schema.StringAttribute{Required: true, MarkdownDescription: "The version's label, e.g. `1.4.2` (unique per app).",
				Validators:    []validator.String{stringvalidator.RegexMatches(versionPattern, "must be 1–64 letters, digits, '.', '+', '_' or '-', starting with a letter or digit")},
				PlanModifiers: replaceString},
			"command": schema.ListAttribute{Required: true, ElementType: types.StringType,
				MarkdownDescription: "The program and its arguments, run in the artifact's directory.",
				Validators:          []validator.List{listvalidator.SizeBetween(1, 256), listvalidator.ValueStringsAre(stringvalidator.LengthBetween(1, 4096))},
				PlanModifiers:       []planmodifier.List{listplanmodifier.RequiresReplace()}},
			"env": schema.MapAttribute{Optional: true, ElementType: types.StringType, MarkdownDescription: "Environment variables.",
				Validators:    []validator.Map{mapvalidator.KeysAre(stringvalidator.RegexMatches(envNamePattern, "must be an environment variable name"))},
				PlanModifiers: []planmodifier.Map{mapplanmodifier.RequiresReplace()}},
			"cwd": schema.StringAttribute{Optional: true, MarkdownDescription: "Working directory (default: the app's state directory).",
				PlanModifiers: replaceString},
			"restart": schema.StringAttribute{Optional: true, MarkdownDescription: "`always`, `on-failure` or `never`.",
				Validators: []validator.String{stringvalidator.OneOf("always", "on-failure", "never")}, PlanModifiers: replaceString},
			"stop_grace_seconds": schema.Int64Attribute{Optional: true, MarkdownDescription: "SIGTERM → SIGKILL grace period, 0–600 s.",
				Validators: []validator.Int64{int64validator.Between(0, 600)}, PlanModifiers: replaceInt},
			"revert_on_failure": schema.BoolAttribute{Optional: true, MarkdownDescription: "Whether a node goes back to the previous version when this one fails.",
				PlanModifiers: []planmodifier.Bool{boolplanmodifier.RequiresReplace()}},
			"health": schema.SingleNestedAttribute{Optional: true, MarkdownDescription: "How the agent checks the app is healthy.",
				PlanModifiers: []planmodifier.Object{objectplanmodifier.RequiresReplace()},
				Attributes: map[string]schema.Attribute{
					"exec": schema.ListAttribute{Optional: true, ElementType: types.StringType, MarkdownDescription: "A command that exits 0 when healthy."},
					"http": schema.StringAttribute{Optional: true, MarkdownDescription: "A URL answering 2xx when healthy."},
					"interval_seconds": schema.Int64Attribute{Optional: true, MarkdownDescription: "Between checks, 1–3600 s.",
						Validators: []validator.Int64{int64validator.Between(1, 3600)}},
					"timeout_seconds": schema.Int64Attribute{Optional: true, MarkdownDescription: "Per check, 1–600 s.",
						Validators: []validator.Int64{int64validator.Between(1, 600)}},
					"failure_threshold": schema.Int64Attribute{Optional: true, MarkdownDescription: "Failures in a row that make it unhealthy, 1–100.",
						Validators: []validator.Int64{int64validator.Between(1, 100)}},
				}},
			"artifact_url": schema.StringAttribute{Optional: true, MarkdownDescription: "An https URL the gateway imports the artifact from.",
				Validators: []validator.String{
					stringvalidator.ExactlyOneOf(path.MatchRoot("artifact_url"), path.MatchRoot("artifact_file")),
					stringvalidator.RegexMatches(httpsPattern, "must be an https URL"),
				},
				PlanModifiers: replaceString},
			"artifact_file": schema.StringAttribute{Optional: true, MarkdownDescription: "A local file uploaded as the artifact (at most 512 MiB).",
				PlanModifiers: replaceString},
			"artifact_sha256": schema.StringAttribute{Optional: true, Computed: true,
				MarkdownDescription: "The artifact's SHA-256 (hex). Given: the API refuses content that hashes otherwise. Computed once the artifact is stored.",
				Validators:          []validator.String{stringvalidator.RegexMatches(sha256Pattern, "must be 64 lower-case hex digits")},
				PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown(), stringplanmodifier.RequiresReplaceIfConfigured()}},
			"artifact_size":  schema.Int64Attribute{Computed: true, MarkdownDescription: "The artifact's size in bytes."},
			"artifact_state": schema.StringAttribute{Computed: true, MarkdownDescription: "`pending`, `ready` or `failed`."},
			"timeouts":       timeouts.Attributes(ctx, timeouts.Opts{Create: true}),
		},
	}
}

func (r *appVersionResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.client = configureResource(req, resp)
}

func (m *appVersionModel) runSpec(ctx context.Context) (client.RunSpec, error) {
	spec := client.RunSpec{Cwd: stringPtr(m.Cwd), Restart: stringPtr(m.Restart),
		StopGraceSeconds: int64Ptr(m.StopGraceSeconds), RevertOnFailure: boolPtr(m.RevertOnFailure)}
	if d := m.Command.ElementsAs(ctx, &spec.Command, false); d.HasError() {
		return spec, fmt.Errorf("command: %v", d)
	}
	if !m.Env.IsNull() {
		if d := m.Env.ElementsAs(ctx, &spec.Env, false); d.HasError() {
			return spec, fmt.Errorf("env: %v", d)
		}
	}
	if !m.Health.IsNull() && !m.Health.IsUnknown() {
		var h healthModel
		if d := m.Health.As(ctx, &h, objectAsOptions); d.HasError() {
			return spec, fmt.Errorf("health: %v", d)
		}
		health := client.Health{HTTP: stringPtr(h.HTTP), IntervalSeconds: int64Ptr(h.IntervalSeconds),
			TimeoutSeconds: int64Ptr(h.TimeoutSeconds), FailureThreshold: int64Ptr(h.FailureThreshold)}
		if !h.Exec.IsNull() {
			if d := h.Exec.ElementsAs(ctx, &health.Exec, false); d.HasError() {
				return spec, fmt.Errorf("health.exec: %v", d)
			}
		}
		spec.Health = &health
	}
	return spec, nil
}

func (m *appVersionModel) fill(ctx context.Context, v *client.AppVersion) {
	m.ID = types.StringValue(v.ID)
	m.AppID = types.StringValue(v.AppID)
	m.Version = types.StringValue(v.Version)
	m.Command, _ = types.ListValueFrom(ctx, types.StringType, v.RunSpec.Command)
	if len(v.RunSpec.Env) > 0 || !m.Env.IsNull() {
		m.Env, _ = types.MapValueFrom(ctx, types.StringType, v.RunSpec.Env)
	}
	m.Cwd = types.StringPointerValue(v.RunSpec.Cwd)
	m.Restart = types.StringPointerValue(v.RunSpec.Restart)
	m.StopGraceSeconds = types.Int64PointerValue(v.RunSpec.StopGraceSeconds)
	m.RevertOnFailure = types.BoolPointerValue(v.RunSpec.RevertOnFailure)
	if h := v.RunSpec.Health; h != nil {
		exec := types.ListNull(types.StringType)
		if len(h.Exec) > 0 {
			exec, _ = types.ListValueFrom(ctx, types.StringType, h.Exec)
		}
		m.Health, _ = types.ObjectValue(healthTypes, map[string]attr.Value{
			"exec": exec, "http": types.StringPointerValue(h.HTTP), "interval_seconds": types.Int64PointerValue(h.IntervalSeconds),
			"timeout_seconds": types.Int64PointerValue(h.TimeoutSeconds), "failure_threshold": types.Int64PointerValue(h.FailureThreshold),
		})
	} else {
		m.Health = types.ObjectNull(healthTypes)
	}
	if v.Artifact.Source == "url" {
		m.ArtifactURL = types.StringPointerValue(v.Artifact.URL)
	}
	m.ArtifactSHA256 = types.StringPointerValue(v.Artifact.SHA256)
	m.ArtifactSize = types.Int64PointerValue(v.Artifact.Size)
	m.ArtifactState = types.StringValue(v.Artifact.State)
}

func (r *appVersionResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan appVersionModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	createTimeout, diags := plan.Timeouts.Create(ctx, 10*time.Minute)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, createTimeout)
	defer cancel()
	spec, err := plan.runSpec(ctx)
	if err != nil {
		resp.Diagnostics.AddError("Invalid run spec", err.Error())
		return
	}
	var content []byte
	artifact := client.ArtifactSource{Source: "url", URL: stringPtr(plan.ArtifactURL), SHA256: stringPtr(plan.ArtifactSHA256)}
	if !plan.ArtifactFile.IsNull() {
		artifact = client.ArtifactSource{Source: "upload", SHA256: stringPtr(plan.ArtifactSHA256)}
		if content, err = os.ReadFile(plan.ArtifactFile.ValueString()); err != nil {
			resp.Diagnostics.AddAttributeError(path.Root("artifact_file"), "Cannot read the artifact file", err.Error())
			return
		}
	}
	appID := plan.AppID.ValueString()
	version, err := r.client.CreateAppVersion(ctx, appID, client.AppVersionCreate{Version: plan.Version.ValueString(), RunSpec: spec, Artifact: artifact})
	if err != nil {
		addAPIError(&resp.Diagnostics, "Could not create the app version", err, appVersionAttributes, appVersionRenames)
		return
	}
	// Saved at once, so a failed upload or import leaves a tainted version Terraform replaces, not an orphan.
	plan.fill(ctx, version)
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
	if content != nil {
		if version, err = r.client.UploadArtifact(ctx, appID, version.ID, content); err != nil {
			addAPIError(&resp.Diagnostics, "Could not upload the artifact", err, appVersionAttributes, appVersionRenames)
			return
		}
	}
	for version.Artifact.State == "pending" {
		select {
		case <-ctx.Done():
			resp.Diagnostics.AddError("Timed out waiting for the artifact",
				fmt.Sprintf("the gateway has not stored the artifact of version %s within %s", version.Version, createTimeout))
			return
		case <-time.After(2 * time.Second):
		}
		if version, err = r.client.GetAppVersion(ctx, appID, version.ID); err != nil {
			resp.Diagnostics.AddError("Could not read the app version", err.Error())
			return
		}
	}
	plan.fill(ctx, version)
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
	if version.Artifact.State == "failed" {
		resp.Diagnostics.AddAttributeError(path.Root("artifact_url"), "The artifact could not be stored", deref(version.Artifact.Error))
	}
}

func (r *appVersionResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state appVersionModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	version, err := r.client.GetAppVersion(ctx, state.AppID.ValueString(), state.ID.ValueString())
	if client.IsNotFound(err) {
		resp.State.RemoveResource(ctx)
		return
	}
	if err != nil {
		resp.Diagnostics.AddError("Could not read the app version", err.Error())
		return
	}
	state.fill(ctx, version)
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

// Update is never called with a change (versions are immutable); it keeps the state.
func (r *appVersionResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan appVersionModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

func (r *appVersionResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state appVersionModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if err := r.client.DeleteAppVersion(ctx, state.AppID.ValueString(), state.ID.ValueString()); err != nil && !client.IsNotFound(err) {
		resp.Diagnostics.AddError("Could not delete the app version", err.Error())
	}
}

// ImportState takes `<app_id>/<version_id>`.
func (r *appVersionResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	appID, versionID, ok := strings.Cut(req.ID, "/")
	if !ok || appID == "" || versionID == "" {
		resp.Diagnostics.AddError("Unexpected import id", fmt.Sprintf("expected <app_id>/<version_id>, got %q", req.ID))
		return
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("app_id"), appID)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), versionID)...)
}
