resource "edgefleet_site" "plant7" {
  name        = "plant-7"
  description = "Bottling line, Hall 2"
  time_zone   = "Europe/Berlin"
}
