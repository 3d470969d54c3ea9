package authoring

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The dependency refs the edit steps use, pinned by digest so that no row
// draws a tag warning.
const (
	stepsPayments = "oci://registry.example/payments@sha256:1111111111111111111111111111111111111111111111111111111111111111"
	stepsSearch   = "oci://registry.example/search@sha256:2222222222222222222222222222222222222222222222222222222222222222"
)

// nothingChanged is the warning of an edit that changes nothing.
const nothingChanged = "nothing changed: the contract already says what the arguments ask for, so nothing was written"

// stepsBase is the contract every edit row starts from.
const stepsBase = `# The shop's contract.
pactoVersion: "2.0"
service:
  name: shop
  version: 1.2.0
  owner:
    team: commerce
interfaces:
  - name: http
    type: openapi
    ref: interfaces/openapi.yaml
    visibility: public
dependencies:
  - name: payments
    ref: oci://registry.example/payments@sha256:1111111111111111111111111111111111111111111111111111111111111111
    required: true
    compatibility: ^1.0.0
workload: service
state:
  type: stateless
  persistence:
    scope: local
    durability: ephemeral
  dataCriticality: low
metadata:
  tier: edge
`

const stepsSpec = `openapi: 3.0.3
info: {title: shop, version: 1.2.0}
paths:
  /items:
    get:
      operationId: listItems
      responses: {"200": {description: ok}}
`

