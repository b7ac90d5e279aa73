# A plant as code: a site, an enrollment token for its nodes, their labels, an app with a
# version uploaded from here, a staged rollout of it, and alert policies for the site.
# Works against `./edgefleet up`:
#   export EDGEFLEET_ENDPOINT=http://127.0.0.1:3000 EDGEFLEET_API_KEY=efk_…   (an admin or owner key)
#   tofu apply
# The rollout is planned once nodes of the site have enrolled (run the token's install command on
# them, or the hollow agents), because a rollout needs a target.

variable "artifact" {
  description = "The app's build to deploy (any file: the agent unpacks .tar.gz, runs the rest as is)"
  type        = string
  default     = "sensor-reader.tar.gz"
}

resource "edgefleet_site" "plant7" {
  name        = "plant-7"
  description = "Bottling line, Hall 2"
  time_zone   = "Europe/Berlin"
}

resource "edgefleet_enrollment_token" "plant7" {
  description      = "plant-7 gateways"
  site_id          = edgefleet_site.plant7.id
  expires_in_hours = 72
  labels           = { role = "gateway" }
}

# Nodes enroll themselves with the token; Terraform labels them, authoritatively.
data "edgefleet_nodes" "plant7" {
  selector = "site=plant-7"
}

resource "edgefleet_node_labels" "plant7" {
  for_each = { for i, id in data.edgefleet_nodes.plant7.ids : id => i }
  node_id  = each.key
  labels = {
    site = "plant-7"
    role = "gateway"
    # The first node of the site is the canary.
    tier = each.value == 0 ? "canary" : "stable"
  }
}

resource "edgefleet_app" "sensor" {
  name        = "sensor-reader"
  description = "Reads the line sensors and publishes them"
}

resource "edgefleet_app_version" "sensor" {
  app_id          = edgefleet_app.sensor.id
  version         = "1.0.0"
  command         = ["./sensor-reader", "--interval", "10s"]
  restart         = "on-failure"
  artifact_file   = var.artifact
  artifact_sha256 = filesha256(var.artifact)
}

# Canary first, a person approves in the console, then the rest in two steps.
resource "edgefleet_rollout" "sensor" {
  count          = length(data.edgefleet_nodes.plant7.ids) > 0 ? 1 : 0
  app_version_id = edgefleet_app_version.sensor.id
  selector       = "site=plant-7"
  strategy = jsonencode({
    batches = [
      { selector = "tier=canary", pauseAfter = "approval" },
      { percent = 50 },
      { percent = 100 },
    ]
    onBatchFailure = "rollback"
  })
  depends_on = [edgefleet_node_labels.plant7]
}

# Alerts: plant-7 offline for 5 minutes wakes someone; a failed rollout there too.
resource "edgefleet_alert_policy" "plant7_offline" {
  name        = "plant-7 offline"
  kind        = "site_offline"
  severity    = "critical"
  for_minutes = 5
  site_id     = edgefleet_site.plant7.id
}

resource "edgefleet_alert_policy" "plant7_rollout_failed" {
  name     = "plant-7 rollout failed"
  kind     = "rollout_failed"
  severity = "critical"
  site_id  = edgefleet_site.plant7.id
}

output "install_command" {
  description = "Run on each node of plant-7 to enroll it"
  value       = edgefleet_enrollment_token.plant7.install_command
  sensitive   = true
}
