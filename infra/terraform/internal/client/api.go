package client

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
)

// Operation is one REST operation the provider calls, with the Go shapes it sends and reads.
// openapi_test.go checks each against the OpenAPI document, so API drift fails a test.
type Operation struct {
	Method   string
	Path     string
	Request  any
	Response any
}

// Operations lists every operation this package calls.
var Operations = []Operation{
	{http.MethodGet, "/organization", nil, Organization{}},
	{http.MethodGet, "/sites", nil, []SiteListItem{}},
	{http.MethodPost, "/sites", SiteCreate{}, Site{}},
	{http.MethodGet, "/sites/{id}", nil, Site{}},
	{http.MethodPatch, "/sites/{id}", SiteUpdate{}, Site{}},
	{http.MethodDelete, "/sites/{id}", nil, Site{}},
	{http.MethodPost, "/enrollment-tokens", EnrollmentTokenCreate{}, CreatedEnrollmentToken{}},
	{http.MethodGet, "/enrollment-tokens/{id}", nil, EnrollmentToken{}},
	{http.MethodPost, "/enrollment-tokens/{id}/revoke", nil, EnrollmentToken{}},
	{http.MethodPost, "/api-keys", APIKeyCreate{}, CreatedAPIKey{}},
	{http.MethodGet, "/api-keys/{id}", nil, APIKey{}},
	{http.MethodPost, "/api-keys/{id}/revoke", nil, APIKey{}},
	{http.MethodGet, "/members", nil, MemberList{}},
	{http.MethodPost, "/members", MemberInvite{}, InvitedMember{}},
	{http.MethodGet, "/members/{userId}", nil, Member{}},
	{http.MethodPost, "/members/{userId}/role", MemberRole{}, Member{}},
	{http.MethodDelete, "/members/{userId}", nil, Member{}},
	{http.MethodGet, "/nodes/{id}", nil, Node{}},
	{http.MethodPost, "/nodes/search", NodeSearch{}, NodePage{}},
	{http.MethodPost, "/nodes/labels", LabelChange{}, LabelChangeResult{}},
	{http.MethodGet, "/apps", nil, []App{}},
	{http.MethodPost, "/apps", AppCreate{}, App{}},
	{http.MethodGet, "/apps/{id}", nil, App{}},
	{http.MethodPatch, "/apps/{id}", AppUpdate{}, App{}},
	{http.MethodDelete, "/apps/{id}", nil, App{}},
	{http.MethodGet, "/apps/{appId}/versions", nil, AppVersionPage{}},
	{http.MethodPost, "/apps/{appId}/versions", AppVersionCreate{}, AppVersion{}},
	{http.MethodGet, "/apps/{appId}/versions/{id}", nil, AppVersion{}},
	{http.MethodDelete, "/apps/{appId}/versions/{id}", nil, AppVersion{}},
	{http.MethodPut, "/apps/{appId}/versions/{versionId}/artifact", nil, AppVersion{}},
	{http.MethodPost, "/rollouts", RolloutCreate{}, RolloutCreated{}},
	{http.MethodGet, "/rollouts/{id}", nil, Rollout{}},
	{http.MethodPost, "/rollouts/{id}/start", RolloutAction{}, RolloutTransition{}},
	{http.MethodPost, "/rollouts/{id}/abort", RolloutAction{}, RolloutTransition{}},
	{http.MethodPost, "/alert-policies", AlertPolicyCreate{}, AlertPolicy{}},
	{http.MethodGet, "/alert-policies/{id}", nil, AlertPolicy{}},
	{http.MethodPatch, "/alert-policies/{id}", AlertPolicyUpdate{}, AlertPolicy{}},
	{http.MethodDelete, "/alert-policies/{id}", nil, AlertPolicy{}},
}

func (c *Client) Organization(ctx context.Context) (*Organization, error) {
	return get[Organization](ctx, c, "/organization", nil)
}

func (c *Client) ListSites(ctx context.Context) ([]SiteListItem, error) {
	out, err := get[[]SiteListItem](ctx, c, "/sites", nil)
	if err != nil {
		return nil, err
	}
	return *out, nil
}

func (c *Client) CreateSite(ctx context.Context, in SiteCreate) (*Site, error) {
	return call[Site](ctx, c, http.MethodPost, "/sites", in)
}

