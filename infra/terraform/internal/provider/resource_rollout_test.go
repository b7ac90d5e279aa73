package provider

import (
	"context"
	"fmt"
	"regexp"
	"strings"
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

// rolloutStatusIs checks the API's status of a rollout (destroyed rollouts stay, as history).
func rolloutStatusIs(id *string, want string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		rollout, err := testClient().GetRollout(context.Background(), *id)
		if err != nil {
			return err
		}
		if rollout.Status != want {
			return fmt.Errorf("rollout %s is %s, want %s", rollout.ID, rollout.Status, want)
		}
		return nil
	}
}

// withoutRollout is the configuration with the app and its version but no rollout.
func withoutRollout(config string) string {
	return config[:strings.Index(config, `resource "edgefleet_rollout"`)]
}

// Deleting the app deletes its rollouts' history too: after the final destroy they are gone.
func rolloutGone(ctx context.Context, c *client.Client, attrs map[string]string) (bool, error) {
	_, err := c.GetRollout(ctx, attrs["id"])
	if client.IsNotFound(err) {
		return false, nil
	}
	return err == nil, err
}

// Created pending, started in place and waited for; a finished rollout is only forgotten on destroy.
func TestAccRolloutStartAndWait(t *testing.T) {
	app := unique("ro")
	file, _ := artifactFile(t, "rollout build")
	selector := "fleet=tf-offline" // one offline node, which batches skip: the rollout completes without an agent
	strategy := `{ batches = [{ count = 1 }, { percent = 100 }], onBatchFailure = "pause" }`
	var rolloutID string
	resource.ParallelTest(t, resource.TestCase{
		PreCheck:                 func() { testAccPreCheck(t) },
		ProtoV6ProviderFactories: testProviders,
		CheckDestroy:             checkGone("edgefleet_rollout", rolloutGone),
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
				Config: rolloutConfig(app, file, selector+",!gpu", strategy, true, true),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("edgefleet_rollout.r", plancheck.ResourceActionDestroyBeforeCreate),
				}},
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr("edgefleet_rollout.r", "status", "completed"),
					captureID("edgefleet_rollout.r", &rolloutID),
				),
			},
			{
				// Destroying a finished rollout forgets it: it stays completed, as history.
				Config: withoutRollout(rolloutConfig(app, file, selector+",!gpu", strategy, true, true)),
				Check:  rolloutStatusIs(&rolloutID, "completed"),
			},
		},
	})
}

// Destroying an active rollout aborts it.
func TestAccRolloutDestroyAborts(t *testing.T) {
	app := unique("ro")
	file, _ := artifactFile(t, "rollout build")
	selector := "fleet=tf-offline"
	config := rolloutConfig(app, file, selector, `{ batches = [{ count = 1, pauseAfter = "approval" }, { percent = 100 }] }`, true, false)
	var rolloutID string
	resource.ParallelTest(t, resource.TestCase{
		PreCheck:                 func() { testAccPreCheck(t) },
		ProtoV6ProviderFactories: testProviders,
		CheckDestroy:             checkGone("edgefleet_rollout", rolloutGone),
		Steps: []resource.TestStep{
			{
				Config: config,
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttrWith("edgefleet_rollout.r", "status", func(status string) error {
						if client.RolloutFinished(status) {
							return fmt.Errorf("the rollout is %s already: it must still be active (it waits for approval)", status)
						}
						return nil
					}),
					captureID("edgefleet_rollout.r", &rolloutID),
				),
			},
			{Config: withoutRollout(config), Check: rolloutStatusIs(&rolloutID, "cancelled")},
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
