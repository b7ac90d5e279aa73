tofu import edgefleet_app_version.sensor_1_4_2 <app id>/<version id>