func (c *Client) GetSite(ctx context.Context, id string) (*Site, error) {
	return get[Site](ctx, c, "/sites/"+esc(id), nil)
}

func (c *Client) UpdateSite(ctx context.Context, id string, in SiteUpdate) (*Site, error) {
	return call[Site](ctx, c, http.MethodPatch, "/sites/"+esc(id), in)
}

func (c *Client) DeleteSite(ctx context.Context, id string) error {
	return c.Do(ctx, http.MethodDelete, "/sites/"+esc(id), nil, nil, nil)
}

func (c *Client) CreateEnrollmentToken(ctx context.Context, in EnrollmentTokenCreate) (*CreatedEnrollmentToken, error) {
	return call[CreatedEnrollmentToken](ctx, c, http.MethodPost, "/enrollment-tokens", in)
}

func (c *Client) GetEnrollmentToken(ctx context.Context, id string) (*EnrollmentToken, error) {
	return get[EnrollmentToken](ctx, c, "/enrollment-tokens/"+esc(id), nil)
}

func (c *Client) RevokeEnrollmentToken(ctx context.Context, id string) error {
	return c.Do(ctx, http.MethodPost, "/enrollment-tokens/"+esc(id)+"/revoke", nil, struct{}{}, nil)
}

func (c *Client) CreateAPIKey(ctx context.Context, in APIKeyCreate) (*CreatedAPIKey, error) {
	return call[CreatedAPIKey](ctx, c, http.MethodPost, "/api-keys", in)
}

func (c *Client) GetAPIKey(ctx context.Context, id string) (*APIKey, error) {
	return get[APIKey](ctx, c, "/api-keys/"+esc(id), nil)
}

func (c *Client) RevokeAPIKey(ctx context.Context, id string) error {
	return c.Do(ctx, http.MethodPost, "/api-keys/"+esc(id)+"/revoke", nil, struct{}{}, nil)
}

func (c *Client) ListMembers(ctx context.Context) ([]Member, error) {
	out, err := get[MemberList](ctx, c, "/members", nil)
	if err != nil {
		return nil, err
	}
	return out.Items, nil
}

func (c *Client) InviteMember(ctx context.Context, in MemberInvite) (*InvitedMember, error) {
	return call[InvitedMember](ctx, c, http.MethodPost, "/members", in)
}

func (c *Client) GetMember(ctx context.Context, userID string) (*Member, error) {
	return get[Member](ctx, c, "/members/"+esc(userID), nil)
}

func (c *Client) SetMemberRole(ctx context.Context, userID, role string) (*Member, error) {
	return call[Member](ctx, c, http.MethodPost, "/members/"+esc(userID)+"/role", MemberRole{Role: role})
}

func (c *Client) RemoveMember(ctx context.Context, userID string) error {
	return c.Do(ctx, http.MethodDelete, "/members/"+esc(userID), nil, nil, nil)
}

func (c *Client) GetNode(ctx context.Context, id string) (*Node, error) {
	return get[Node](ctx, c, "/nodes/"+esc(id), nil)
}

// SearchNodes returns every node matching the selector (all pages), at most max (0: no limit).
func (c *Client) SearchNodes(ctx context.Context, selector string, max int) ([]NodeListItem, error) {
	var all []NodeListItem
	in := NodeSearch{Selector: selector, Limit: 200}
	for {
		page, err := call[NodePage](ctx, c, http.MethodPost, "/nodes/search", in)
		if err != nil {
			return nil, err
		}
		all = append(all, page.Items...)
		if page.NextCursor == nil || (max > 0 && len(all) >= max) {
			break
		}
		in.Cursor = page.NextCursor
	}
	if max > 0 && len(all) > max {
		all = all[:max]
	}
	return all, nil
}

// ChangeNodeLabels adds and removes labels of one node in one request.
func (c *Client) ChangeNodeLabels(ctx context.Context, nodeID string, add map[string]string, remove []string) error {
	if add == nil {
		add = map[string]string{}
	}
	if remove == nil {
		remove = []string{}
	}
	_, err := call[LabelChangeResult](ctx, c, http.MethodPost, "/nodes/labels",
		LabelChange{Target: LabelTarget{IDs: []string{nodeID}}, Add: add, Remove: remove})
	return err
}

func (c *Client) ListApps(ctx context.Context) ([]App, error) {
	out, err := get[[]App](ctx, c, "/apps", nil)
	if err != nil {
		return nil, err
	}
	return *out, nil
}

