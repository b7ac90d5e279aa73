package provider

import (
	"fmt"
	"os"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
)

func TestAccDataSources(t *testing.T) {
	site := unique("ds-site")
	app := unique("ds-app")
	file, _ := artifactFile(t, "data source build")
	nodeID := os.Getenv("EDGEFLEET_TEST_NODE_ID")
	config := fmt.Sprintf(`
resource "edgefleet_site" "s" {
  name = %[1]q
}
resource "edgefleet_app" "a" {
  name = %[2]q
}
resource "edgefleet_app_version" "old" {
  app_id        = edgefleet_app.a.id
  version       = "1.0.0"
  command       = ["./a"]
  artifact_file = %[3]q
}
resource "edgefleet_app_version" "new" {
  app_id        = edgefleet_app.a.id
  version       = "1.1.0"
  command       = ["./a", "--new"]
  artifact_file = %[3]q
  depends_on    = [edgefleet_app_version.old]
}

data "edgefleet_organization" "this" {}
data "edgefleet_sites" "all" {
  depends_on = [edgefleet_site.s]
}
data "edgefleet_site" "by_name" {
  name       = %[1]q
  depends_on = [edgefleet_site.s]
}
data "edgefleet_node" "a" {
  id = %[4]q
}
data "edgefleet_nodes" "canaries" {
  selector = "tier=canary,fleet=tf"
}
data "edgefleet_app" "by_name" {
  name       = %[2]q
  depends_on = [edgefleet_app_version.old, edgefleet_app_version.new]
}
data "edgefleet_app_version" "latest" {
  app_id     = edgefleet_app.a.id
  depends_on = [edgefleet_app_version.new]
}
data "edgefleet_app_version" "by_label" {
  app_id     = edgefleet_app.a.id
  version    = "1.0.0"
  depends_on = [edgefleet_app_version.old]
}
`, site, app, file, nodeID)
	resource.ParallelTest(t, resource.TestCase{
		PreCheck:                 func() { testAccPreCheck(t) },
		ProtoV6ProviderFactories: testProviders,
		Steps: []resource.TestStep{
			{
				Config: config,
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr("data.edgefleet_organization.this", "slug", os.Getenv("EDGEFLEET_TEST_ORGANIZATION")),
					resource.TestCheckResourceAttr("data.edgefleet_organization.this", "role", "owner"),
					resource.TestCheckTypeSetElemNestedAttrs("data.edgefleet_sites.all", "sites.*", map[string]string{"name": site}),
					resource.TestCheckResourceAttrPair("data.edgefleet_site.by_name", "id", "edgefleet_site.s", "id"),
					resource.TestCheckResourceAttr("data.edgefleet_node.a", "name", "tf-node-a"),
					resource.TestCheckResourceAttr("data.edgefleet_node.a", "labels.tier", "canary"),
					resource.TestCheckResourceAttr("data.edgefleet_nodes.canaries", "ids.#", "1"),
					resource.TestCheckResourceAttr("data.edgefleet_nodes.canaries", "ids.0", nodeID),
					resource.TestCheckResourceAttr("data.edgefleet_nodes.canaries", "nodes.0.name", "tf-node-a"),
					resource.TestCheckResourceAttrPair("data.edgefleet_app.by_name", "id", "edgefleet_app.a", "id"),
					resource.TestCheckResourceAttr("data.edgefleet_app.by_name", "versions", "2"),
					resource.TestCheckResourceAttrPair("data.edgefleet_app_version.latest", "id", "edgefleet_app_version.new", "id"),
					resource.TestCheckResourceAttr("data.edgefleet_app_version.latest", "command.1", "--new"),
					resource.TestCheckResourceAttrPair("data.edgefleet_app_version.by_label", "id", "edgefleet_app_version.old", "id"),
				),
			},
			{Config: `data "edgefleet_nodes" "bad" { selector = "tier=" }`, PlanOnly: true,
				ExpectError: regexp.MustCompile(`Invalid label selector`)},
			{Config: `data "edgefleet_site" "none" { name = "no-such-site-here" }`,
				ExpectError: regexp.MustCompile(`no site named "no-such-site-here"`)},
		},
	})
}
