tofu import edgefleet_alert_policy.canary_cpu <alert policy id>
