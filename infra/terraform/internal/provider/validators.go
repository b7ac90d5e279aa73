package provider

import "regexp"

// Patterns the API's schemas declare, checked at plan time so a bad value fails before apply.
var (
	siteNamePattern   = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9._-]{0,61}[A-Za-z0-9])?$`)
	appNamePattern    = regexp.MustCompile(`^[a-z0-9]([a-z0-9._-]{0,61}[a-z0-9])?$`)
	versionPattern    = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9.+_-]{0,63}$`)
	labelKeyPattern   = regexp.MustCompile(`^(?:[a-z0-9](?:[-a-z0-9.]{0,251}[a-z0-9])?/)?[A-Za-z0-9](?:[-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$`)
	labelValuePattern = regexp.MustCompile(`^[A-Za-z0-9](?:[-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$`)
	envNamePattern    = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	sha256Pattern     = regexp.MustCompile(`^[0-9a-f]{64}$`)
	uuidPattern       = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)
)

var roles = []string{"owner", "admin", "operator", "viewer"}

// Enrollment token labels are checked by their own, older pattern (schemas/enrollment.ts).
var tokenLabelKeyPattern = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9._/-]{0,61}[A-Za-z0-9])?$`)

// A plausible e-mail address; the API decides.
var emailPattern = regexp.MustCompile(`^[^@\s]+@[^@\s]+$`)

var httpsPattern = regexp.MustCompile(`^https://\S+$`)
