package client

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"reflect"
	"strings"
	"testing"
)

// The OpenAPI document this checks against: the one a running console serves
// (EDGEFLEET_OPENAPI_URL, set by scripts/test.sh with a stack up), else testdata/openapi.gen.json,
// which scripts/test.sh regenerates from packages/api before every run.
func loadDocument(t *testing.T) map[string]any {
	t.Helper()
	var data []byte
	var err error
	if url := os.Getenv("EDGEFLEET_OPENAPI_URL"); url != "" {
		var resp *http.Response
		if resp, err = http.Get(url); err == nil {
			defer resp.Body.Close()
			data, err = io.ReadAll(resp.Body)
		}
	} else {
		data, err = os.ReadFile("testdata/openapi.gen.json")
	}
	if err != nil {
		t.Fatalf("reading the OpenAPI document: %v (scripts/test.sh generates testdata/openapi.gen.json)", err)
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

type schemaChecker struct {
	doc      map[string]any
	problems []string
}

func (c *schemaChecker) resolve(schema map[string]any) map[string]any {
	for {
		ref, ok := schema["$ref"].(string)
		if !ok {
			return schema
		}
		node := any(c.doc)
		for _, part := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
			node = node.(map[string]any)[part]
		}
		schema = node.(map[string]any)
	}
}

// variants flattens anyOf/oneOf/allOf into the schemas a value may match.
func (c *schemaChecker) variants(schema map[string]any) []map[string]any {
	schema = c.resolve(schema)
	var out []map[string]any
	for _, key := range []string{"anyOf", "oneOf", "allOf"} {
		if list, ok := schema[key].([]any); ok {
			for _, item := range list {
				out = append(out, c.variants(item.(map[string]any))...)
			}
		}
	}
	return append(out, schema)
}

// check walks a Go type's JSON fields and reports each one the schema does not declare.
func (c *schemaChecker) check(where string, t reflect.Type, schema map[string]any) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == reflect.TypeOf(json.RawMessage{}) {
		return // passed through as is (the rollout strategy), validated by the API itself
	}
	variants := c.variants(schema)
	switch t.Kind() {
	case reflect.Slice:
		for _, v := range variants {
			if items, ok := v["items"].(map[string]any); ok {
				c.check(where+"[]", t.Elem(), items)
				return
			}
		}
		c.problems = append(c.problems, where+": the document has no array here")
	case reflect.Map:
		for _, v := range variants {
			if items, ok := v["additionalProperties"].(map[string]any); ok {
				c.check(where+"{}", t.Elem(), items)
				return
			}
		}
		c.problems = append(c.problems, where+": the document has no map here")
	case reflect.Struct:
		for i := 0; i < t.NumField(); i++ {
			field := t.Field(i)
			if field.Anonymous {
				c.check(where, field.Type, schema)
				continue
			}
			name := strings.Split(field.Tag.Get("json"), ",")[0]
			if name == "" || name == "-" {
				continue
			}
			found := false
			for _, v := range variants {
				if props, ok := v["properties"].(map[string]any); ok {
					if prop, ok := props[name].(map[string]any); ok {
						c.check(where+"."+name, field.Type, prop)
						found = true
						break
					}
				}
			}
			if !found {
				c.problems = append(c.problems, where+"."+name+": not in the document")
			}
		}
	}
}

func TestEveryFieldTheProviderSendsOrReadsIsInTheOpenAPIDocument(t *testing.T) {
	doc := loadDocument(t)
	paths := doc["paths"].(map[string]any)
	checker := &schemaChecker{doc: doc}
	for _, op := range Operations {
		name := op.Method + " " + op.Path
		item, ok := paths[op.Path].(map[string]any)
		if !ok {
			t.Errorf("%s: path not in the document", name)
			continue
		}
		operation, ok := item[strings.ToLower(op.Method)].(map[string]any)
		if !ok {
			t.Errorf("%s: method not in the document", name)
			continue
		}
		if op.Request != nil {
			schema, ok := digMap(operation, "requestBody", "content", "application/json", "schema")
			if !ok {
				t.Errorf("%s: no JSON request body in the document", name)
			} else {
				checker.check(name+" request", reflect.TypeOf(op.Request), schema)
			}
		}
		if op.Response != nil {
			schema, ok := digMap(operation, "responses", "200", "content", "application/json", "schema")
			if !ok {
				t.Errorf("%s: no JSON 200 answer in the document", name)
			} else {
				checker.check(name+" answer", reflect.TypeOf(op.Response), schema)
			}
		}
	}
	for _, problem := range checker.problems {
		t.Error(problem)
	}
}

// The checker itself must fail on a field the document lacks (a test that cannot fail proves nothing).
func TestTheCheckerReportsAnUndocumentedField(t *testing.T) {
	type drifted struct {
		Name  string `json:"name"`
		Extra string `json:"notInTheAPI"`
	}
	doc := loadDocument(t)
	schema, _ := digMap(doc["paths"].(map[string]any), "/apps", "post", "requestBody", "content", "application/json", "schema")
	checker := &schemaChecker{doc: doc}
	checker.check("POST /apps request", reflect.TypeOf(drifted{}), schema)
	if len(checker.problems) != 1 || !strings.Contains(checker.problems[0], "notInTheAPI") {
		t.Fatalf("problems %v", checker.problems)
	}
}

func digMap(node map[string]any, keys ...string) (map[string]any, bool) {
	for _, key := range keys {
		next, ok := node[key].(map[string]any)
		if !ok {
			return nil, false
		}
		node = next
	}
	return node, true
}
