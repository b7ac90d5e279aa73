package provider

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"

	"github.com/edgefleet/edgefleet/infra/terraform/internal/client"
)

// clientOf takes the configured client from ProviderData (nil before the provider is configured).
func clientOf(data any, diags *diag.Diagnostics) *client.Client {
	if data == nil {
		return nil
	}
	c, ok := data.(*client.Client)
	if !ok {
		diags.AddError("Unexpected provider data", fmt.Sprintf("expected *client.Client, got %T", data))
	}
	return c
}

// configureResource and configureDataSource are the Configure methods every resource shares.
func configureResource(req resource.ConfigureRequest, resp *resource.ConfigureResponse) *client.Client {
	return clientOf(req.ProviderData, &resp.Diagnostics)
}

func configureDataSource(req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) *client.Client {
	return clientOf(req.ProviderData, &resp.Diagnostics)
}

var camelBoundary = regexp.MustCompile(`([a-z0-9])([A-Z])`)

// snake turns an API field name into the attribute name the provider uses for it (siteId → site_id).
func snake(name string) string {
	return strings.ToLower(camelBoundary.ReplaceAllString(name, "${1}_${2}"))
}

// addAPIError reports an API failure. Invalid input comes with the API's issues: each is put on
// the attribute it points at when the resource has one of that name (renames: API name → attribute;
// a two-part key such as "spec.expr" renames a nested field, for APIs that nest what is flat here).
func addAPIError(diags *diag.Diagnostics, summary string, err error, attributes map[string]bool, renames map[string]string) {
	var apiErr *client.APIError
	if !errors.As(err, &apiErr) || len(apiErr.Issues) == 0 {
		diags.AddError(summary, err.Error())
		return
	}
	for _, issue := range apiErr.Issues {
		detail := fmt.Sprintf("%s (the API answered %d %s at %q)", issue.Message, apiErr.Status, apiErr.Code, apiErr.IssuePath(issue))
		if len(issue.Path) > 0 {
			first := fmt.Sprint(issue.Path[0])
			name := renames[first]
			if len(issue.Path) > 1 {
				if nested := renames[first+"."+fmt.Sprint(issue.Path[1])]; nested != "" {
					name = nested
				}
			}
			if name == "" {
				name = snake(first)
			}
			if attributes[name] {
				diags.AddAttributeError(path.Root(name), summary, detail)
				continue
			}
		}
		diags.AddError(summary, detail)
	}
}

// Conversions between nullable API values and Terraform values.

func stringPtr(v types.String) *string {
	if v.IsNull() || v.IsUnknown() {
		return nil
	}
	s := v.ValueString()
	return &s
}

func int64Ptr(v types.Int64) *int64 {
	if v.IsNull() || v.IsUnknown() {
		return nil
	}
	n := v.ValueInt64()
	return &n
}

func boolPtr(v types.Bool) *bool {
	if v.IsNull() || v.IsUnknown() {
		return nil
	}
	b := v.ValueBool()
	return &b
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// objectAsOptions reads nested objects leniently (unset attributes stay null).
var objectAsOptions = basetypes.ObjectAsOptions{UnhandledNullAsEmpty: true, UnhandledUnknownAsEmpty: true}

func pathRoot(name string) path.Path { return path.Root(name) }

// canonicalTime writes an API timestamp (UTC, milliseconds) the shortest RFC 3339 way, as people
// write them: 2099-01-01T00:00:00.000Z → 2099-01-01T00:00:00Z.
func canonicalTime(value string) string {
	t, err := time.Parse(time.RFC3339Nano, value)
	if err != nil {
		return value
	}
	return t.UTC().Format(time.RFC3339Nano)
}
