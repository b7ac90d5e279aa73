package client

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

// capture is a test server that records one request and answers with body.
func capture(t *testing.T, status int, body string) (*Client, *http.Request, *[]byte) {
	t.Helper()
	var got http.Request
	sent := &[]byte{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = *r
		*sent, _ = io.ReadAll(r.Body)
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return New(srv.URL, "efk_test", "test"), &got, sent
}

const policyAnswer = `{"id":"p1","name":"hot","kind":"cpu_above","severity":"warning",
"spec":{"kind":"cpu_above","thresholdPercent":92.5,"forMinutes":5},"selector":"tier=canary",
"siteId":"s1","siteName":"plant-7","enabled":true,"createdAt":"2026-01-01T00:00:00.000Z","updatedAt":"2026-01-01T00:00:00.000Z"}`

func TestCreateAlertPolicySendsOnlyTheKindsParameters(t *testing.T) {
	c, req, sent := capture(t, 200, policyAnswer)
	five, pct := int64(5), 92.5
	p, err := c.CreateAlertPolicy(context.Background(), AlertPolicyCreate{
		Name: "hot", Severity: "warning", Selector: "tier=canary", Enabled: true,
		Spec: AlertPolicySpec{Kind: "cpu_above", ThresholdPercent: &pct, ForMinutes: &five},
	})
	if err != nil {
		t.Fatal(err)
	}
	if req.Method != http.MethodPost || req.URL.Path != "/api/v1/alert-policies" {
		t.Fatalf("%s %s", req.Method, req.URL.Path)
	}
	var body map[string]any
	if err := json.Unmarshal(*sent, &body); err != nil {
		t.Fatal(err)
	}
	spec := body["spec"].(map[string]any)
	if len(spec) != 3 || spec["kind"] != "cpu_above" || spec["thresholdPercent"] != 92.5 || spec["forMinutes"] != float64(5) {
		t.Fatalf("spec sent %v: only kind and the kind's parameters", spec)
	}
	if v, ok := body["siteId"]; !ok || v != nil {
		t.Fatalf("siteId sent %v, want an explicit null", v)
	}
	if p.Spec.ThresholdPercent == nil || *p.Spec.ThresholdPercent != 92.5 || deref(p.SiteID) != "s1" || p.Spec.Expr != nil {
		t.Fatalf("read %+v", p)
	}
}

func TestUpdateAlertPolicyPatchesByIDWithANullSiteToWiden(t *testing.T) {
	c, req, sent := capture(t, 200, policyAnswer)
	if _, err := c.UpdateAlertPolicy(context.Background(), "p/1", AlertPolicyUpdate{
		Name: "hot", Severity: "critical", Spec: AlertPolicySpec{Kind: "rollout_failed"},
	}); err != nil {
		t.Fatal(err)
	}
	if req.Method != http.MethodPatch || req.URL.EscapedPath() != "/api/v1/alert-policies/p%2F1" {
		t.Fatalf("%s %s", req.Method, req.URL.EscapedPath())
	}
	var body map[string]any
	_ = json.Unmarshal(*sent, &body)
	if body["siteId"] != nil || body["severity"] != "critical" || len(body["spec"].(map[string]any)) != 1 {
		t.Fatalf("sent %s", *sent)
	}
}

func TestGetAlertPolicy404IsNotFound(t *testing.T) {
	c, _, _ := capture(t, 404, `{"code":"NOT_FOUND","message":"alert policy x not found"}`)
	if _, err := c.GetAlertPolicy(context.Background(), "x"); !IsNotFound(err) {
		t.Fatalf("err %v", err)
	}
	if err := c.DeleteAlertPolicy(context.Background(), "x"); !IsNotFound(err) {
		t.Fatalf("err %v", err)
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
