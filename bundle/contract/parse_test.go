package contract_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kubepact/kubepact/bundle/contract"
	"github.com/kubepact/kubepact/test/pactocompat"
)

func compatContracts(t testing.TB) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(pactocompat.Demo(t), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Name() == contract.FileName {
			files = append(files, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no pacto.yaml found in the compatibility bundles")
	}
	return files
}

func TestParseCompatBundles(t *testing.T) {
	for _, f := range compatContracts(t) {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		c, err := contract.Parse(data)
		if err != nil {
			t.Errorf("Parse(%s) = %v, want no error", f, err)
			continue
		}
		if c.PactoVersion != "2.0" || c.Service.Name == "" || c.Service.Version == "" {
			t.Errorf("Parse(%s) = pactoVersion %q service %+v, want 2.0 with name and version", f, c.PactoVersion, c.Service)
		}
		if _, err := contract.DecodeGeneric(data); err != nil {
			t.Errorf("DecodeGeneric(%s) = %v", f, err)
		}
	}
}

func TestParseFullContract(t *testing.T) {
	src := `pactoVersion: "2.0"
service:
  name: payments
  version: 1.2.3
  owner: {team: payments-team, dri: jane.doe, contacts: [{type: email, value: a@b.c, purpose: support}]}
interfaces:
  - {name: http, type: openapi, ref: interfaces/openapi.yaml, visibility: public}
configurations:
  - name: app
    required: false
    schema: configuration/schema.json
    values: {LOG_LEVEL: info, RETRIES: 3, RATIO: 0.5, ON: true, WHEN: 2026-01-02, NOTHING: null}
policies:
  - {name: local, schema: policy/schema.json, target: contract}
dependencies:
  - {name: db, ref: "oci://ghcr.io/acme/db:1.0.0", required: true, compatibility: ^1.0.0}
workload: service
state: {type: stateful, persistence: {scope: shared, durability: persistent}, dataCriticality: high}
capabilities:
  - {type: health, binding: {type: http, interface: http, path: /healthz}}
  - {type: extension, ref: example.com/custom}
readiness:
  expires: 2099-12-31
  minScore: 80
  partialCredit: 0.25
  history: [{date: 2026-02-15, version: 1.2.3, author: jane, description: first}]
  claims: [{id: dash, type: url, category: observability, status: done, evidence: https://x, weight: 30, description: d}]
metadata: {tier: edge, since: 2020-05-06, n: 7}
extensions: {example.com/x: {a: [1, 2]}}
`
	got, err := contract.Parse([]byte(src))
	if err != nil {
		t.Fatalf("Parse() = %v", err)
	}
	minScore, credit := 80, 0.25
	want := &contract.Contract{
		PactoVersion: "2.0",
		Service: contract.Service{Name: "payments", Version: "1.2.3", Owner: &contract.Owner{
			Team: "payments-team", DRI: "jane.doe", Contacts: []contract.Contact{{Type: "email", Value: "a@b.c", Purpose: "support"}},
		}},
		Interfaces: []contract.Interface{{Name: "http", Type: "openapi", Ref: "interfaces/openapi.yaml", Visibility: "public"}},
		Configurations: []contract.Configuration{{Name: "app", Schema: "configuration/schema.json", Values: map[string]any{
			"LOG_LEVEL": "info", "RETRIES": int64(3), "RATIO": 0.5, "ON": true, "WHEN": "2026-01-02", "NOTHING": nil,
		}}},
		Policies:     []contract.Policy{{Name: "local", Schema: "policy/schema.json", Target: "contract"}},
		Dependencies: []contract.Dependency{{Name: "db", Ref: "oci://ghcr.io/acme/db:1.0.0", Required: true, Compatibility: "^1.0.0"}},
		Workload:     "service",
		State:        &contract.State{Type: "stateful", Persistence: contract.Persistence{Scope: "shared", Durability: "persistent"}, DataCriticality: "high"},
		Capabilities: []contract.Capability{
			{Type: "health", Binding: &contract.CapabilityBinding{Type: "http", Interface: "http", Path: "/healthz"}},
			{Type: "extension", Ref: "example.com/custom"},
		},
		Readiness: &contract.Readiness{
			Expires: "2099-12-31", MinScore: &minScore, PartialCredit: &credit,
			History: []contract.ReadinessRevision{{Date: "2026-02-15", Version: "1.2.3", Author: "jane", Description: "first"}},
			Claims:  []contract.ReadinessClaim{{ID: "dash", Type: "url", Category: "observability", Status: "done", Evidence: "https://x", Weight: 30, Description: "d"}},
		},
		Metadata:   map[string]any{"tier": "edge", "since": "2020-05-06", "n": int64(7)},
		Extensions: map[string]any{"example.com/x": map[string]any{"a": []any{int64(1), int64(2)}}},
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("Parse() mismatch (-got +want):\n%s", diff)
	}
}

// TestDatesStayLiteral guards against the round trip that once broke
// Pacto's editor: an unquoted YAML date must not come back as RFC 3339.
func TestDatesStayLiteral(t *testing.T) {
	src := []byte("pactoVersion: '2.0'\nservice: {name: a, version: 1.0.0}\nreadiness:\n  expires: 2099-12-31\n  claims: []\nmetadata:\n  at: 2001-12-14t21:59:43.10-05:00\n")
	tree, err := contract.DecodeGeneric(src)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(tree)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"expires":"2099-12-31"`, `"at":"2001-12-14t21:59:43.10-05:00"`} {
		if !bytes.Contains(b, []byte(want)) {
			t.Errorf("DecodeGeneric() = %s, want it to contain %s", b, want)
		}
	}
	c, err := contract.Parse(src)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Readiness.Expires; got != "2099-12-31" {
		t.Errorf("Readiness.Expires = %q, want 2099-12-31", got)
	}
	if got := c.Metadata["at"]; got != "2001-12-14t21:59:43.10-05:00" {
		t.Errorf("Metadata[at] = %#v, want the literal text", got)
	}
}

func TestParseErrors(t *testing.T) {
	const head = "pactoVersion: '2.0'\nservice: {name: a, version: 1.0.0}\n"
	bomb := "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
	for i, prev := 'b', 'a'; i <= 'j'; i, prev = i+1, i {
		bomb += string(i) + ": &" + string(i) + " [" + strings.Repeat("*"+string(prev)+", ", 9) + "*" + string(prev) + "]\n"
	}
	deep := "pactoVersion: '2.0'\nmetadata: " + strings.Repeat("[", 100) + strings.Repeat("]", 100) + "\n"
	tests := []struct {
		name      string
		src       string
		line, col int
		msg       string
	}{
		{"alias bomb", bomb, 0, 0, "alias bomb"},
		{"two documents", head + "---\nfoo: bar\n", 3, 1, "second YAML document"},
		{"root is a list", "- a\n- b\n", 1, 1, "root must be a mapping"},
		{"root is a scalar", "hello\n", 1, 1, "root must be a mapping"},
		{"empty", "", 0, 0, "empty"},
		{"comments only", "# nothing\n", 0, 0, "empty"},
		{"unknown top-level field", head + "runtime: {}\n", 3, 1, `unknown field "runtime" in the document root; allowed fields: capabilities, configurations`},
		{"unknown nested field", head + "interfaces:\n  - {name: a, type: grpc, ref: x, port: 8080}\n", 4, 35, `unknown field "port" in interfaces[0]; allowed fields: name, ref, type, visibility`},
		{"number for a string", "pactoVersion: 2.0\nservice: {name: a, version: 1.0.0}\n", 1, 15, `pactoVersion must be a string, got the number 2.0 (quote it: "2.0")`},
		{"string for a bool", head + "dependencies:\n  - {name: d, ref: x, required: yes, compatibility: ^1}\n", 4, 33, "dependencies[0].required must be true or false"},
		{"list for a mapping", "pactoVersion: '2.0'\nservice: [a]\n", 2, 10, "service must be a mapping, got a list"},
		{"float for an int", head + "readiness: {expires: '2030-01-01', minScore: 1.5, claims: []}\n", 3, 46, "readiness.minScore must be an integer"},
		{"null for a struct", "pactoVersion: '2.0'\nservice:\n", 2, 9, "service must be a mapping, got null"},
		{"duplicate key", head + "workload: job\nworkload: service\n", 4, 1, `key "workload" appears twice`},
		{"merge key", "pactoVersion: '2.0'\nbase: &b {name: a}\nservice:\n  <<: *b\n  version: 1.0.0\n", 4, 3, "merge keys"},
		{"custom tag", head + "metadata: {a: !secret x}\n", 3, 15, "tag !secret is not supported"},
		{"infinity", head + "metadata: {a: .inf}\n", 3, 15, "no JSON representation"},
		{"syntax error", "pactoVersion: '2.0'\nservice: {name: a\n", 1, 0, "did not find expected"},
		{"tab indentation", "pactoVersion: '2.0'\nservice:\n\tname: a\n", 3, 0, "use spaces"},
		{"too deep", deep, 2, 0, "nesting is deeper than 64"},
		{"non-scalar key", head + "metadata: {[a]: b}\n", 3, 12, "mapping keys must be plain scalars"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			_, err := contract.Parse([]byte(tt.src))
			if elapsed := time.Since(start); elapsed > 2*time.Second {
				t.Errorf("Parse took %v, want a fast rejection", elapsed)
			}
			var pe *contract.ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("Parse() error = %v (%T), want *ParseError", err, err)
			}
			if !strings.Contains(pe.Message, tt.msg) {
				t.Errorf("Parse() message = %q, want it to contain %q", pe.Message, tt.msg)
			}
			if tt.line != 0 && pe.Line != tt.line {
				t.Errorf("Parse() line = %d, want %d (%v)", pe.Line, tt.line, pe)
			}
			if tt.col != 0 && pe.Column != tt.col {
				t.Errorf("Parse() column = %d, want %d (%v)", pe.Column, tt.col, pe)
			}
		})
	}
}

func TestParseTooLarge(t *testing.T) {
	src := append([]byte("pactoVersion: '2.0'\nmetadata:\n  pad: \""), bytes.Repeat([]byte("x"), contract.MaxBytes)...)
	src = append(src, "\"\n"...)
	start := time.Now()
	_, err := contract.Parse(src)
	if time.Since(start) > time.Second {
		t.Errorf("Parse of an oversize document took %v, want an immediate rejection", time.Since(start))
	}
	var pe *contract.ParseError
	if !errors.As(err, &pe) || !strings.Contains(pe.Message, "the limit is 4194304 bytes") {
		t.Errorf("Parse() = %v, want a size-limit *ParseError", err)
	}
}

func TestAliasesWithinBoundsAreExpanded(t *testing.T) {
	src := "pactoVersion: '2.0'\nservice: {name: a, version: 1.0.0}\nmetadata:\n  base: &tags [x, y]\n  again: *tags\n"
	c, err := contract.Parse([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(c.Metadata["again"], []any{"x", "y"}); diff != "" {
		t.Errorf("alias expansion mismatch (-got +want):\n%s", diff)
	}
}

func TestParseErrorString(t *testing.T) {
	tests := []struct {
		err  contract.ParseError
		want string
	}{
		{contract.ParseError{Line: 3, Column: 7, Message: "bad"}, "line 3, column 7: bad"},
		{contract.ParseError{Line: 3, Message: "bad"}, "line 3: bad"},
		{contract.ParseError{Message: "bad"}, "bad"},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
	}
}
