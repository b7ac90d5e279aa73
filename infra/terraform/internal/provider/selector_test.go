package provider

import (
	"strings"
	"testing"
)

func TestSelectorSyntaxMatchesTheAPIs(t *testing.T) {
	for _, ok := range []string{"", "site=plant-7,tier!=canary", "region in (eu-west,eu-north)", "env notin (dev)", "gpu", "!gpu", "a==b", "example.com/role=edge"} {
		if err := checkSelector(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for input, want := range map[string]string{
		"site=":                   "position 5: expected a value, found end of input",
		"site=plant 7":            `position 11: expected "," or end, found "7"`,
		"region in eu":            `position 10: expected "(" after in/notin, found "eu"`,
		"tier=@":                  `position 5: unexpected character "@"`,
		"a,,b":                    "position 2: expected a label key",
		"env in (a b)":            `position 10: expected "," or ")", found "b"`,
		"-bad=x":                  `invalid label key "-bad"`,
		strings.Repeat("a", 1001): "longer than 1000 characters",
	} {
		err := checkSelector(input)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: got %v, want %q", input, err, want)
		}
	}
}
