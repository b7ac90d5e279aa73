# The newest version whose artifact is ready.
data "edgefleet_app_version" "latest" {
  app_id     = data.edgefleet_app.sensor.id
  ready_only = true
}

# A version by its label.
data "edgefleet_app_version" "pinned" {
  app_id  = data.edgefleet_app.sensor.id
  version = "1.4.2"
}
