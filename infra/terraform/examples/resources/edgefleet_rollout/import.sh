tofu import edgefleet_rollout.sensor_1_4_2 <rollout id>
