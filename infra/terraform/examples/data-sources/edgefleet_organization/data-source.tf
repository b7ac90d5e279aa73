data "edgefleet_organization" "this" {}

output "organization" {
  value = "${data.edgefleet_organization.this.name} (${data.edgefleet_organization.this.role})"
}
