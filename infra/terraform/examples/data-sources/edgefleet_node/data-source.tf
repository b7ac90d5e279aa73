data "edgefleet_node" "gateway" {
  id = "01a2117c-dd42-725b-a786-6dffe50ed972"
}
