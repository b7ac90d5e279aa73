package client

import "encoding/json"

// The request and answer shapes the provider uses: a subset of each schema of the OpenAPI
// document. openapi_test.go checks every JSON field here exists in the document.

type Organization struct {
	ID   string `json:"id"`
	Slug string `json:"slug"`
	Name string `json:"name"`
	Role string `json:"role"`
}

type Site struct {
	ID          string  `json:"id"`
	Name        string  `json:"name"`
	Description *string `json:"description"`
	TimeZone    *string `json:"timeZone"`
	Total       int64   `json:"total"`
}

// SiteListItem is one row of GET /sites (the "no site" row has a null id).
type SiteListItem struct {
	ID          *string `json:"id"`
	Name        *string `json:"name"`
	Description *string `json:"description"`
	Total       int64   `json:"total"`
}

type SiteCreate struct {
	Name        string  `json:"name"`
	Description *string `json:"description,omitempty"`
	TimeZone    *string `json:"timeZone,omitempty"`
}

// SiteUpdate sends every field: null clears description and time zone.
type SiteUpdate struct {
	Name        string  `json:"name"`
	Description *string `json:"description"`
	TimeZone    *string `json:"timeZone"`
}

type SiteRef struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

type EnrollmentToken struct {
	ID               string            `json:"id"`
	Description      *string           `json:"description"`
	ExpiresAt        string            `json:"expiresAt"`
	MaxUses          *int64            `json:"maxUses"`
	Uses             int64             `json:"uses"`
	Labels           map[string]string `json:"labels"`
	RequiresApproval bool              `json:"requiresApproval"`
	Site             *SiteRef          `json:"site"`
	RevokedAt        *string           `json:"revokedAt"`
	CreatedAt        string            `json:"createdAt"`
	Usable           bool              `json:"usable"`
}

type CreatedEnrollmentToken struct {
	EnrollmentToken
	Token          string `json:"token"`
	InstallCommand string `json:"installCommand"`
}

type EnrollmentTokenCreate struct {
	Description      *string           `json:"description,omitempty"`
	ExpiresInHours   int64             `json:"expiresInHours"`
	MaxUses          *int64            `json:"maxUses,omitempty"`
	Labels           map[string]string `json:"labels"`
	RequiresApproval bool              `json:"requiresApproval"`
	SiteID           *string           `json:"siteId,omitempty"`
}

type APIKey struct {
	ID        string  `json:"id"`
	Name      string  `json:"name"`
	Prefix    string  `json:"prefix"`
	Role      string  `json:"role"`
	ExpiresAt *string `json:"expiresAt"`
	RevokedAt *string `json:"revokedAt"`
}

type CreatedAPIKey struct {
	APIKey
	Key string `json:"key"`
}

type APIKeyCreate struct {
	Name      string  `json:"name"`
	Role      string  `json:"role"`
	ExpiresAt *string `json:"expiresAt,omitempty"`
}

type Member struct {
	UserID  string  `json:"userId"`
	Email   string  `json:"email"`
	Name    *string `json:"name"`
	Role    string  `json:"role"`
	Pending bool    `json:"pending"`
}

type Handover struct {
	AccountCreated    bool    `json:"accountCreated"`
	TemporaryPassword *string `json:"temporaryPassword"`
}

type InvitedMember struct {
	Member
	Handover *Handover `json:"handover"`
}

type MemberInvite struct {
	Email string `json:"email"`
	Role  string `json:"role"`
}

type MemberRole struct {
	Role string `json:"role"`
}

type MemberList struct {
	Items []Member `json:"items"`
}

type Node struct {
	ID           string            `json:"id"`
	Name         string            `json:"name"`
	Site         *SiteRef          `json:"site"`
	Status       string            `json:"status"`
	Labels       map[string]string `json:"labels"`
	AgentVersion *string           `json:"agentVersion"`
	LastSeenAt   *string           `json:"lastSeenAt"`
}

type NodeSearch struct {
	Selector string  `json:"selector,omitempty"`
	Limit    int64   `json:"limit"`
	Cursor   *string `json:"cursor,omitempty"`
}

type NodeListItem struct {
	ID           string            `json:"id"`
	Name         string            `json:"name"`
	Status       string            `json:"status"`
	Labels       map[string]string `json:"labels"`
	AgentVersion *string           `json:"agentVersion"`
}

type NodePage struct {
	Items      []NodeListItem `json:"items"`
	NextCursor *string        `json:"nextCursor"`
}

type LabelTarget struct {
	IDs []string `json:"ids"`
}

type LabelChange struct {
	Target LabelTarget       `json:"target"`
	Add    map[string]string `json:"add"`
	Remove []string          `json:"remove"`
}

type LabelChangeResult struct {
	Updated int64 `json:"updated"`
}

type App struct {
	ID          string  `json:"id"`
	Name        string  `json:"name"`
	Description *string `json:"description"`
	Versions    int64   `json:"versions"`
}

