# The secret (token, install_command) is not readable after import.
tofu import edgefleet_enrollment_token.plant7 <token id>
