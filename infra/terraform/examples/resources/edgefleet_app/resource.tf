resource "edgefleet_app" "sensor" {
  name        = "sensor-reader"
  description = "Reads the line sensors and publishes them"
}
