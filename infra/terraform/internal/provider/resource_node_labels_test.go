package provider

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
)

func nodeLabelsConfig(nodeID, labels string) string {
	return fmt.Sprintf(`
resource "edgefleet_node_labels" "b" {
  node_id = %q
  labels  = %s
}
`, nodeID, labels)
}

func apiLabelsAre(nodeID string, want map[string]string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		node, err := testClient().GetNode(context.Background(), nodeID)
		if err != nil {
			return err
		}
		if fmt.Sprint(node.Labels) != fmt.Sprint(want) {
			return fmt.Errorf("the node's labels are %v, want %v", node.Labels, want)
		}
		return nil
	}
}

// The labels are authoritative: the node's own labels (tier=stable, fleet=tf) go at once.
func TestAccNodeLabels(t *testing.T) {
	nodeID := os.Getenv("EDGEFLEET_TEST_OTHER_NODE_ID")
	resource.ParallelTest(t, resource.TestCase{
		PreCheck:                 func() { testAccPreCheck(t) },
		ProtoV6ProviderFactories: testProviders,
		CheckDestroy:             apiLabelsAre(nodeID, map[string]string{}),
		Steps: []resource.TestStep{
			{Config: nodeLabelsConfig(nodeID, `{ "bad key!" = "x" }`), PlanOnly: true, ExpectError: regexp.MustCompile(`must be a label key`)},
			{
				Config: nodeLabelsConfig(nodeID, `{ tier = "stable", "example.com/ring" = "r1" }`),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr("edgefleet_node_labels.b", "labels.%", "2"),
					apiLabelsAre(nodeID, map[string]string{"tier": "stable", "example.com/ring": "r1"}),
				),
			},
			{
				Config: nodeLabelsConfig(nodeID, `{ tier = "canary" }`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("edgefleet_node_labels.b", plancheck.ResourceActionUpdate),
				}},
				Check: apiLabelsAre(nodeID, map[string]string{"tier": "canary"}),
			},
			{ResourceName: "edgefleet_node_labels.b", ImportState: true, ImportStateVerify: true, ImportStateId: nodeID},
			{
				// A label added in the console is drift: the next plan takes it away.
				PreConfig: func() {
					if err := testClient().ChangeNodeLabels(context.Background(), nodeID, map[string]string{"extra": "yes"}, nil); err != nil {
						t.Fatal(err)
					}
				},
				Config: nodeLabelsConfig(nodeID, `{ tier = "canary" }`), PlanOnly: true, ExpectNonEmptyPlan: true,
			},
		},
	})
}