func (c *Client) CreateApp(ctx context.Context, in AppCreate) (*App, error) {
	return call[App](ctx, c, http.MethodPost, "/apps", in)
}

func (c *Client) GetApp(ctx context.Context, id string) (*App, error) {
	return get[App](ctx, c, "/apps/"+esc(id), nil)
}

func (c *Client) UpdateApp(ctx context.Context, id string, in AppUpdate) (*App, error) {
	return call[App](ctx, c, http.MethodPatch, "/apps/"+esc(id), in)
}

func (c *Client) DeleteApp(ctx context.Context, id string) error {
	return c.Do(ctx, http.MethodDelete, "/apps/"+esc(id), nil, nil, nil)
}

// ListAppVersions returns every version of an app, newest first.
func (c *Client) ListAppVersions(ctx context.Context, appID string) ([]AppVersion, error) {
	var all []AppVersion
	query := url.Values{"limit": {strconv.Itoa(200)}}
	for {
		page, err := get[AppVersionPage](ctx, c, "/apps/"+esc(appID)+"/versions", query)
		if err != nil {
			return nil, err
		}
		all = append(all, page.Items...)
		if page.NextCursor == nil {
			return all, nil
		}
		query.Set("cursor", *page.NextCursor)
	}
}

func (c *Client) CreateAppVersion(ctx context.Context, appID string, in AppVersionCreate) (*AppVersion, error) {
	return call[AppVersion](ctx, c, http.MethodPost, "/apps/"+esc(appID)+"/versions", in)
}

func (c *Client) GetAppVersion(ctx context.Context, appID, id string) (*AppVersion, error) {
	return get[AppVersion](ctx, c, "/apps/"+esc(appID)+"/versions/"+esc(id), nil)
}

func (c *Client) DeleteAppVersion(ctx context.Context, appID, id string) error {
	return c.Do(ctx, http.MethodDelete, "/apps/"+esc(appID)+"/versions/"+esc(id), nil, nil, nil)
}

// UploadArtifact sends a pending upload version's artifact bytes.
func (c *Client) UploadArtifact(ctx context.Context, appID, id string, content []byte) (*AppVersion, error) {
	var out AppVersion
	if err := c.Upload(ctx, "/apps/"+esc(appID)+"/versions/"+esc(id)+"/artifact", content, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

func (c *Client) CreateRollout(ctx context.Context, in RolloutCreate) (*RolloutCreated, error) {
	return call[RolloutCreated](ctx, c, http.MethodPost, "/rollouts", in)
}

func (c *Client) GetRollout(ctx context.Context, id string) (*Rollout, error) {
	return get[Rollout](ctx, c, "/rollouts/"+esc(id), nil)
}

func (c *Client) StartRollout(ctx context.Context, id string) (*RolloutTransition, error) {
	return call[RolloutTransition](ctx, c, http.MethodPost, "/rollouts/"+esc(id)+"/start", RolloutAction{Note: "terraform"})
}

func (c *Client) AbortRollout(ctx context.Context, id string, note string) (*RolloutTransition, error) {
	return call[RolloutTransition](ctx, c, http.MethodPost, "/rollouts/"+esc(id)+"/abort", RolloutAction{Note: note})
}

func (c *Client) CreateAlertPolicy(ctx context.Context, in AlertPolicyCreate) (*AlertPolicy, error) {
	return call[AlertPolicy](ctx, c, http.MethodPost, "/alert-policies", in)
}

func (c *Client) GetAlertPolicy(ctx context.Context, id string) (*AlertPolicy, error) {
	return get[AlertPolicy](ctx, c, "/alert-policies/"+esc(id), nil)
}

func (c *Client) UpdateAlertPolicy(ctx context.Context, id string, in AlertPolicyUpdate) (*AlertPolicy, error) {
	return call[AlertPolicy](ctx, c, http.MethodPatch, "/alert-policies/"+esc(id), in)
}

func (c *Client) DeleteAlertPolicy(ctx context.Context, id string) error {
	return c.Do(ctx, http.MethodDelete, "/alert-policies/"+esc(id), nil, nil, nil)
}

// RolloutFinished says whether a rollout's status is final (nothing more will happen by itself).
func RolloutFinished(status string) bool {
	switch status {
	case "completed", "rolled_back", "cancelled":
		return true
	}
	return false
}
