# The key itself is not readable after import.
tofu import edgefleet_api_key.ci <key id>