type AppCreate struct {
	Name        string  `json:"name"`
	Description *string `json:"description,omitempty"`
}

type AppUpdate struct {
	Name        string  `json:"name"`
	Description *string `json:"description"`
}

type Health struct {
	Exec             []string `json:"exec,omitempty"`
	HTTP             *string  `json:"http,omitempty"`
	IntervalSeconds  *int64   `json:"intervalSeconds,omitempty"`
	TimeoutSeconds   *int64   `json:"timeoutSeconds,omitempty"`
	FailureThreshold *int64   `json:"failureThreshold,omitempty"`
}

type RunSpec struct {
	Command          []string          `json:"command"`
	Env              map[string]string `json:"env,omitempty"`
	Cwd              *string           `json:"cwd,omitempty"`
	Health           *Health           `json:"health,omitempty"`
	Restart          *string           `json:"restart,omitempty"`
	StopGraceSeconds *int64            `json:"stopGraceSeconds,omitempty"`
	RevertOnFailure  *bool             `json:"revertOnFailure,omitempty"`
}

type ArtifactSource struct {
	Source string  `json:"source"`
	URL    *string `json:"url,omitempty"`
	SHA256 *string `json:"sha256,omitempty"`
}

type Artifact struct {
	Source string  `json:"source"`
	URL    *string `json:"url"`
	SHA256 *string `json:"sha256"`
	Size   *int64  `json:"size"`
	State  string  `json:"state"`
	Error  *string `json:"error"`
}

type AppVersion struct {
	ID        string   `json:"id"`
	AppID     string   `json:"appId"`
	Version   string   `json:"version"`
	RunSpec   RunSpec  `json:"runSpec"`
	Artifact  Artifact `json:"artifact"`
	CreatedAt string   `json:"createdAt"`
}

type AppVersionCreate struct {
	Version  string         `json:"version"`
	RunSpec  RunSpec        `json:"runSpec"`
	Artifact ArtifactSource `json:"artifact"`
}

type AppVersionPage struct {
	Items      []AppVersion `json:"items"`
	NextCursor *string      `json:"nextCursor"`
}

type RolloutTarget struct {
	Selector string   `json:"selector"`
	SiteIDs  []string `json:"siteIds"`
}

type RolloutCreate struct {
	AppVersionID string          `json:"appVersionId"`
	Target       RolloutTarget   `json:"target"`
	Strategy     json.RawMessage `json:"strategy"`
}

// RolloutCreated is the answer of POST /rollouts (the strategy comes with GET /rollouts/{id}).
type RolloutCreated struct {
	ID     string `json:"id"`
	Status string `json:"status"`
}

type Rollout struct {
	ID           string          `json:"id"`
	AppID        string          `json:"appId"`
	AppVersionID string          `json:"appVersionId"`
	Version      string          `json:"version"`
	Target       RolloutTarget   `json:"target"`
	Status       string          `json:"status"`
	StatusReason *string         `json:"statusReason"`
	Strategy     json.RawMessage `json:"strategy"`
	FinishedAt   *string         `json:"finishedAt"`
}

type RolloutAction struct {
	Note string `json:"note,omitempty"`
}

type RolloutTransition struct {
	ID     string `json:"id"`
	Before string `json:"before"`
	Status string `json:"status"`
}

// AlertPolicySpec is the API's discriminated union (by kind) flattened: each kind sends only its
// own parameters, the others stay nil.
type AlertPolicySpec struct {
	Kind             string   `json:"kind"`
	ForMinutes       *int64   `json:"forMinutes,omitempty"`
	ThresholdPercent *float64 `json:"thresholdPercent,omitempty"`
	Restarts         *int64   `json:"restarts,omitempty"`
	WindowMinutes    *int64   `json:"windowMinutes,omitempty"`
	BudgetBytes      *int64   `json:"budgetBytes,omitempty"`
	Window           *string  `json:"window,omitempty"`
	Expr             *string  `json:"expr,omitempty"`
}

type AlertPolicy struct {
	ID       string          `json:"id"`
	Name     string          `json:"name"`
	Kind     string          `json:"kind"`
	Severity string          `json:"severity"`
	Spec     AlertPolicySpec `json:"spec"`
	Selector string          `json:"selector"`
	SiteID   *string         `json:"siteId"`
	SiteName *string         `json:"siteName"`
	Enabled  bool            `json:"enabled"`
}

type AlertPolicyCreate struct {
	Name     string          `json:"name"`
	Severity string          `json:"severity"`
	Spec     AlertPolicySpec `json:"spec"`
	Selector string          `json:"selector"`
	SiteID   *string         `json:"siteId"`
	Enabled  bool            `json:"enabled"`
}

// AlertPolicyUpdate sends every field: a null siteId widens the policy to every site.
type AlertPolicyUpdate AlertPolicyCreate
