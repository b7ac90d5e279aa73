resource "edgefleet_app_version" "sensor_1_4_2" {
  app_id  = edgefleet_app.sensor.id
  version = "1.4.2"
  command = ["./sensor-reader", "--interval", "10s"]
  env = {
    LOG_LEVEL = "info"
  }
  restart = "on-failure"
  health = {
    exec             = ["./sensor-reader", "--check"]
    interval_seconds = 10
  }
  # Uploaded from here; a changed file makes a new version (its hash changes).
  artifact_file   = "${path.module}/dist/sensor-reader-1.4.2.tar.gz"
  artifact_sha256 = filesha256("${path.module}/dist/sensor-reader-1.4.2.tar.gz")
}
