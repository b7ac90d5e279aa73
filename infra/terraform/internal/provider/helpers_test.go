package provider

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"

	"github.com/edgefleet/edgefleet/infra/terraform/internal/client"
)

func TestAPIIssuesLandOnTheAttributeTheyPointAt(t *testing.T) {
	err := &client.APIError{Status: 400, Code: "BAD_REQUEST", Message: "invalid input", Issues: []client.Issue{
		{Message: "Invalid UUID", Path: []any{"siteId"}},
		{Message: "too small", Path: []any{"runSpec", "command", float64(0)}},
		{Message: "unknown", Path: []any{"somethingElse"}},
	}}
	var diags diag.Diagnostics
	addAPIError(&diags, "Could not create", err, map[string]bool{"site_id": true, "command": true}, map[string]string{"runSpec": "command"})
	if len(diags) != 3 {
		t.Fatalf("diagnostics %v", diags)
	}
	want := []path.Path{path.Root("site_id"), path.Root("command")}
	for i, p := range want {
		withPath, ok := diags[i].(diag.DiagnosticWithPath)
		if !ok || !withPath.Path().Equal(p) {
			t.Errorf("diagnostic %d: %v, want at %s", i, diags[i], p)
		}
	}
	if _, ok := diags[2].(diag.DiagnosticWithPath); ok {
		t.Error("an issue at an unknown field is a plain error")
	}
	if !strings.Contains(diags[1].Detail(), `"runSpec.command.0"`) {
		t.Errorf("the detail names the API's path: %s", diags[1].Detail())
	}
	// Errors without issues (409, 403, network) keep their text.
	var plain diag.Diagnostics
	addAPIError(&plain, "Could not create", fmt.Errorf("boom"), nil, nil)
	if len(plain) != 1 || plain[0].Detail() != "boom" {
		t.Fatalf("plain %v", plain)
	}
}

func TestANestedAPIFieldLandsOnItsFlatAttribute(t *testing.T) {
	err := &client.APIError{Status: 400, Code: "BAD_REQUEST", Message: "invalid input", Issues: []client.Issue{
		{Message: "PromQL does not parse", Path: []any{"spec", "expr"}},
	}}
	var diags diag.Diagnostics
	addAPIError(&diags, "Could not create", err, map[string]bool{"expr": true}, map[string]string{"spec.expr": "expr"})
	withPath, ok := diags[0].(diag.DiagnosticWithPath)
	if len(diags) != 1 || !ok || !withPath.Path().Equal(path.Root("expr")) || !strings.Contains(diags[0].Detail(), `"spec.expr"`) {
		t.Fatalf("diagnostics %v", diags)
	}
}

func TestCanonicalTime(t *testing.T) {
	for in, want := range map[string]string{
		"2099-01-01T00:00:00.000Z": "2099-01-01T00:00:00Z",
		"2099-01-01T00:00:00.120Z": "2099-01-01T00:00:00.12Z",
		"not a time":               "not a time",
	} {
		if got := canonicalTime(in); got != want {
			t.Errorf("%s: got %s, want %s", in, got, want)
		}
	}
}
