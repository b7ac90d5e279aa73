package provider

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/edgefleet/edgefleet/infra/terraform/internal/client"
)

// Acceptance tests run against the real REST API of a running stack, with OpenTofu, when TF_ACC
// is set (scripts/test.sh sets it and everything below when the stack is up):
//
//	EDGEFLEET_ENDPOINT, EDGEFLEET_API_KEY        the console and an owner key of an organization made for the run
//	EDGEFLEET_TEST_VIEWER_KEY                    a viewer key of the same organization
//	EDGEFLEET_TEST_NODE_ID, EDGEFLEET_TEST_OTHER_NODE_ID  two nodes of it (tier=canary and tier=stable, fleet=tf)
//	EDGEFLEET_TEST_FOREIGN_SITE_ID               a site of another organization
//	TF_ACC_TERRAFORM_PATH, TF_ACC_PROVIDER_HOST, TF_ACC_PROVIDER_NAMESPACE  OpenTofu (see README)
var testProviders = map[string]func() (tfprotov6.ProviderServer, error){
	"edgefleet": providerserver.NewProtocol6WithError(New("test")()),
}

func testAccPreCheck(t *testing.T) {
	t.Helper()
	for _, name := range []string{"EDGEFLEET_ENDPOINT", "EDGEFLEET_API_KEY", "EDGEFLEET_TEST_VIEWER_KEY", "EDGEFLEET_TEST_NODE_ID", "EDGEFLEET_TEST_OTHER_NODE_ID", "EDGEFLEET_TEST_FOREIGN_SITE_ID"} {
		if os.Getenv(name) == "" {
			t.Fatalf("%s must be set for acceptance tests: run infra/terraform/scripts/test.sh with the stack up", name)
		}
	}
}

// testClient is the API as the tests' owner key sees it, for checks outside Terraform.
func testClient() *client.Client {
	return client.New(os.Getenv("EDGEFLEET_ENDPOINT"), os.Getenv("EDGEFLEET_API_KEY"), "terraform-provider-edgefleet/acceptance-test")
}

// unique gives every test its own names, so tests run in parallel and again on the same stack.
func unique(prefix string) string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return prefix + "-" + hex.EncodeToString(b)
}

// idOf reads a resource's id from the state.
func idOf(s *terraform.State, name string) (string, error) {
	rs, ok := s.RootModule().Resources[name]
	if !ok {
		return "", fmt.Errorf("%s not in the state", name)
	}
	return rs.Primary.ID, nil
}

// checkGone is a CheckDestroy: every resource of the type is gone according to `exists`.
func checkGone(resourceType string, exists func(ctx context.Context, c *client.Client, attrs map[string]string) (bool, error)) func(*terraform.State) error {
	return func(s *terraform.State) error {
		c := testClient()
		for _, rs := range s.RootModule().Resources {
			if rs.Type != resourceType {
				continue
			}
			still, err := exists(context.Background(), c, rs.Primary.Attributes)
			if err != nil {
				return err
			}
			if still {
				return fmt.Errorf("%s %s still exists after destroy", resourceType, rs.Primary.ID)
			}
		}
		return nil
	}
}

func mustEnv(t *testing.T, name string) string {
	t.Helper()
	value := os.Getenv(name)
	if value == "" && os.Getenv("TF_ACC") != "" {
		t.Fatalf("%s must be set", name)
	}
	return value
}

// captureID keeps a resource's id for a later step's PreConfig.
func captureID(name string, into *string) func(*terraform.State) error {
	return func(s *terraform.State) error {
		id, err := idOf(s, name)
		*into = id
		return err
	}
}
