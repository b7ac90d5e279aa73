package provider

import (
	"context"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-validators/float64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/edgefleet/edgefleet/infra/terraform/internal/client"
)

var (
	_ resource.ResourceWithConfigure        = (*alertPolicyResource)(nil)
	_ resource.ResourceWithImportState      = (*alertPolicyResource)(nil)
	_ resource.ResourceWithConfigValidators = (*alertPolicyResource)(nil)
)

type alertPolicyResource struct{ client *client.Client }

func newAlertPolicyResource() resource.Resource { return &alertPolicyResource{} }

// The API's spec is a union by kind; here its parameters are flat, optional attributes and
// alertSpecValidator says at plan time which ones a kind takes.
type alertPolicyModel struct {
	ID               types.String  `tfsdk:"id"`
	Name             types.String  `tfsdk:"name"`
	Kind             types.String  `tfsdk:"kind"`
	Severity         types.String  `tfsdk:"severity"`
	ForMinutes       types.Int64   `tfsdk:"for_minutes"`
	ThresholdPercent types.Float64 `tfsdk:"threshold_percent"`
	Restarts         types.Int64   `tfsdk:"restarts"`
	WindowMinutes    types.Int64   `tfsdk:"window_minutes"`
	BudgetBytes      types.Int64   `tfsdk:"budget_bytes"`
	Window           types.String  `tfsdk:"window"`
	Expr             types.String  `tfsdk:"expr"`
	Selector         types.String  `tfsdk:"selector"`
	SiteID           types.String  `tfsdk:"site_id"`
	Enabled          types.Bool    `tfsdk:"enabled"`
}

var alertPolicyAttributes = map[string]bool{
	"name": true, "kind": true, "severity": true, "for_minutes": true, "threshold_percent": true, "restarts": true,
	"window_minutes": true, "budget_bytes": true, "window": true, "expr": true, "selector": true, "site_id": true, "enabled": true,
}

// The API nests the kind's parameters under spec.
var alertPolicyRenames = map[string]string{
	"spec.kind": "kind", "spec.forMinutes": "for_minutes", "spec.thresholdPercent": "threshold_percent",
	"spec.restarts": "restarts", "spec.windowMinutes": "window_minutes", "spec.budgetBytes": "budget_bytes",
	"spec.window": "window", "spec.expr": "expr",
}

func (r *alertPolicyResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_alert_policy"
}

func (r *alertPolicyResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	minutes := []validator.Int64{int64validator.Between(0, 1440)}
	resp.Schema = schema.Schema{
		MarkdownDescription: "An alert policy: what should wake someone. One of a few presets (`kind`) with its own " +
			"parameters, or advanced PromQL, scoped by a node label `selector` and/or one site, with a severity. " +
			"Compiled into Mimir's ruler and Alertmanager by the gateway (docs/alerts.md). Every attribute, the kind " +
			"included, changes in place. A site that is the scope of a policy cannot be deleted.\n\n" +
			"| `kind` | parameters |\n| --- | --- |\n" +
			"| `node_offline`, `site_offline` | `for_minutes` |\n" +
			"| `cpu_above`, `memory_above`, `disk_above` | `threshold_percent`, `for_minutes` |\n" +
			"| `app_crash_looping` | `restarts`, `window_minutes` |\n" +
			"| `bandwidth_over_budget` | `budget_bytes`, `window` |\n" +
			"| `rollout_paused`, `rollout_failed`, `rollout_finished` | none (scope: a site only) |\n" +
			"| `promql` | `expr`, `for_minutes` (no selector, no site: the expression is its scope) |",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{
				Computed: true, MarkdownDescription: "The policy's id.",
				PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"name": schema.StringAttribute{
				Required: true, MarkdownDescription: "Unique in the organization, 1–100 characters.",
				Validators: []validator.String{stringvalidator.LengthBetween(1, 100)},
			},
			"kind": schema.StringAttribute{
				Required: true, MarkdownDescription: "The preset: `" + strings.Join(alertKinds(), "`, `") + "`.",
				Validators: []validator.String{stringvalidator.OneOf(alertKinds()...)},
			},
			"severity": schema.StringAttribute{
				Required: true, MarkdownDescription: "`critical`, `warning` or `info` (channels filter on it).",
				Validators: []validator.String{stringvalidator.OneOf("critical", "warning", "info")},
			},
			"for_minutes": schema.Int64Attribute{
				Optional: true, Validators: minutes,
				MarkdownDescription: "Minutes the condition must hold before the alert fires (0: at once), 0–1440.",
			},
			"threshold_percent": schema.Float64Attribute{
				Optional: true, MarkdownDescription: "Threshold in percent, above 0 and at most 100 (0 is refused by the API).",
				Validators: []validator.Float64{float64validator.Between(0, 100)},
			},
			"restarts": schema.Int64Attribute{
				Optional: true, MarkdownDescription: "Restarts of one app on one node within `window_minutes` that count as a crash loop, 1–1000.",
				Validators: []validator.Int64{int64validator.Between(1, 1000)},
			},
			"window_minutes": schema.Int64Attribute{
				Optional: true, MarkdownDescription: "The window restarts are counted in, 1–1440 minutes.",
				Validators: []validator.Int64{int64validator.Between(1, 1440)},
			},
			"budget_bytes": schema.Int64Attribute{
				Optional: true, MarkdownDescription: "Bytes a site may move (received + sent, all its nodes) per `window`.",
				Validators: []validator.Int64{int64validator.Between(1, 9007199254740991)},
			},
			"window": schema.StringAttribute{
				Optional: true, MarkdownDescription: "The bandwidth budget's window: `1h` or `1d`.",
				Validators: []validator.String{stringvalidator.OneOf("1h", "1d")},
			},
			"expr": schema.StringAttribute{
				Optional: true, MarkdownDescription: "PromQL; fires for every series it returns. Mimir's parser checks it on apply " +
					"(a 400 on this attribute when it does not parse). The API trims surrounding white space; a heredoc's final newline causes no diff.",
				Validators: []validator.String{stringvalidator.LengthBetween(1, 4000)},
			},
			"selector": schema.StringAttribute{
				Optional: true, Computed: true, Default: stringdefault.StaticString(""),
				MarkdownDescription: "Node label selector, e.g. `tier=canary`; empty: every node.",
				Validators:          []validator.String{selectorValidator{}, stringvalidator.LengthAtMost(1000)},
			},
			"site_id": schema.StringAttribute{
				Optional: true, MarkdownDescription: "Limit the policy to one site of the organization (unset: every site).",
				Validators: []validator.String{stringvalidator.RegexMatches(uuidPattern, "must be a site id (a UUID)")},
			},
			"enabled": schema.BoolAttribute{
				Optional: true, Computed: true, Default: booldefault.StaticBool(true),
				MarkdownDescription: "A disabled policy keeps its definition and fires nothing. Default `true`.",
			},
		},
	}
}

