tofu import edgefleet_app.sensor <app id>
