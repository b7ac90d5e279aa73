-- Keycloak keeps its own database beside Edgefleet's (as the local stack does).
CREATE DATABASE keycloak OWNER edgefleet;
