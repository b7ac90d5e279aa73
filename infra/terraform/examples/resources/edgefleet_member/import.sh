# By user id or by e-mail.
tofu import edgefleet_member.oncall oncall@example.com
