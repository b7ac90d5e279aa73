resource "edgefleet_api_key" "ci" {
  name       = "ci-deployments"
  role       = "operator"
  expires_at = "2027-01-01T00:00:00Z"
}
