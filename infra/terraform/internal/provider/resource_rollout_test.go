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

func rolloutConfig(app, file, selector, strategy string, start, wait bool) string {
	return fmt.Sprintf(`
resource "edgefleet_app" "sensor" {
  name = %q
}
resource "edgefleet_app_version" "v1" {
  app_id        = edgefleet_app.sensor.id
  version       = "1.0.0"
  command       = ["./sensor"]
  artifact_file = %q
}
resource "edgefleet_rollout" "r" {
  app_version_id      = edgefleet_app_version.v1.id
  selector            = %q
  strategy            = jsonencode(%s)
  start               = %t
  wait_for_completion = %t
  timeouts = {
    create = "2m"
    update = "2m"
  }
}
`, app, file, selector, strategy, start, wait)
}

// rolloutStatusIs checks the API's status of every rollout in the state (CheckDestroy: rollouts are history).
func rolloutStatusIs(want ...string) func(*terraform.State) error {
	return checkGone("edgefleet_rollout", func(ctx context.Context, c *client.Client, attrs map[string]string) (bool, error) {
		rollout, err := c.GetRollout(ctx, attrs["id"])
		if err != nil {
			return false, err
		}
		if !contains(want, rollout.Status) {
			return true, fmt.Errorf("rollout %s is %s, want one of %v", rollout.ID, rollout.Status, want)
		}
		return false, nil
	})
}

// Created pending, started in place and waited for; a finished rollout is only forgotten on destroy.
func TestAccRolloutStartAndWait(t *testing.T) {
	app := unique("ro")
	file, _ := artifactFile(t, "rollout build")
	selector := "fleet=" + unique("none") // no node: the rollout completes at once
	strategy := `{ batches = [{ count = 1 }, { percent = 100 }], onBatchFailure = "pause" }`
	resource.ParallelTest(t, resource.TestCase{
		PreCheck:                 func() { testAccPreCheck(t) },
		ProtoV6ProviderFactories: testProviders,
		CheckDestroy:             rolloutStatusIs("completed"),
		Steps: []resource.TestStep{
			{
				Config: rolloutConfig(app, file, selector, strategy, false, false),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr("edgefleet_rollout.r", "status", "pending"),
					resource.TestCheckResourceAttr("edgefleet_rollout.r", "version", "1.0.0"),
					resource.TestCheckResourceAttrPair("edgefleet_rollout.r", "app_id", "edgefleet_app.sensor", "id"),
				),
			},
			{
				Config: rolloutConfig(app, file, selector, strategy, true, true),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("edgefleet_rollout.r", plancheck.ResourceActionUpdate),
				}},
				Check: resource.TestCheckResourceAttr("edgefleet_rollout.r", "status", "completed"),
			},
			{
				ResourceName: "edgefleet_rollout.r", ImportState: true, ImportStateVerify: true,
				// The API answers the strategy with its defaults; how to apply is not the rollout's.
				ImportStateVerifyIgnore: []string{"strategy", "wait_for_completion", "timeouts"},
			},
			{
				// A new target is a new rollout.
				Config: rolloutConfig(app, file, selector+"-b", strategy, true, true),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("edgefleet_rollout.r", plancheck.ResourceActionDestroyBeforeCreate),
				}},
				Check: resource.TestCheckResourceAttr("edgefleet_rollout.r", "status", "completed"),
			},
		},
	})
}

// Destroying an active rollout aborts it.
func TestAccRolloutDestroyAborts(t *testing.T) {
	app := unique("ro")
	file, _ := artifactFile(t, "rollout build")
	selector := "fleet=" + unique("none")
	resource.ParallelTest(t, resource.TestCase{
		PreCheck:                 func() { testAccPreCheck(t) },
		ProtoV6ProviderFactories: testProviders,
		CheckDestroy:             rolloutStatusIs("cancelled"),
		Steps: []resource.TestStep{
			{
				Config: rolloutConfig(app, file, selector, `{ batches = [{ count = 1, pauseAfter = "approval" }, { percent = 100 }] }`, false, false),
				Check:  resource.TestCheckResourceAttr("edgefleet_rollout.r", "status", "pending"),
			},
		},
	})
}

func TestAccRolloutBadInput(t *testing.T) {
	file, _ := artifactFile(t, "x")
	resource.ParallelTest(t, resource.TestCase{
		PreCheck:                 func() { testAccPreCheck(t) },
		ProtoV6ProviderFactories: testProviders,
		Steps: []resource.TestStep{
			{Config: rolloutConfig("bad", file, "tier in canary", `{ batches = [{ count = 1 }] }`, true, false), PlanOnly: true,
				ExpectError: regexp.MustCompile(`(?s)Invalid label selector.*position 8: expected "\(" after in/notin`)},
			{Config: rolloutConfig("bad", file, "", `{ batches = [] }`, true, false), PlanOnly: true,
				ExpectError: regexp.MustCompile(`(?s)Invalid rollout strategy.*need 1 to 50 batches`)},
			{Config: rolloutConfig("bad", file, "", `{ batches = [{ count = 1, offline = "maybe" }] }`, true, false), PlanOnly: true,
				ExpectError: regexp.MustCompile(`(?s)batches.0.offline: must be one of`)},
		},
	})
}
