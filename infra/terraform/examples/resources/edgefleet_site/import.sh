tofu import edgefleet_site.plant7 <site id>