// TestEditSteps is the specification of pacto_edit's steps, applied in
// this order to the node tree: service, remove/add interfaces, remove/add
// dependencies, workload, state, configuration properties, metadata. Each
// row is one request on the same base contract and what the step does: the
// changes and warnings it reports and lines of the pacto.yaml it writes,
// or the error (code and argument) that refuses the whole call and leaves
// the file as it was.
func TestEditSteps(t *testing.T) {
	yes, no := true, false
	tests := []struct {
		name     string
		req      EditRequest
		changes  []string
		warnings []string
		has      []string // lines of the written pacto.yaml
		hasNot   []string
		files    []string // files of the bundle that exist after the edit
		code     string   // a refusal's Code; "" for a written edit
		field    string   // a refusal's Field
	}{
		// service
		{name: "rename the service", req: EditRequest{Name: "store"},
			changes: []string{`set service name to "store"`}, has: []string{"  name: store"}},
		{name: "set the version", req: EditRequest{Version: "1.3.0"},
			changes: []string{`set version to "1.3.0"`}, has: []string{"  version: 1.3.0"}},
		{name: "set the owning team", req: EditRequest{Owner: "platform"},
			changes: []string{`set owner team to "platform"`}, has: []string{"    team: platform"}},
		{name: "a value the contract already has changes nothing", req: EditRequest{Name: "shop"},
			warnings: []string{nothingChanged}, has: []string{"  name: shop"}},

		// interfaces
		{name: "remove an interface", req: EditRequest{RemoveInterfaces: []string{"http"}},
			changes:  []string{`removed interface "http"`},
			warnings: []string{`the spec file interfaces/openapi.yaml of removed interface "http" is kept; delete it if nothing else uses it`},
			hasNot:   []string{"interfaces:"}},
		{name: "remove an interface that is not there", req: EditRequest{RemoveInterfaces: []string{"htp"}},
			code: CodeNotFound, field: "remove_interfaces"},
		{name: "add an interface", req: EditRequest{AddInterfaces: []InterfaceSpec{{Name: "rpc", Type: "grpc"}}},
			changes: []string{`added interface "rpc" (grpc)`, "scaffolded interfaces/rpc.proto (grpc stub)"},
			has:     []string{"  - name: rpc", "    type: grpc", "    ref: interfaces/rpc.proto"}, files: []string{"interfaces/rpc.proto"}},
		{name: "add an interface the contract has", req: EditRequest{AddInterfaces: []InterfaceSpec{{Name: "http", Type: "openapi"}}},
			warnings: []string{`interface "http" (openapi) is already in the contract; unchanged`, nothingChanged}},
		{name: "add an interface under a taken name", req: EditRequest{AddInterfaces: []InterfaceSpec{{Name: "http", Type: "grpc"}}},
			code: CodeAlreadyExists, field: "add_interfaces"},
		{name: "an empty list changes nothing", req: EditRequest{AddInterfaces: []InterfaceSpec{}},
			warnings: []string{"add_interfaces is empty, so it changes nothing", nothingChanged}},

		// dependencies
		{name: "remove a dependency by name", req: EditRequest{RemoveDependencies: []string{"payments"}},
			changes: []string{`removed dependency "payments"`}, hasNot: []string{"dependencies:"}},
		{name: "remove a dependency by ref", req: EditRequest{RemoveDependencies: []string{stepsPayments}},
			changes: []string{`removed dependency "payments"`}, hasNot: []string{"dependencies:"}},
		{name: "remove a dependency that is not there", req: EditRequest{RemoveDependencies: []string{"billing"}},
			code: CodeNotFound, field: "remove_dependencies"},
		{name: "add a dependency", req: EditRequest{AddDependencies: []DependencySpec{{Ref: stepsSearch, Name: "search", Compatibility: "^2.0.0"}}},
			changes: []string{`added dependency "search" (` + stepsSearch + `)`},
			has:     []string{"  - name: search", "    ref: " + stepsSearch, "    required: true", "    compatibility: ^2.0.0"}},
		{name: "add a dependency the contract has", req: EditRequest{AddDependencies: []DependencySpec{{Ref: stepsPayments, Name: "payments", Compatibility: "^1.0.0"}}},
			warnings: []string{`dependency "payments" is already in the contract as given; unchanged`, nothingChanged}},
		{name: "add a dependency under a taken name", req: EditRequest{AddDependencies: []DependencySpec{{Ref: stepsSearch, Name: "payments"}}},
			code: CodeAlreadyExists, field: "add_dependencies"},

		// workload
		{name: "set the workload", req: EditRequest{Workload: "job"},
			changes: []string{"set workload to job"}, has: []string{"workload: job"}},

		// state
		{name: "the service starts storing data", req: EditRequest{StoresData: &yes},
			changes: []string{"set state.type to stateful", "set state.dataCriticality to medium"},
			has:     []string{"  type: stateful", "    durability: ephemeral", "  dataCriticality: medium"}},
		{name: "stored data survives restarts and is shared", req: EditRequest{StoresData: &yes, DataSurvivesRestart: &yes, DataSharedAcrossInstances: &yes, DataLossImpact: "high"},
			changes: []string{"set state.type to stateful", "set state.persistence.scope to shared", "set state.persistence.durability to persistent", "set state.dataCriticality to high"},
			has:     []string{"    scope: shared", "    durability: persistent", "  dataCriticality: high"}},
		{name: "persistence without stored data is ignored", req: EditRequest{StoresData: &no, DataSurvivesRestart: &yes},
			warnings: []string{
				"data_survives_restart is ignored: the service stores no data (pass stores_data: true)",
				nothingChanged,
			},
			has: []string{"  type: stateless", "    durability: ephemeral"}},

		// configuration properties
		{name: "the first configuration property", req: EditRequest{AddConfigProperties: []ConfigProperty{{Name: "LOG_LEVEL"}}},
			changes: []string{`added configuration "default" with schema configuration/schema.json`, `added config property "LOG_LEVEL" (string) in configuration/schema.json`},
			has:     []string{"configurations:", "  - name: default", "    schema: configuration/schema.json", "    required: true"},
			files:   []string{"configuration/schema.json"}},

		// metadata
		{name: "set a metadata key", req: EditRequest{SetMetadata: metadataOf("language", "go")},
			changes: []string{`set metadata "language"`}, has: []string{"  tier: edge", "  language: go"}},
		{name: "set a metadata key to the value it has", req: EditRequest{SetMetadata: metadataOf("tier", "edge")},
			warnings: []string{`metadata "tier" already has that value; unchanged`, nothingChanged}},
		{name: "remove the last metadata key", req: EditRequest{RemoveMetadata: []string{"tier"}},
			changes: []string{`removed metadata "tier"`}, hasNot: []string{"metadata:"}},
		{name: "remove a metadata key that is not there", req: EditRequest{RemoveMetadata: []string{"tear"}},
			code: CodeNotFound, field: "remove_metadata"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, ws := newTestAuthoring(t, map[string]string{"shop/pacto.yaml": stepsBase, "shop/interfaces/openapi.yaml": stepsSpec})
			tc.req.Path = "shop"
			res, err := a.Edit(t.Context(), tc.req)
			after, rerr := os.ReadFile(filepath.Join(ws, "shop", "pacto.yaml"))
			if rerr != nil {
				t.Fatal(rerr)
			}
			if tc.code != "" {
				var ae *Error
				if !errors.As(err, &ae) {
					t.Fatalf("err = %v; want a refusal with code %s", err, tc.code)
				}
				if ae.Code != tc.code || ae.Field != tc.field {
					t.Errorf("refusal code %s field %q; want %s %q (%s)", ae.Code, ae.Field, tc.code, tc.field, ae.Message)
				}
				if string(after) != stepsBase {
					t.Errorf("a refused edit changed pacto.yaml:\n%s", after)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(nonNil(tc.changes), res.Changes); d != "" {
				t.Errorf("changes (-want +got):\n%s", d)
			}
			if d := cmp.Diff(nonNil(tc.warnings), res.Warnings); d != "" {
				t.Errorf("warnings (-want +got):\n%s", d)
			}
			lines := strings.Split(string(after), "\n")
			for _, l := range tc.has {
				if !slices.Contains(lines, l) {
					t.Errorf("pacto.yaml has no line %q:\n%s", l, after)
				}
			}
			for _, l := range tc.hasNot {
				if slices.Contains(lines, l) {
					t.Errorf("pacto.yaml still has the line %q:\n%s", l, after)
				}
			}
			for _, f := range tc.files {
				if _, err := os.Stat(filepath.Join(ws, "shop", f)); err != nil {
					t.Errorf("the edit wrote no %s: %v", f, err)
				}
			}
			if len(tc.changes) == 0 && string(after) != stepsBase {
				t.Errorf("an edit with no change rewrote pacto.yaml:\n%s", after)
			}
			if !strings.HasPrefix(string(after), "# The shop's contract.\n") {
				t.Errorf("the edit lost the file's comment:\n%s", after)
			}
			// What the edit wrote is a valid contract.
			chk, err := a.Check(t.Context(), CheckRequest{Path: "shop"})
			if err != nil {
				t.Fatal(err)
			}
			if !chk.Valid {
				t.Errorf("the edited contract is invalid: %+v", chk.Errors)
			}
		})
	}
}

// metadataOf is a set_metadata argument of one key.
func metadataOf(key string, v any) *Metadata {
	m := &Metadata{}
	m.Set(key, v)
	return m
}

// TestPlanSteps is the specification of pacto_create's planning: what a
// description implies (interfaces, state, workload; dependencies never),
// and how state intent maps onto the contract's state section.
func TestPlanSteps(t *testing.T) {
	type iface = inferredInterface
	http := iface{"http-api", "openapi", "public"}
	grpc := iface{"grpc-api", "grpc", "internal"}
	events := iface{"events", "asyncapi", ""}
	for _, tc := range []struct {
		description              string
		interfaces               []iface
		stores, survives, shared bool
		workload                 string
	}{
		{description: "Serves the product catalog", interfaces: nil},
		{description: "A REST API for orders", interfaces: []iface{http}},
		{description: "HTTP and web endpoints, one API", interfaces: []iface{http}},
		{description: "internal gRPC service", interfaces: []iface{grpc}},
		{description: "publishes events to Kafka", interfaces: []iface{events}},
		{description: "an HTTP API that emits messages", interfaces: []iface{http, events}},
		{description: "keeps orders in Postgres", stores: true, survives: true, shared: true},
		{description: "fronted by a Redis cache", stores: true},
		{description: "a durable store", stores: true, survives: true},
		{description: "queue workers", interfaces: []iface{events}, workload: "job"},
		{description: "nightly batch export", workload: "scheduled"},
		{description: "scheduled workers", workload: "scheduled"},
		{description: "workers on a cron", workload: "scheduled"},
		{description: "calls the payments service", interfaces: nil},
		{description: "a restful webhook dbadmin", interfaces: nil}, // whole words only: not REST, web or db
	} {
		t.Run(tc.description, func(t *testing.T) {
			inf := infer(tc.description)
			if d := cmp.Diff(tc.interfaces, inf.interfaces, cmp.AllowUnexported(iface{})); d != "" {
				t.Errorf("interfaces (-want +got):\n%s", d)
			}
			if inf.stores != tc.stores || inf.survives != tc.survives || inf.shared != tc.shared {
				t.Errorf("stores, survives, shared = %t, %t, %t; want %t, %t, %t", inf.stores, inf.survives, inf.shared, tc.stores, tc.survives, tc.shared)
			}
			if inf.workload != tc.workload {
				t.Errorf("workload = %q; want %q", inf.workload, tc.workload)
			}
			// Every inference is explained.
			n := len(inf.interfaces)
			if inf.workload != "" {
				n++
			}
			if len(inf.derived) < n {
				t.Errorf("derived %q explains fewer than %d inferences", inf.derived, n)
			}
		})
	}

	for _, tc := range []struct {
		name     string
		intent   stateIntent
		keepType string
		want     contractState
	}{
		{"no data", stateIntent{}, "", contractState{"stateless", "local", "ephemeral", "low"}},
		{"no data ignores persistence", stateIntent{survives: true, shared: true}, "", contractState{"stateless", "local", "ephemeral", "low"}},
		{"stored data", stateIntent{stores: true}, "", contractState{"stateful", "local", "ephemeral", "medium"}},
		{"stored, persistent, shared", stateIntent{stores: true, survives: true, shared: true}, "", contractState{"stateful", "shared", "persistent", "medium"}},
		{"hybrid is kept", stateIntent{stores: true}, "hybrid", contractState{"hybrid", "local", "ephemeral", "medium"}},
		{"hybrid without data is stateless", stateIntent{}, "hybrid", contractState{"stateless", "local", "ephemeral", "low"}},
		{"criticality given", stateIntent{stores: true, criticality: "high"}, "", contractState{"stateful", "local", "ephemeral", "high"}},
		{"criticality given without data", stateIntent{criticality: "medium"}, "", contractState{"stateless", "local", "ephemeral", "medium"}},
	} {
		t.Run("state/"+tc.name, func(t *testing.T) {
			if got := mapState(tc.intent, tc.keepType); got != tc.want {
				t.Errorf("mapState = %+v; want %+v", got, tc.want)
			}
		})
	}
}
