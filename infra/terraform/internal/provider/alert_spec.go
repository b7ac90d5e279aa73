package provider

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/edgefleet/edgefleet/infra/terraform/internal/client"
)

// alertKindParameters is the API's alert policy spec (packages/alerts/src/policy.ts) per kind:
// the attributes each kind needs, all of them required, no others allowed.
var alertKindParameters = map[string][]string{
	"node_offline":          {"for_minutes"},
	"site_offline":          {"for_minutes"},
	"cpu_above":             {"threshold_percent", "for_minutes"},
	"memory_above":          {"threshold_percent", "for_minutes"},
	"disk_above":            {"threshold_percent", "for_minutes"},
	"app_crash_looping":     {"restarts", "window_minutes"},
	"bandwidth_over_budget": {"budget_bytes", "window"},
	"rollout_paused":        {},
	"rollout_failed":        {},
	"rollout_finished":      {},
	"promql":                {"expr", "for_minutes"},
}

var alertParameterAttributes = []string{"for_minutes", "threshold_percent", "restarts", "window_minutes", "budget_bytes", "window", "expr"}

// Rollout kinds are evaluated by the gateway per rollout: a site can limit them, a node selector cannot.
var alertEventKinds = map[string]bool{"rollout_paused": true, "rollout_failed": true, "rollout_finished": true}

func alertKinds() []string {
	kinds := make([]string, 0, len(alertKindParameters))
	for kind := range alertKindParameters {
		kinds = append(kinds, kind)
	}
	sort.Strings(kinds)
	return kinds
}

// attributeProblem is a plan-time problem on one attribute.
type attributeProblem struct{ attribute, message string }

// alertSpecProblems checks a policy's shape the way the API will: the kind's parameters present,
// no others, and the scope the kind allows. set: attributes given a value; unknown: attributes
// whose value is not known yet (not judged).
func alertSpecProblems(kind string, set, unknown map[string]bool) []attributeProblem {
	want, ok := alertKindParameters[kind]
	if !ok {
		return nil // the kind's own validator says so
	}
	needed := map[string]bool{}
	for _, name := range want {
		needed[name] = true
	}
	var problems []attributeProblem
	for _, name := range alertParameterAttributes {
		switch {
		case needed[name] && !set[name] && !unknown[name]:
			problems = append(problems, attributeProblem{name, fmt.Sprintf("kind %q needs %s", kind, name)})
		case !needed[name] && set[name]:
			takes := "no parameters"
			if len(want) > 0 {
				takes = "only " + strings.Join(want, " and ")
			}
			problems = append(problems, attributeProblem{name, fmt.Sprintf("kind %q takes %s", kind, takes)})
		}
	}
	if kind == "promql" {
		if set["selector"] {
			problems = append(problems, attributeProblem{"selector", "a promql policy has no selector: its expression is its scope"})
		}
		if set["site_id"] {
			problems = append(problems, attributeProblem{"site_id", "a promql policy has no site: its expression is its scope"})
		}
	}
	if alertEventKinds[kind] && set["selector"] {
		problems = append(problems, attributeProblem{"selector", "a rollout policy has no node selector: limit it to a site, or to none"})
	}
	return problems
}

// alertSpecValidator runs alertSpecProblems on the configuration at plan time.
type alertSpecValidator struct{}

var _ resource.ConfigValidator = alertSpecValidator{}

func (alertSpecValidator) Description(context.Context) string {
	return "each kind takes exactly its own parameters, and the scope the kind allows"
}

func (v alertSpecValidator) MarkdownDescription(ctx context.Context) string {
	return v.Description(ctx)
}

func (alertSpecValidator) ValidateResource(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var config alertPolicyModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &config)...)
	if resp.Diagnostics.HasError() || config.Kind.IsUnknown() || config.Kind.IsNull() {
		return
	}
	set, unknown := map[string]bool{}, map[string]bool{}
	for name, value := range config.parameterValues() {
		set[name] = !value.IsNull() && !value.IsUnknown()
		unknown[name] = value.IsUnknown()
	}
	// An empty selector is no selector (the default).
	set["selector"] = set["selector"] && config.Selector.ValueString() != ""
	for _, p := range alertSpecProblems(config.Kind.ValueString(), set, unknown) {
		resp.Diagnostics.AddAttributeError(path.Root(p.attribute), "Invalid alert policy", p.message)
	}
}

// parameterValues are the attributes the validator judges, by name.
func (m *alertPolicyModel) parameterValues() map[string]attr.Value {
	return map[string]attr.Value{
		"for_minutes": m.ForMinutes, "threshold_percent": m.ThresholdPercent, "restarts": m.Restarts,
		"window_minutes": m.WindowMinutes, "budget_bytes": m.BudgetBytes, "window": m.Window, "expr": m.Expr,
		"selector": m.Selector, "site_id": m.SiteID,
	}
}

// spec is the API's spec for the planned kind: only the kind's own parameters are sent.
func (m *alertPolicyModel) spec() client.AlertPolicySpec {
	kind := m.Kind.ValueString()
	spec := client.AlertPolicySpec{Kind: kind}
	for _, name := range alertKindParameters[kind] {
		switch name {
		case "for_minutes":
			spec.ForMinutes = int64Ptr(m.ForMinutes)
		case "threshold_percent":
			spec.ThresholdPercent = float64Ptr(m.ThresholdPercent)
		case "restarts":
			spec.Restarts = int64Ptr(m.Restarts)
		case "window_minutes":
			spec.WindowMinutes = int64Ptr(m.WindowMinutes)
		case "budget_bytes":
			spec.BudgetBytes = int64Ptr(m.BudgetBytes)
		case "window":
			spec.Window = stringPtr(m.Window)
		case "expr":
			spec.Expr = stringPtr(m.Expr)
		}
	}
	return spec
}

func float64Ptr(v types.Float64) *float64 {
	if v.IsNull() || v.IsUnknown() {
		return nil
	}
	f := v.ValueFloat64()
	return &f
}
