data "edgefleet_nodes" "eu_canaries" {
  selector = "tier=canary,region in (eu-west,eu-north)"
}
