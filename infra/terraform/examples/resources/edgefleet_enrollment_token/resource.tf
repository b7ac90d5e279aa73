resource "edgefleet_enrollment_token" "plant7" {
  description       = "plant-7 gateways"
  site_id           = edgefleet_site.plant7.id
  expires_in_hours  = 72
  max_uses          = 20
  requires_approval = false
  labels = {
    tier = "canary"
  }
}

# Shown once: hand it to whoever installs the nodes.
output "install_command" {
  value     = edgefleet_enrollment_token.plant7.install_command
  sensitive = true
}