func (r *alertPolicyResource) ConfigValidators(context.Context) []resource.ConfigValidator {
	return []resource.ConfigValidator{alertSpecValidator{}}
}

func (r *alertPolicyResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.client = configureResource(req, resp)
}

// fill copies the API's policy into the model. Text the API trimmed keeps the configuration's
// spelling (a heredoc's final newline), so the plan stays quiet.
func (m *alertPolicyModel) fill(p *client.AlertPolicy) {
	m.ID = types.StringValue(p.ID)
	m.Name = types.StringValue(keepSpelling(m.Name, p.Name))
	m.Kind = types.StringValue(p.Spec.Kind)
	m.Severity = types.StringValue(p.Severity)
	m.ForMinutes = types.Int64PointerValue(p.Spec.ForMinutes)
	m.ThresholdPercent = types.Float64PointerValue(p.Spec.ThresholdPercent)
	m.Restarts = types.Int64PointerValue(p.Spec.Restarts)
	m.WindowMinutes = types.Int64PointerValue(p.Spec.WindowMinutes)
	m.BudgetBytes = types.Int64PointerValue(p.Spec.BudgetBytes)
	m.Window = types.StringPointerValue(p.Spec.Window)
	if p.Spec.Expr != nil {
		m.Expr = types.StringValue(keepSpelling(m.Expr, *p.Spec.Expr))
	} else {
		m.Expr = types.StringNull()
	}
	m.Selector = types.StringValue(keepSpelling(m.Selector, p.Selector))
	m.SiteID = types.StringPointerValue(p.SiteID)
	m.Enabled = types.BoolValue(p.Enabled)
}

// keepSpelling returns the known value when the API's is the same text trimmed, else the API's.
func keepSpelling(known types.String, fromAPI string) string {
	if !known.IsNull() && !known.IsUnknown() && strings.TrimSpace(known.ValueString()) == fromAPI {
		return known.ValueString()
	}
	return fromAPI
}

func (m *alertPolicyModel) create() client.AlertPolicyCreate {
	return client.AlertPolicyCreate{
		Name: m.Name.ValueString(), Severity: m.Severity.ValueString(), Spec: m.spec(),
		Selector: m.Selector.ValueString(), SiteID: stringPtr(m.SiteID), Enabled: m.Enabled.ValueBool(),
	}
}

func (r *alertPolicyResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan alertPolicyModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	policy, err := r.client.CreateAlertPolicy(ctx, plan.create())
	if err != nil {
		addAPIError(&resp.Diagnostics, "Could not create the alert policy", err, alertPolicyAttributes, alertPolicyRenames)
		return
	}
	plan.fill(policy)
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

func (r *alertPolicyResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state alertPolicyModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	policy, err := r.client.GetAlertPolicy(ctx, state.ID.ValueString())
	if client.IsNotFound(err) {
		resp.State.RemoveResource(ctx)
		return
	}
	if err != nil {
		resp.Diagnostics.AddError("Could not read the alert policy", err.Error())
		return
	}
	state.fill(policy)
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

func (r *alertPolicyResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan alertPolicyModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	policy, err := r.client.UpdateAlertPolicy(ctx, plan.ID.ValueString(), client.AlertPolicyUpdate(plan.create()))
	if err != nil {
		addAPIError(&resp.Diagnostics, "Could not update the alert policy", err, alertPolicyAttributes, alertPolicyRenames)
		return
	}
	plan.fill(policy)
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

func (r *alertPolicyResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state alertPolicyModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if err := r.client.DeleteAlertPolicy(ctx, state.ID.ValueString()); err != nil && !client.IsNotFound(err) {
		resp.Diagnostics.AddError("Could not delete the alert policy", err.Error())
	}
}

func (r *alertPolicyResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	resource.ImportStatePassthroughID(ctx, path.Root("id"), req, resp)
}
