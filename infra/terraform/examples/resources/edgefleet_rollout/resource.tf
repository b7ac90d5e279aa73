# Canary first, then a person approves, then the rest in two steps, at most 2 nodes per site at once.
resource "edgefleet_rollout" "sensor_1_4_2" {
  app_version_id = edgefleet_app_version.sensor_1_4_2.id
  selector       = "site=plant-7"
  strategy = jsonencode({
    batches = [
      { selector = "tier=canary", pauseAfter = "approval" },
      { percent = 50 },
      { percent = 100 },
    ]
    defaults         = { successThreshold = 95, timeoutSeconds = 900, offline = "skip" }
    disruptionBudget = { maxUpdatingPerSite = { count = 2 } }
    onBatchFailure   = "rollback"
  })
  wait_for_completion = false
  timeouts = {
    create = "1h"
  }
}
