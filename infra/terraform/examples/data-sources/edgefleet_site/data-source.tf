data "edgefleet_site" "plant7" {
  name = "plant-7"
}
