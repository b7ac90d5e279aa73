# A preset: the canary nodes of plant-7 above 90 % CPU for 5 minutes.
resource "edgefleet_alert_policy" "canary_cpu" {
  name              = "plant-7 canary CPU"
  kind              = "cpu_above"
  severity          = "warning"
  threshold_percent = 90
  for_minutes       = 5
  selector          = "tier=canary"
  site_id           = edgefleet_site.plant7.id
}

# A rollout event, for one site.
resource "edgefleet_alert_policy" "rollout_failed" {
  name     = "plant-7 rollout failed"
  kind     = "rollout_failed"
  severity = "critical"
  site_id  = edgefleet_site.plant7.id
}

# Advanced: PromQL (checked by Mimir's parser on apply); the expression is its scope.
resource "edgefleet_alert_policy" "restarts" {
  name        = "restarting apps"
  kind        = "promql"
  severity    = "info"
  for_minutes = 10
  expr        = <<-EOT
    sum by (node, app) (increase(edgefleet_app_restarts_total[15m])) > 3
  EOT
}
