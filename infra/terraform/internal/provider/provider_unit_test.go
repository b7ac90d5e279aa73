package provider

import (
	"context"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
)

// The framework validates every schema when it is served: a broken one fails here, without a stack.
func TestEverySchemaIsValidAndEveryResourceImportable(t *testing.T) {
	server := providerserver.NewProtocol6(New("test")())()
	resp, err := server.GetProviderSchema(context.Background(), &tfprotov6.GetProviderSchemaRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range resp.Diagnostics {
		t.Errorf("%s: %s", d.Summary, d.Detail)
	}
	want := []string{"site", "enrollment_token", "api_key", "member", "node_labels", "app", "app_version", "rollout", "alert_policy"}
	for _, name := range want {
		if _, ok := resp.ResourceSchemas["edgefleet_"+name]; !ok {
			t.Errorf("resource edgefleet_%s missing", name)
		}
	}
	for _, name := range []string{"organization", "site", "sites", "node", "nodes", "app", "app_version"} {
		if _, ok := resp.DataSourceSchemas["edgefleet_"+name]; !ok {
			t.Errorf("data source edgefleet_%s missing", name)
		}
	}
	for _, r := range New("test")().Resources(context.Background()) {
		if _, ok := r().(resource.ResourceWithImportState); !ok {
			t.Errorf("%T cannot be imported", r())
		}
	}
	// Secrets never show in plans or logs.
	for resource, attribute := range map[string]string{"edgefleet_enrollment_token": "token", "edgefleet_api_key": "key", "edgefleet_member": "temporary_password"} {
		for _, a := range resp.ResourceSchemas[resource].Block.Attributes {
			if a.Name == attribute && !a.Sensitive {
				t.Errorf("%s.%s must be sensitive", resource, attribute)
			}
		}
	}
}

func TestStrategyChecksWhatTheShapeCanSay(t *testing.T) {
	if err := checkStrategy(`{"batches":[{"count":1,"pauseAfter":"approval","selector":"tier=canary"},{"percent":100,"pauseAfter":{"seconds":60}}],"onBatchFailure":"rollback"}`); err != nil {
		t.Fatal(err)
	}
	for input, want := range map[string]string{
		`[]`:             "not a JSON object",
		`{"batches":[]}`: "need 1 to 50 batches",
		`{"batches":[{}],"onBatchFailure":"retry"}`:        `onBatchFailure: must be "pause" or "rollback"`,
		`{"batches":[{"selector":"a in b"}]}`:              "batches.0.selector: invalid selector at position 5",
		`{"batches":[{}],"defaults":{"afterWait":"wait"}}`: "defaults.afterWait: must be one of",
		`{"batches":[{"pauseAfter":"forever"}]}`:           "batches.0.pauseAfter",
	} {
		if err := checkStrategy(input); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want %q", input, err, want)
		}
	}
}

func TestAlertSpecChecksWhatEachKindTakes(t *testing.T) {
	set := func(names ...string) map[string]bool {
		m := map[string]bool{}
		for _, n := range names {
			m[n] = true
		}
		return m
	}
	if p := alertSpecProblems("cpu_above", set("threshold_percent", "for_minutes", "selector", "site_id"), nil); len(p) != 0 {
		t.Fatalf("a complete cpu_above: %v", p)
	}
	if p := alertSpecProblems("promql", set("for_minutes"), set("expr")); len(p) != 0 {
		t.Fatalf("an expr not known yet is not judged: %v", p)
	}
	for _, c := range []struct {
		kind      string
		set       map[string]bool
		attribute string
		message   string
	}{
		{"cpu_above", set("for_minutes"), "threshold_percent", `kind "cpu_above" needs threshold_percent`},
		{"node_offline", set("for_minutes", "expr"), "expr", `kind "node_offline" takes only for_minutes`},
		{"rollout_failed", set("for_minutes"), "for_minutes", `kind "rollout_failed" takes no parameters`},
		{"rollout_paused", set("selector"), "selector", "a rollout policy has no node selector"},
		{"promql", set("expr", "for_minutes", "site_id"), "site_id", "a promql policy has no site"},
		{"promql", set("expr", "for_minutes", "selector"), "selector", "a promql policy has no selector"},
		{"bandwidth_over_budget", set("budget_bytes"), "window", `needs window`},
	} {
		problems := alertSpecProblems(c.kind, c.set, nil)
		if len(problems) != 1 || problems[0].attribute != c.attribute || !strings.Contains(problems[0].message, c.message) {
			t.Errorf("%s %v: got %v, want one problem on %s: %q", c.kind, c.set, problems, c.attribute, c.message)
		}
	}
	// Every kind of the API is known, with its parameters.
	if len(alertKinds()) != 11 {
		t.Fatalf("kinds %v", alertKinds())
	}
}
