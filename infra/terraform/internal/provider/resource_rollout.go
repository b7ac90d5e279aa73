package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-jsontypes/jsontypes"
	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/setvalidator"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/setplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/edgefleet/edgefleet/infra/terraform/internal/client"
)

var (
	_ resource.ResourceWithConfigure   = (*rolloutResource)(nil)
	_ resource.ResourceWithImportState = (*rolloutResource)(nil)
)

type rolloutResource struct{ client *client.Client }

func newRolloutResource() resource.Resource { return &rolloutResource{} }

type rolloutModel struct {
	ID                types.String         `tfsdk:"id"`
	AppVersionID      types.String         `tfsdk:"app_version_id"`
	Selector          types.String         `tfsdk:"selector"`
	SiteIDs           types.Set            `tfsdk:"site_ids"`
	Strategy          jsontypes.Normalized `tfsdk:"strategy"`
	Start             types.Bool           `tfsdk:"start"`
	WaitForCompletion types.Bool           `tfsdk:"wait_for_completion"`
	AppID             types.String         `tfsdk:"app_id"`
	Version           types.String         `tfsdk:"version"`
	Status            types.String         `tfsdk:"status"`
	StatusReason      types.String         `tfsdk:"status_reason"`
	Timeouts          timeouts.Value       `tfsdk:"timeouts"`
}

var rolloutAttributes = map[string]bool{"app_version_id": true, "strategy": true, "selector": true, "site_ids": true}

// The API's target fields, as this resource names them.
var rolloutRenames = map[string]string{"target": "selector"}

func (r *rolloutResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_rollout"
}

func (r *rolloutResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "A rollout: one app version deployed to the nodes a selector and sites pick, batch by batch " +
			"(`strategy`, the API's JSON: batches, defaults, disruption budget, maintenance windows, `onBatchFailure`). " +
			"Version, target and strategy force a new rollout. With `start = false` it is only planned (`pending`); " +
			"setting `start = true` later starts it in place. With `wait_for_completion` the apply waits until it " +
			"completes (an error if it fails, is rolled back or cancelled, or the create/update timeout passes). " +
			"Destroying a rollout that is still active aborts it (nodes stay as they are); a finished one is only " +
			"forgotten (rollouts are history).",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{Computed: true, MarkdownDescription: "The rollout's id.",
				PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()}},
			"app_version_id": schema.StringAttribute{Required: true, MarkdownDescription: "The version to deploy (`edgefleet_app_version.id`).",
				PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()}},
			"selector": schema.StringAttribute{Optional: true, Computed: true, Default: stringdefault.StaticString(""),
				MarkdownDescription: "Label selector of the target nodes, e.g. `tier=canary,region in (eu-west)`. Default: every node.",
				Validators:          []validator.String{selectorValidator{}},
				PlanModifiers:       []planmodifier.String{stringplanmodifier.RequiresReplace()}},
			"site_ids": schema.SetAttribute{Optional: true, ElementType: types.StringType,
				MarkdownDescription: "Only nodes of these sites (default: every site).",
				Validators:          []validator.Set{setvalidator.SizeAtMost(500)},
				PlanModifiers:       []planmodifier.Set{setplanmodifier.RequiresReplace()}},
			"strategy": schema.StringAttribute{Required: true, CustomType: jsontypes.NormalizedType{},
				MarkdownDescription: "The strategy as JSON (use `jsonencode`), e.g. `{batches = [{count = 1, pauseAfter = \"approval\"}, {percent = 100}]}`. " +
					"See the API's `POST /rollouts` schema.",
				Validators:    []validator.String{strategyValidator{}},
				PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()}},
			"start": schema.BoolAttribute{Optional: true, Computed: true, Default: booldefault.StaticBool(true),
				MarkdownDescription: "Start the rollout (default). False: create it `pending`, to start it later by setting true."},
			"wait_for_completion": schema.BoolAttribute{Optional: true, Computed: true, Default: booldefault.StaticBool(false),
				MarkdownDescription: "Wait until the rollout completes. Default: false."},
			"app_id":        schema.StringAttribute{Computed: true, MarkdownDescription: "The app.", PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()}},
			"version":       schema.StringAttribute{Computed: true, MarkdownDescription: "The version's label.", PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()}},
			"status":        schema.StringAttribute{Computed: true, MarkdownDescription: "`pending`, `running`, `paused`, `awaiting_approval`, `completed`, `failed`, `rolling_back`, `rolled_back` or `cancelled`."},
			"status_reason": schema.StringAttribute{Computed: true, MarkdownDescription: "Why it has its status, when the API says."},
			"timeouts":      timeouts.Attributes(ctx, timeouts.Opts{Create: true, Update: true}),
		},
	}
}

