package provider

import (
	"context"
	"fmt"
	"strconv"

	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
)

// checkSelector is the syntax check of @edgefleet/selectors (packages/selectors) ported to Go,
// so an invalid selector fails at plan time with the position of the first problem. The API
// checks again (it is the authority); this only saves an apply.
func checkSelector(input string) error {
	const maxLength = 1000
	if len(input) > maxLength {
		return fmt.Errorf("invalid selector at position %d: longer than %d characters", maxLength, maxLength)
	}
	type token struct {
		kind, text string
		at         int
	}
	var tokens []token
	isWord := func(c byte) bool {
		return c == '-' || c == '_' || c == '.' || c == '/' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
	}
	fail := func(at int, format string, args ...any) error {
		return fmt.Errorf("invalid selector at position %d: %s", at, fmt.Sprintf(format, args...))
	}
	for i := 0; i < len(input); {
		c := input[i]
		switch {
		case c == ' ' || c == '\t':
			i++
		case c == ',' || c == '(' || c == ')':
			tokens = append(tokens, token{"punct", string(c), i})
			i++
		case c == '=':
			if i+1 < len(input) && input[i+1] == '=' {
				tokens = append(tokens, token{"op", "==", i})
				i += 2
			} else {
				tokens = append(tokens, token{"op", "=", i})
				i++
			}
		case c == '!':
			if i+1 < len(input) && input[i+1] == '=' {
				tokens = append(tokens, token{"op", "!=", i})
				i += 2
			} else {
				tokens = append(tokens, token{"op", "!", i})
				i++
			}
		case isWord(c):
			start := i
			for i < len(input) && isWord(input[i]) {
				i++
			}
			tokens = append(tokens, token{"word", input[start:i], start})
		default:
			return fail(i, "unexpected character %s", strconv.Quote(string(c)))
		}
	}
	tokens = append(tokens, token{"end", "", len(input)})
	index := 0
	peek := func() token { return tokens[index] }
	next := func() token { t := tokens[index]; index++; return t }
	describe := func(t token) string {
		if t.kind == "end" {
			return "end of input"
		}
		return strconv.Quote(t.text)
	}
	key := func() error {
		t := next()
		if t.kind != "word" {
			return fail(t.at, "expected a label key, found %s", describe(t))
		}
		if !labelKeyPattern.MatchString(t.text) {
			return fail(t.at, "invalid label key %s", strconv.Quote(t.text))
		}
		return nil
	}
	value := func() error {
		t := next()
		if t.kind != "word" {
			return fail(t.at, "expected a value, found %s", describe(t))
		}
		if !labelValuePattern.MatchString(t.text) {
			return fail(t.at, "invalid value %s", strconv.Quote(t.text))
		}
		return nil
	}
	valueSet := func() error {
		open := next()
		if open.kind != "punct" || open.text != "(" {
			return fail(open.at, `expected "(" after in/notin, found %s`, describe(open))
		}
		if err := value(); err != nil {
			return err
		}
		for {
			t := next()
			if t.kind == "punct" && t.text == ")" {
				return nil
			}
			if t.kind != "punct" || t.text != "," {
				return fail(t.at, `expected "," or ")", found %s`, describe(t))
			}
			if err := value(); err != nil {
				return err
			}
		}
	}
	requirement := func() error {
		if first := peek(); first.kind == "op" && first.text == "!" {
			next()
			return key()
		}
		if err := key(); err != nil {
			return err
		}
		t := peek()
		if t.kind == "end" || (t.kind == "punct" && t.text == ",") {
			return nil
		}
		next()
		if t.kind == "op" && t.text != "!" {
			return value()
		}
		if t.kind == "word" && (t.text == "in" || t.text == "notin") {
			return valueSet()
		}
		return fail(t.at, `expected "=", "!=", "in", "notin", "," or end, found %s`, describe(t))
	}
	if peek().kind == "end" {
		return nil
	}
	if err := requirement(); err != nil {
		return err
	}
	for {
		t := next()
		if t.kind == "end" {
			return nil
		}
		if t.kind != "punct" || t.text != "," {
			return fail(t.at, `expected "," or end, found %s`, describe(t))
		}
		if err := requirement(); err != nil {
			return err
		}
	}
}

// selectorValidator checks a label selector's syntax at plan time.
type selectorValidator struct{}

func (selectorValidator) Description(context.Context) string {
	return "must be a label selector such as `site=plant-7,tier!=canary` or `region in (eu-west,eu-north)`"
}

func (v selectorValidator) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }

func (selectorValidator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	if err := checkSelector(req.ConfigValue.ValueString()); err != nil {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid label selector", err.Error())
	}
}
