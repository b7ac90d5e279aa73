/** Reported in EnrollRequest and Hello; bump with the package version. */
export const AGENT_VERSION = "0.1.0";
