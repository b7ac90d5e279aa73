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

func tokenConfig(site, description string, maxUses int) string {
	return fmt.Sprintf(`
resource "edgefleet_site" "plant" {
  name = %q
}
resource "edgefleet_enrollment_token" "plant" {
  description       = %q
  site_id           = edgefleet_site.plant.id
  max_uses          = %d
  expires_in_hours  = 48
  requires_approval = true
  labels = {
    tier = "canary"
  }
}
`, site, description, maxUses)
}

// Destroyed means revoked (tokens are kept, revoked, for the audit trail).
func tokenUsable(ctx context.Context, c *client.Client, attrs map[string]string) (bool, error) {
	token, err := c.GetEnrollmentToken(ctx, attrs["id"])
	if client.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return token.RevokedAt == nil, nil
}

func TestAccEnrollmentToken(t *testing.T) {
	site := unique("tok-site")
	var tokenID string
	resource.ParallelTest(t, resource.TestCase{
		PreCheck:                 func() { testAccPreCheck(t) },
		ProtoV6ProviderFactories: testProviders,
		CheckDestroy:             checkGone("edgefleet_enrollment_token", tokenUsable),
		Steps: []resource.TestStep{
			{
				Config: tokenConfig(site, "line 1", 5),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestMatchResourceAttr("edgefleet_enrollment_token.plant", "token", regexp.MustCompile(`.{20,}`)),
					resource.TestMatchResourceAttr("edgefleet_enrollment_token.plant", "install_command", regexp.MustCompile(`edgefleet`)),
					resource.TestCheckResourceAttrPair("edgefleet_enrollment_token.plant", "site_id", "edgefleet_site.plant", "id"),
					resource.TestCheckResourceAttr("edgefleet_enrollment_token.plant", "labels.tier", "canary"),
					resource.TestCheckResourceAttr("edgefleet_enrollment_token.plant", "max_uses", "5"),
					resource.TestCheckResourceAttr("edgefleet_enrollment_token.plant", "usable", "true"),
					resource.TestCheckResourceAttr("edgefleet_enrollment_token.plant", "requires_approval", "true"),
				),
			},
			{
				// Every input forces a new token.
				Config: tokenConfig(site, "line 2", 10),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("edgefleet_enrollment_token.plant", plancheck.ResourceActionDestroyBeforeCreate),
				}},
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr("edgefleet_enrollment_token.plant", "description", "line 2"),
					captureID("edgefleet_enrollment_token.plant", &tokenID),
				),
			},
			{
				ResourceName: "edgefleet_enrollment_token.plant", ImportState: true, ImportStateVerify: true,
				// The secret is shown once, at create.
				ImportStateVerifyIgnore: []string{"token", "install_command"},
			},
			{
				// Revoked outside Terraform: planned for re-creation.
				PreConfig: func() {
					if err := testClient().RevokeEnrollmentToken(context.Background(), tokenID); err != nil {
						t.Fatal(err)
					}
				},
				Config: tokenConfig(site, "line 2", 10), PlanOnly: true, ExpectNonEmptyPlan: true,
			},
		},
	})
}

func TestAccEnrollmentTokenBadInput(t *testing.T) {
	resource.ParallelTest(t, resource.TestCase{
		PreCheck:                 func() { testAccPreCheck(t) },
		ProtoV6ProviderFactories: testProviders,
		Steps: []resource.TestStep{
			{Config: `resource "edgefleet_enrollment_token" "bad" { expires_in_hours = 9000 }`, PlanOnly: true,
				ExpectError: regexp.MustCompile(`(?s)expires_in_hours.*between 1 and 8760`)},
			// The API's issue lands on the attribute: site_id.
			{Config: `resource "edgefleet_enrollment_token" "bad" { site_id = "not-a-uuid" }`,
				ExpectError: regexp.MustCompile(`(?s)with edgefleet_enrollment_token.bad,.*site_id.*400 BAD_REQUEST`)},
		},
	})
}
