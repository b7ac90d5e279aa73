tofu import edgefleet_node_labels.gateway <node id>
