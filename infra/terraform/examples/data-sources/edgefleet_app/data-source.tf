data "edgefleet_app" "sensor" {
  name = "sensor-reader"
}
