package provider

import (
	"context"
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/edgefleet/edgefleet/infra/terraform/internal/client"
)

// alertPolicyConfig is a site and one policy whose body is given (the policy may scope to the site).
func alertPolicyConfig(site, name, body string) string {
	return fmt.Sprintf(`
resource "edgefleet_site" "plant" {
  name = %q
}

resource "edgefleet_alert_policy" "policy" {
  name = %q
  %s
}
`, site, name, body)
}

func alertPolicyExists(ctx context.Context, c *client.Client, attrs map[string]string) (bool, error) {
	_, err := c.GetAlertPolicy(ctx, attrs["id"])
	if client.IsNotFound(err) {
		return false, nil
	}
	return err == nil, err
}

// alertPolicyInAPI checks the policy as the API has it.
func alertPolicyInAPI(check func(p *client.AlertPolicy) error) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		id, err := idOf(s, "edgefleet_alert_policy.policy")
		if err != nil {
			return err
		}
		p, err := testClient().GetAlertPolicy(context.Background(), id)
		if err != nil {
			return err
		}
		return check(p)
	}
}

func TestAccAlertPolicy(t *testing.T) {
	site, name := unique("alerts"), unique("hot")
	var id string
	promql := alertPolicyConfig(site, name+"-promql", `
  kind        = "promql"
  severity    = "info"
  for_minutes = 0
  expr        = <<-EOT
    sum by (node) (rate(edgefleet_app_restarts_total[5m])) > 1
  EOT
`)
	resource.ParallelTest(t, resource.TestCase{
		PreCheck:                 func() { testAccPreCheck(t) },
		ProtoV6ProviderFactories: testProviders,
		CheckDestroy:             checkGone("edgefleet_alert_policy", alertPolicyExists),
		Steps: []resource.TestStep{
			{
				Config: alertPolicyConfig(site, name, `
  kind              = "cpu_above"
  severity          = "warning"
  threshold_percent = 92.5
  for_minutes       = 5
  selector          = "tier=canary"
  site_id           = edgefleet_site.plant.id
`),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestMatchResourceAttr("edgefleet_alert_policy.policy", "id", regexp.MustCompile(`^[0-9a-f-]{36}$`)),
					resource.TestCheckResourceAttr("edgefleet_alert_policy.policy", "enabled", "true"),
					resource.TestCheckResourceAttrPair("edgefleet_alert_policy.policy", "site_id", "edgefleet_site.plant", "id"),
					alertPolicyInAPI(func(p *client.AlertPolicy) error {
						if p.Spec.Kind != "cpu_above" || p.Spec.ThresholdPercent == nil || *p.Spec.ThresholdPercent != 92.5 ||
							p.Spec.ForMinutes == nil || *p.Spec.ForMinutes != 5 || p.Selector != "tier=canary" || p.SiteID == nil {
							return fmt.Errorf("the API has %+v", p)
						}
						return nil
					}),
					captureID("edgefleet_alert_policy.policy", &id),
				),
			},
			{
				// Another kind, widened to every site, switched off: all in place, the same policy.
				Config: alertPolicyConfig(site, name, `
  kind        = "node_offline"
  severity    = "critical"
  for_minutes = 10
  enabled     = false
`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("edgefleet_alert_policy.policy", plancheck.ResourceActionUpdate),
				}},
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckNoResourceAttr("edgefleet_alert_policy.policy", "site_id"),
					resource.TestCheckNoResourceAttr("edgefleet_alert_policy.policy", "threshold_percent"),
					resource.TestCheckResourceAttr("edgefleet_alert_policy.policy", "selector", ""),
					alertPolicyInAPI(func(p *client.AlertPolicy) error {
						if p.ID != id || p.Spec.Kind != "node_offline" || p.Severity != "critical" || p.Enabled ||
							p.SiteID != nil || p.Selector != "" || p.Spec.ThresholdPercent != nil {
							return fmt.Errorf("the API has %+v (id %s before)", p, id)
						}
						return nil
					}),
				),
			},
			{ResourceName: "edgefleet_alert_policy.policy", ImportState: true, ImportStateVerify: true},
			{
				// PromQL from a heredoc: the API trims the final newline, the plan stays empty after apply.
				Config: promql,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("edgefleet_alert_policy.policy", plancheck.ResourceActionUpdate),
				}},
				Check: alertPolicyInAPI(func(p *client.AlertPolicy) error {
					if p.ID != id || p.Name != name+"-promql" || p.Spec.Expr == nil ||
						*p.Spec.Expr != "sum by (node) (rate(edgefleet_app_restarts_total[5m])) > 1" {
						return fmt.Errorf("the API has %+v", p)
					}
					return nil
				}),
			},
			{
				// Deleted outside Terraform: planned for re-creation (not an error), and re-created.
				PreConfig: func() {
					if err := testClient().DeleteAlertPolicy(context.Background(), id); err != nil {
						t.Fatal(err)
					}
				},
				Config: promql,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("edgefleet_alert_policy.policy", plancheck.ResourceActionCreate),
				}},
				Check: alertPolicyInAPI(func(p *client.AlertPolicy) error {
					if p.ID == id || p.Spec.Kind != "promql" {
						return fmt.Errorf("the API has %+v, want a new policy (the old id was %s)", p, id)
					}
					return nil
				}),
			},
		},
	})
}

