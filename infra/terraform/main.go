// Command terraform-provider-edgefleet is Edgefleet's Terraform (and OpenTofu) provider.
package main

import (
	"context"
	"flag"
	"log"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"

	"github.com/edgefleet/edgefleet/infra/terraform/internal/provider"
)

// version is set by the build (scripts/build.sh) from VERSION.
var version = "dev"

func main() {
	var debug bool
	flag.BoolVar(&debug, "debug", false, "run with support for debuggers like delve")
	flag.Parse()
	err := providerserver.Serve(context.Background(), provider.New(version), providerserver.ServeOpts{
		Address: "registry.terraform.io/edgefleet/edgefleet",
		Debug:   debug,
	})
	if err != nil {
		log.Fatal(err)
	}
}
