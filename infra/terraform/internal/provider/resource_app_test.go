package provider

import (
	"context"
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"

	"github.com/edgefleet/edgefleet/infra/terraform/internal/client"
)

func appConfig(name, description string) string {
	return fmt.Sprintf(`
resource "edgefleet_app" "sensor" {
  name        = %q
  description = %q
}
`, name, description)
}

func appExists(ctx context.Context, c *client.Client, attrs map[string]string) (bool, error) {
	_, err := c.GetApp(ctx, attrs["id"])
	if client.IsNotFound(err) {
		return false, nil
	}
	return err == nil, err
}

func TestAccApp(t *testing.T) {
	name := unique("sensor")
	var appID string
	resource.ParallelTest(t, resource.TestCase{
		PreCheck:                 func() { testAccPreCheck(t) },
		ProtoV6ProviderFactories: testProviders,
		CheckDestroy:             checkGone("edgefleet_app", appExists),
		Steps: []resource.TestStep{
			{Config: appConfig("Upper Case", ""), PlanOnly: true, ExpectError: regexp.MustCompile(`lower-case`)},
			{
				Config: appConfig(name, "reads the sensors"),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr("edgefleet_app.sensor", "name", name),
					captureID("edgefleet_app.sensor", &appID),
				),
			},
			{
				Config: appConfig(name+"-v2", "renamed"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("edgefleet_app.sensor", plancheck.ResourceActionUpdate),
				}},
				Check: resource.TestCheckResourceAttr("edgefleet_app.sensor", "name", name+"-v2"),
			},
			{ResourceName: "edgefleet_app.sensor", ImportState: true, ImportStateVerify: true},
			{
				PreConfig: func() {
					if err := testClient().DeleteApp(context.Background(), appID); err != nil {
						t.Fatal(err)
					}
				},
				Config: appConfig(name+"-v2", "renamed"), PlanOnly: true, ExpectNonEmptyPlan: true,
			},
		},
	})
}
