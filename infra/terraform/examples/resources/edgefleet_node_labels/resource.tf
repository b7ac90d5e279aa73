data "edgefleet_nodes" "plant7" {
  selector = "site=plant-7"
}

# Every node of plant-7 is in ring 1; labels set elsewhere on these nodes are removed.
resource "edgefleet_node_labels" "plant7" {
  for_each = toset(data.edgefleet_nodes.plant7.ids)
  node_id  = each.value
  labels = {
    site = "plant-7"
    ring = "r1"
  }
}