func (r *rolloutResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.client = configureResource(req, resp)
}

func (m *rolloutModel) fill(ctx context.Context, ro *client.Rollout) {
	m.ID = types.StringValue(ro.ID)
	m.AppVersionID = types.StringValue(ro.AppVersionID)
	m.AppID = types.StringValue(ro.AppID)
	m.Version = types.StringValue(ro.Version)
	m.Status = types.StringValue(ro.Status)
	m.StatusReason = types.StringPointerValue(ro.StatusReason)
	m.Selector = types.StringValue(ro.Target.Selector)
	if len(ro.Target.SiteIDs) > 0 || !m.SiteIDs.IsNull() {
		m.SiteIDs, _ = types.SetValueFrom(ctx, types.StringType, ro.Target.SiteIDs)
	}
	// The API answers the strategy with its defaults filled in: keep the configured JSON, unless imported.
	if m.Strategy.IsNull() || m.Strategy.IsUnknown() {
		m.Strategy = jsontypes.NewNormalizedValue(string(ro.Strategy))
	}
	if m.Start.IsNull() || m.Start.IsUnknown() {
		m.Start = types.BoolValue(ro.Status != "pending")
	}
	if m.WaitForCompletion.IsNull() || m.WaitForCompletion.IsUnknown() {
		m.WaitForCompletion = types.BoolValue(false)
	}
}

func (r *rolloutResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan rolloutModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout, diags := plan.Timeouts.Create(ctx, 30*time.Minute)
	resp.Diagnostics.Append(diags...)
	siteIDs := []string{}
	if !plan.SiteIDs.IsNull() {
		resp.Diagnostics.Append(plan.SiteIDs.ElementsAs(ctx, &siteIDs, false)...)
	}
	if resp.Diagnostics.HasError() {
		return
	}
	created, err := r.client.CreateRollout(ctx, client.RolloutCreate{
		AppVersionID: plan.AppVersionID.ValueString(),
		Target:       client.RolloutTarget{Selector: plan.Selector.ValueString(), SiteIDs: siteIDs},
		Strategy:     json.RawMessage(plan.Strategy.ValueString()),
	})
	if err != nil {
		addAPIError(&resp.Diagnostics, "Could not create the rollout", err, rolloutAttributes, rolloutRenames)
		return
	}
	plan.ID = types.StringValue(created.ID)
	r.startAndWait(ctx, &plan, timeout, &resp.Diagnostics, func() { resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...) })
}

// startAndWait starts a pending rollout when asked, waits when asked, and saves the state
// (also on failure, so a rollout that exists is never lost from the state).
func (r *rolloutResource) startAndWait(ctx context.Context, plan *rolloutModel, timeout time.Duration, diags interface {
	AddError(string, string)
}, save func()) {
	id := plan.ID.ValueString()
	rollout, err := r.client.GetRollout(ctx, id)
	if err != nil {
		diags.AddError("Could not read the rollout", err.Error())
		return
	}
	plan.fill(ctx, rollout)
	if plan.Start.ValueBool() && rollout.Status == "pending" {
		if _, err := r.client.StartRollout(ctx, id); err != nil {
			save()
			diags.AddError("Could not start the rollout", err.Error())
			return
		}
	}
	if plan.Start.ValueBool() && plan.WaitForCompletion.ValueBool() {
		waitCtx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		for {
			if rollout, err = r.client.GetRollout(waitCtx, id); err != nil {
				break
			}
			if client.RolloutFinished(rollout.Status) || rollout.Status == "failed" {
				break
			}
			select {
			case <-waitCtx.Done():
				err = fmt.Errorf("still %s after %s", rollout.Status, timeout)
			case <-time.After(3 * time.Second):
			}
			if err != nil {
				break
			}
		}
		if err != nil {
			save()
			diags.AddError("The rollout did not complete", err.Error())
			return
		}
		if rollout.Status != "completed" {
			plan.fill(ctx, rollout)
			save()
			diags.AddError("The rollout did not complete", fmt.Sprintf("it is %s: %s", rollout.Status, deref(rollout.StatusReason)))
			return
		}
	}
	if rollout, err = r.client.GetRollout(ctx, id); err == nil {
		plan.fill(ctx, rollout)
	}
	save()
}

