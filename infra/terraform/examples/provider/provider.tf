# The endpoint and key can also come from EDGEFLEET_ENDPOINT and EDGEFLEET_API_KEY.
provider "edgefleet" {
  endpoint = "http://127.0.0.1:3000"
  api_key  = var.edgefleet_api_key
}

variable "edgefleet_api_key" {
  type      = string
  sensitive = true
}