// onAttribute matches an apply error OpenTofu shows on the attribute's own line of the configuration.
func onAttribute(attribute, detail string) *regexp.Regexp {
	return regexp.MustCompile(`(?s)Could not create the alert policy.*in resource "edgefleet_alert_policy" "policy":\s+\d+:\s+` +
		attribute + `\s+=.*` + detail)
}

func TestAccAlertPolicyBadInput(t *testing.T) {
	site := unique("alerts-bad")
	resource.ParallelTest(t, resource.TestCase{
		PreCheck:                 func() { testAccPreCheck(t) },
		ProtoV6ProviderFactories: testProviders,
		CheckDestroy:             checkGone("edgefleet_alert_policy", alertPolicyExists),
		Steps: []resource.TestStep{
			// A viewer reads policies but may not make one (first: later steps leave a site the viewer could not destroy).
			{
				Config: fmt.Sprintf(`
provider "edgefleet" {
  api_key = %q
}
resource "edgefleet_alert_policy" "refused" {
  name        = %q
  kind        = "rollout_failed"
  severity    = "info"
}
`, mustEnv(t, "EDGEFLEET_TEST_VIEWER_KEY"), unique("refused")),
				ExpectError: regexp.MustCompile(`403 FORBIDDEN`),
			},
			// What the schema can say fails the plan.
			{Config: alertPolicyConfig(site, unique("p"), `
  kind     = "cpu_hot"
  severity = "warning"
`), PlanOnly: true, ExpectError: regexp.MustCompile(`(?s)kind.*value must be one of`)},
			{Config: alertPolicyConfig(site, unique("p"), `
  kind        = "cpu_above"
  severity    = "warning"
  for_minutes = 5
`), PlanOnly: true, ExpectError: regexp.MustCompile(`kind "cpu_above" needs threshold_percent`)},
			{Config: alertPolicyConfig(site, unique("p"), `
  kind        = "promql"
  severity    = "warning"
  expr        = "up == 0"
  for_minutes = 1
  selector    = "tier=canary"
`), PlanOnly: true, ExpectError: regexp.MustCompile(`a promql policy has no selector`)},
			// PromQL only Mimir's parser can judge: the API's 400, on expr.
			{
				Config: alertPolicyConfig(site, unique("p"), `
  kind        = "promql"
  severity    = "warning"
  expr        = "sum(rate(edgefleet_node_cpu_usage_ratio[5m]"
  for_minutes = 1
`),
				ExpectError: onAttribute("expr", `PromQL does not parse.*400 BAD_REQUEST at "spec.expr"`),
			},
			// Another organization's site does not exist here: the API's 400, on site_id.
			{
				Config: alertPolicyConfig(site, unique("p"), fmt.Sprintf(`
  kind        = "site_offline"
  severity    = "critical"
  for_minutes = 5
  site_id     = %q
`, mustEnv(t, "EDGEFLEET_TEST_FOREIGN_SITE_ID"))),
				ExpectError: onAttribute("site_id", `not found in this organization.*400 BAD_REQUEST at "siteId"`),
			},
		},
	})
}