func (r *rolloutResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state rolloutModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	rollout, err := r.client.GetRollout(ctx, state.ID.ValueString())
	if client.IsNotFound(err) {
		resp.State.RemoveResource(ctx)
		return
	}
	if err != nil {
		resp.Diagnostics.AddError("Could not read the rollout", err.Error())
		return
	}
	state.fill(ctx, rollout)
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

// Update changes only start and wait_for_completion (everything else forces a new rollout).
func (r *rolloutResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan rolloutModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout, diags := plan.Timeouts.Update(ctx, 30*time.Minute)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	r.startAndWait(ctx, &plan, timeout, &resp.Diagnostics, func() { resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...) })
}

func (r *rolloutResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state rolloutModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	rollout, err := r.client.GetRollout(ctx, state.ID.ValueString())
	if client.IsNotFound(err) {
		return
	}
	if err != nil {
		resp.Diagnostics.AddError("Could not read the rollout", err.Error())
		return
	}
	if client.RolloutFinished(rollout.Status) {
		return
	}
	if _, err := r.client.AbortRollout(ctx, rollout.ID, "destroyed by Terraform"); err != nil && !client.IsNotFound(err) {
		resp.Diagnostics.AddError("Could not abort the rollout", err.Error())
	}
}

func (r *rolloutResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	resource.ImportStatePassthroughID(ctx, path.Root("id"), req, resp)
}

// strategyValidator checks at plan time what the JSON's shape can say: an object with 1–50
// batches, and the enumerations. The API checks everything else (and answers with the path).
type strategyValidator struct{}

func (strategyValidator) Description(context.Context) string {
	return "must be a rollout strategy: an object with 1–50 batches"
}

func (v strategyValidator) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }

func (strategyValidator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	if err := checkStrategy(req.ConfigValue.ValueString()); err != nil {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid rollout strategy", err.Error())
	}
}

func checkStrategy(text string) error {
	var strategy struct {
		Batches        []map[string]any `json:"batches"`
		OnBatchFailure *string          `json:"onBatchFailure"`
		Defaults       map[string]any   `json:"defaults"`
	}
	if err := json.Unmarshal([]byte(text), &strategy); err != nil {
		return fmt.Errorf("not a JSON object with batches: %v", err)
	}
	if len(strategy.Batches) < 1 || len(strategy.Batches) > 50 {
		return fmt.Errorf("batches: need 1 to 50 batches, got %d", len(strategy.Batches))
	}
	if f := strategy.OnBatchFailure; f != nil && *f != "pause" && *f != "rollback" {
		return fmt.Errorf("onBatchFailure: must be \"pause\" or \"rollback\", got %q", *f)
	}
	check := func(where string, fields map[string]any) error {
		if s, ok := fields["selector"].(string); ok {
			if err := checkSelector(s); err != nil {
				return fmt.Errorf("%s.selector: %v", where, err)
			}
		}
		for field, allowed := range map[string][]string{"offline": {"skip", "wait", "fail"}, "afterWait": {"skip", "fail"}} {
			if value, ok := fields[field]; ok {
				s, _ := value.(string)
				if !contains(allowed, s) {
					return fmt.Errorf("%s.%s: must be one of %q, got %v", where, field, allowed, value)
				}
			}
		}
		if value, ok := fields["pauseAfter"].(string); ok && value != "none" && value != "approval" {
			return fmt.Errorf("%s.pauseAfter: must be \"none\", \"approval\" or {seconds = n}, got %q", where, value)
		}
		return nil
	}
	for i, batch := range strategy.Batches {
		if err := check(fmt.Sprintf("batches.%d", i), batch); err != nil {
			return err
		}
	}
	if strategy.Defaults != nil {
		return check("defaults", strategy.Defaults)
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, item := range list {
		if item == s {
			return true
		}
	}
	return false
}
