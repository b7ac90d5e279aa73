package provider

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/edgefleet/edgefleet/infra/terraform/internal/client"
)

func memberConfig(email, role string) string {
	return fmt.Sprintf(`
resource "edgefleet_member" "ops" {
  email = %q
  role  = %q
}
`, email, role)
}

func memberExists(ctx context.Context, c *client.Client, attrs map[string]string) (bool, error) {
	_, err := c.GetMember(ctx, attrs["id"])
	if client.IsNotFound(err) {
		return false, nil
	}
	return err == nil, err
}

func TestAccMember(t *testing.T) {
	email := unique("ops") + "@terraform.example"
	resource.ParallelTest(t, resource.TestCase{
		PreCheck:                 func() { testAccPreCheck(t) },
		ProtoV6ProviderFactories: testProviders,
		CheckDestroy:             checkGone("edgefleet_member", memberExists),
		Steps: []resource.TestStep{
			{
				Config: memberConfig(email, "viewer"),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr("edgefleet_member.ops", "role", "viewer"),
					resource.TestCheckResourceAttr("edgefleet_member.ops", "pending", "true"),
				),
			},
			{
				// The role changes in place: the same membership.
				Config: memberConfig(email, "operator"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("edgefleet_member.ops", plancheck.ResourceActionUpdate),
				}},
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr("edgefleet_member.ops", "role", "operator"),
					func(s *terraform.State) error {
						id, _ := idOf(s, "edgefleet_member.ops")
						member, err := testClient().GetMember(context.Background(), id)
						if err != nil || member.Role != "operator" {
							return fmt.Errorf("the API has %+v (%v)", member, err)
						}
						return nil
					},
				),
			},
			{ResourceName: "edgefleet_member.ops", ImportState: true, ImportStateVerify: true, ImportStateVerifyIgnore: []string{"temporary_password"}},
			// Imported by e-mail, in any case.
			{ResourceName: "edgefleet_member.ops", ImportState: true, ImportStateId: strings.ToUpper(email), ImportStateVerify: true,
				ImportStateVerifyIgnore: []string{"temporary_password", "email"}},
		},
	})
}
