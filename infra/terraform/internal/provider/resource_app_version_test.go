package provider

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/edgefleet/edgefleet/infra/terraform/internal/client"
)

// artifactFile writes a small artifact for upload and returns its path and SHA-256.
func artifactFile(t *testing.T, content string) (string, string) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "sensor.tar.gz")
	if err := os.WriteFile(file, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(content))
	return file, hex.EncodeToString(sum[:])
}

func appVersionConfig(app, version, file string) string {
	return fmt.Sprintf(`
resource "edgefleet_app" "sensor" {
  name = %q
}
resource "edgefleet_app_version" "v" {
  app_id        = edgefleet_app.sensor.id
  version       = %q
  command       = ["./sensor", "--interval", "10s"]
  env           = { MODE = "prod" }
  restart       = "on-failure"
  artifact_file = %q
  health = {
    exec             = ["./sensor", "--check"]
    interval_seconds = 5
  }
}
`, app, version, file)
}

func appVersionExists(ctx context.Context, c *client.Client, attrs map[string]string) (bool, error) {
	_, err := c.GetAppVersion(ctx, attrs["app_id"], attrs["id"])
	if client.IsNotFound(err) {
		return false, nil
	}
	return err == nil, err
}

func TestAccAppVersion(t *testing.T) {
	app := unique("sensor")
	file, sum := artifactFile(t, "sensor build 1")
	resource.ParallelTest(t, resource.TestCase{
		PreCheck:                 func() { testAccPreCheck(t) },
		ProtoV6ProviderFactories: testProviders,
		CheckDestroy:             checkGone("edgefleet_app_version", appVersionExists),
		Steps: []resource.TestStep{
			{
				Config: appVersionConfig(app, "1.0.0", file),
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr("edgefleet_app_version.v", "artifact_state", "ready"),
					resource.TestCheckResourceAttr("edgefleet_app_version.v", "artifact_sha256", sum),
					resource.TestCheckResourceAttr("edgefleet_app_version.v", "artifact_size", "14"),
					resource.TestCheckResourceAttr("edgefleet_app_version.v", "command.#", "3"),
					resource.TestCheckResourceAttr("edgefleet_app_version.v", "health.interval_seconds", "5"),
				),
			},
			{
				// Versions are immutable: a new label is a new version.
				Config: appVersionConfig(app, "1.0.1", file),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction("edgefleet_app_version.v", plancheck.ResourceActionDestroyBeforeCreate),
				}},
				Check: resource.TestCheckResourceAttr("edgefleet_app_version.v", "version", "1.0.1"),
			},
			{
				ResourceName: "edgefleet_app_version.v", ImportState: true, ImportStateVerify: true,
				ImportStateIdFunc: func(s *terraform.State) (string, error) {
					a := s.RootModule().Resources["edgefleet_app_version.v"].Primary.Attributes
					return a["app_id"] + "/" + a["id"], nil
				},
				// The local path is not known to the API.
				ImportStateVerifyIgnore: []string{"artifact_file"},
			},
		},
	})
}

func TestAccAppVersionBadInput(t *testing.T) {
	file, _ := artifactFile(t, "x")
	resource.ParallelTest(t, resource.TestCase{
		PreCheck:                 func() { testAccPreCheck(t) },
		ProtoV6ProviderFactories: testProviders,
		Steps: []resource.TestStep{
			{Config: fmt.Sprintf(`
resource "edgefleet_app_version" "v" {
  app_id        = "00000000-0000-4000-8000-000000000000"
  version       = "1.0.0"
  command       = ["./x"]
  artifact_file = %q
  artifact_url  = "https://example.com/x.tar.gz"
}`, file), PlanOnly: true, ExpectError: regexp.MustCompile(`(?s)Invalid Attribute Combination`)},
			{Config: fmt.Sprintf(`
resource "edgefleet_app_version" "v" {
  app_id        = "00000000-0000-4000-8000-000000000000"
  version       = "1.0.0"
  command       = ["./x"]
  artifact_file = %q
}`, file), ExpectError: regexp.MustCompile(`404 NOT_FOUND`)},
		},
	})
}
