resource "edgefleet_member" "oncall" {
  email = "oncall@example.com"
  role  = "operator"
}
