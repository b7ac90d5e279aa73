data "edgefleet_sites" "all" {}

output "site_names" {
  value = data.edgefleet_sites.all.sites[*].name
}
