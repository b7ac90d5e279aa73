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

func apiKeyConfig(name, role string) string {
	return fmt.Sprintf(`
resource "edgefleet_api_key" "ci" {
  name       = %q
  role       = %q
  expires_at = "2099-01-01T00:00:00Z"
}
`, name, role)
}

func apiKeyActive(ctx context.Context, c *client.Client, attrs map[string]string) (bool, error) {
	key, err := c.GetAPIKey(ctx, attrs["id"])
	if client.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return key.RevokedAt == nil, nil
}

func TestAccAPIKey(t *testing.T) {
	name := unique("ci")
	var keyID string
	resource.ParallelTest(t, resource.TestCase{
		PreCheck:                 func() { testAccPreCheck(t) },
		ProtoV6ProviderFactories: testProviders,
		CheckDestroy:             checkGone("edgefleet_api_key", apiKeyActive),
		Steps: []resource.TestStep{
			{Config: apiKeyConfig(name, "god"), PlanOnly: true, ExpectError: regexp.MustCompile(`(?s)role.*value must be one of`)},
			{
				Config: apiKeyConfig(name, "viewer"),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestMatchResourceAttr("edgefleet_api_key.ci", "key", regexp.MustCompile(`^efk_`)),
					resource.TestCheckResourceAttr("edgefleet_api_key.ci", "role", "viewer"),
					resource.TestCheckResourceAttr("edgefleet_api_key.ci", "expires_at", "2099-01-01T00:00:00Z"),
					// The key works: it reads the organization, as a viewer.
					func(s *terraform.State) error {
						key := s.RootModule().Resources["edgefleet_api_key.ci"].Primary.Attributes["key"]
						org, err := client.New(testClient().BaseURL, key, "test").Organization(context.Background())
						if err != nil {
							return err
						}
						if org.Role != "viewer" {
							return fmt.Errorf("the new key's role is %s", org.Role)
						}
						return nil
					},
				),
			},
			{
				// A new key needs a new name: a revoked key's name stays taken (the audit log names it).
				Config: apiKeyConfig(name+"-2", "operator"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("edgefleet_api_key.ci", plancheck.ResourceActionDestroyBeforeCreate),
				}},
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr("edgefleet_api_key.ci", "role", "operator"),
					captureID("edgefleet_api_key.ci", &keyID),
				),
			},
			{ResourceName: "edgefleet_api_key.ci", ImportState: true, ImportStateVerify: true, ImportStateVerifyIgnore: []string{"key"}},
			{
				PreConfig: func() {
					if err := testClient().RevokeAPIKey(context.Background(), keyID); err != nil {
						t.Fatal(err)
					}
				},
				Config: apiKeyConfig(name+"-2", "operator"), PlanOnly: true, ExpectNonEmptyPlan: true,
			},
		},
	})
}
