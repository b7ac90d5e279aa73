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

func siteConfig(name, description, timeZone string) string {
	tz := ""
	if timeZone != "" {
		tz = fmt.Sprintf("time_zone = %q", timeZone)
	}
	return fmt.Sprintf(`
resource "edgefleet_site" "plant" {
  name        = %q
  description = %q
  %s
}
`, name, description, tz)
}

func siteExists(ctx context.Context, c *client.Client, attrs map[string]string) (bool, error) {
	_, err := c.GetSite(ctx, attrs["id"])
	if client.IsNotFound(err) {
		return false, nil
	}
	return err == nil, err
}

func TestAccSite(t *testing.T) {
	name := unique("plant")
	resource.ParallelTest(t, resource.TestCase{
		PreCheck:                 func() { testAccPreCheck(t) },
		ProtoV6ProviderFactories: testProviders,
		CheckDestroy:             checkGone("edgefleet_site", siteExists),
		Steps: []resource.TestStep{
			{
				Config: siteConfig(name, "first plant", ""),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr("edgefleet_site.plant", "name", name),
					resource.TestCheckResourceAttr("edgefleet_site.plant", "description", "first plant"),
					resource.TestCheckNoResourceAttr("edgefleet_site.plant", "time_zone"),
					resource.TestMatchResourceAttr("edgefleet_site.plant", "id", regexp.MustCompile(`^[0-9a-f-]{36}$`)),
				),
			},
			{
				// Renamed and described in place: the same site.
				Config: siteConfig(name+"-b", "renamed", "Europe/Berlin"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("edgefleet_site.plant", plancheck.ResourceActionUpdate),
				}},
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr("edgefleet_site.plant", "name", name+"-b"),
					resource.TestCheckResourceAttr("edgefleet_site.plant", "time_zone", "Europe/Berlin"),
					func(s *terraform.State) error {
						id, err := idOf(s, "edgefleet_site.plant")
						if err != nil {
							return err
						}
						site, err := testClient().GetSite(context.Background(), id)
						if err != nil {
							return err
						}
						if site.Name != name+"-b" || deref(site.Description) != "renamed" {
							return fmt.Errorf("the API has %+v", site)
						}
						return nil
					},
				),
			},
			{ResourceName: "edgefleet_site.plant", ImportState: true, ImportStateVerify: true},
			{
				// Deleted outside Terraform: planned for re-creation, not an error.
				PreConfig: func() {
					sites, _ := testClient().ListSites(context.Background())
					for _, s := range sites {
						if deref(s.Name) == name+"-b" {
							if err := testClient().DeleteSite(context.Background(), *s.ID); err != nil {
								t.Fatal(err)
							}
						}
					}
				},
				Config:             siteConfig(name+"-b", "renamed", "Europe/Berlin"),
				PlanOnly:           true,
				ExpectNonEmptyPlan: true,
			},
		},
	})
}

func TestAccSiteBadInput(t *testing.T) {
	name := unique("dup")
	resource.ParallelTest(t, resource.TestCase{
		PreCheck:                 func() { testAccPreCheck(t) },
		ProtoV6ProviderFactories: testProviders,
		Steps: []resource.TestStep{
			// An API key without the role gets the API's refusal.
			{
				Config: fmt.Sprintf(`
provider "edgefleet" {
  api_key = %q
}
resource "edgefleet_site" "refused" {
  name = %q
}
`, mustEnv(t, "EDGEFLEET_TEST_VIEWER_KEY"), unique("refused")),
				ExpectError: regexp.MustCompile(`403 FORBIDDEN`),
			},
			// The schema says so at plan time.
			{Config: siteConfig("not a name!", "", ""), PlanOnly: true, ExpectError: regexp.MustCompile(`(?s)Invalid Attribute Value Match.*name`)},
			// Only the API can say so: its error text, at apply.
			{
				Config: siteConfig(name, "one", "") + fmt.Sprintf(`
resource "edgefleet_site" "twin" {
  name       = %q
  depends_on = [edgefleet_site.plant]
}
`, name),
				ExpectError: regexp.MustCompile(`(?s)Could not create the site.*409 CONFLICT`),
			},
		},
	})
}
