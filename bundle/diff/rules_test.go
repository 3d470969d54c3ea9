package diff_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/kubepact/kubepact/bundle"
	"github.com/kubepact/kubepact/bundle/contract"
	"github.com/kubepact/kubepact/bundle/diff"
)

// The OpenAPI documents the rows swap in for interfaces/openapi.yaml.
const (
	specItems = `openapi: 3.0.3
info: {title: shop, version: "1"}
paths:
  /items:
    get: {responses: {"200": {description: ok}}}
    post: {responses: {"201": {description: created}}}
`
	// specItems with POST /items gone.
	specNoPost = `openapi: 3.0.3
info: {title: shop, version: "1"}
paths:
  /items:
    get: {responses: {"200": {description: ok}}}
`
	// specItems plus DELETE /items.
	specWithDelete = `openapi: 3.0.3
info: {title: shop, version: "1"}
paths:
  /items:
    get: {responses: {"200": {description: ok}}}
    post: {responses: {"201": {description: created}}}
    delete: {responses: {"204": {description: gone}}}
`
	// specParams: a path-item parameter shared by both operations, an
	// optional query parameter, and a body whose schema (by $ref) requires
	// one property.
	specParams = `openapi: 3.0.3
info: {title: shop, version: "1"}
paths:
  /items:
    parameters:
      - {name: X-Tenant, in: header, schema: {type: string}}
    get:
      parameters:
        - $ref: '#/components/parameters/limit'
      responses: {"200": {description: ok}}
    post:
      requestBody:
        content:
          application/json: {schema: {$ref: '#/components/schemas/Item'}}
      responses: {"201": {description: created}}
components:
  parameters:
    limit: {name: limit, in: query, schema: {type: integer}}
  schemas:
    Item: {type: object, required: [name], properties: {name: {type: string}, price: {type: number}}}
`
	// specItems with the same operations and another description.
	specReworded = `openapi: 3.0.3
info: {title: shop, version: "1", description: the shop's items}
paths:
  /items:
    get: {responses: {"200": {description: the items}}}
    post: {responses: {"201": {description: created}}}
`
)

// baseContract is the revision every row starts from: one public OpenAPI
// interface, one gRPC interface, an optional configuration, a policy, an
// optional dependency, state, two capabilities and metadata.
func baseContract() *contract.Contract {
	return &contract.Contract{
		PactoVersion: "2.0",
		Service:      contract.Service{Name: "shop", Version: "1.2.0", Owner: &contract.Owner{Team: "commerce"}},
		Interfaces: []contract.Interface{
			{Name: "http", Type: "openapi", Ref: "interfaces/openapi.yaml", Visibility: "public"},
			{Name: "rpc", Type: "grpc", Ref: "interfaces/shop.proto", Visibility: "internal"},
		},
		Configurations: []contract.Configuration{{Name: "settings", Schema: "configuration/schema.json", Values: map[string]any{"pageSize": int64(20)}}},
		Policies:       []contract.Policy{{Name: "owned", Schema: "policies/owned.json"}},
		Dependencies:   []contract.Dependency{{Name: "payments", Ref: "oci://registry.example/payments:1.0.0", Compatibility: "^1.0.0"}},
		Workload:       "service",
		State: &contract.State{
			Type:            "stateless",
			Persistence:     contract.Persistence{Scope: "local", Durability: "ephemeral"},
			DataCriticality: "low",
		},
		Capabilities: []contract.Capability{{Type: "health"}, {Type: "metrics"}},
		Metadata:     map[string]any{"tier": "edge"},
	}
}

// baseFiles are the base revision's files besides pacto.yaml.
func baseFiles() map[string]string {
	return map[string]string{
		"interfaces/openapi.yaml":   specItems,
		"interfaces/shop.proto":     "syntax = \"proto3\";\nservice Shop { rpc List(Empty) returns (Empty); }\nmessage Empty {}\n",
		"configuration/schema.json": `{"type": "object"}`,
		"policies/owned.json":       `{"type": "object"}`,
	}
}

// revision writes a bundle directory: the contract as pacto.yaml and the
// files, and loads it as kubepact loads any directory.
func revision(t *testing.T, c *contract.Contract, files map[string]string) *bundle.Bundle {
	t.Helper()
	dir := t.TempDir()
	raw, err := yaml.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	files["pacto.yaml"] = string(raw)
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	b, err := bundle.LoadDir(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if b.Contract == nil {
		t.Fatalf("the row's pacto.yaml does not parse: %v\n%s", b.ParseErr, raw)
	}
	return b
}

// rule is one classification the diff makes: where, what kind of change,
// and how severe.
type rule struct{ Path, Kind, Classification string }

// unchangedVersion is the entry a BREAKING change adds while
// service.version stays 1.2.0 (JudgeBump's rules are TestJudgeBump's).
var unchangedVersion = rule{"service.version", "unchanged", diff.Breaking}

// TestClassificationRules is the specification of bundle/diff: one row per
// rule, each a change to a base revision (contract or files) and the entries
// the diff must give for it, path, kind and classification.
func TestClassificationRules(t *testing.T) {
	tests := []struct {
		name    string
		older   func(c *contract.Contract, files map[string]string) // the base changed for the older revision; nil: the base
		newer   func(c *contract.Contract, files map[string]string) // the base changed for the newer revision
		want    []rule
		overall string
	}{
		{name: "nothing changes", newer: func(*contract.Contract, map[string]string) {}, overall: diff.NonBreaking},

		// The service identity.
		{name: "the service is renamed",
			newer: func(c *contract.Contract, _ map[string]string) { c.Service.Name = "store" },
			want:  []rule{{"service.name", "changed", diff.Breaking}, unchangedVersion}, overall: diff.Breaking},
		{name: "the owning team changes",
			newer: func(c *contract.Contract, _ map[string]string) { c.Service.Owner.Team = "platform" },
			want:  []rule{{"service.owner.team", "changed", diff.NonBreaking}}, overall: diff.NonBreaking},
		{name: "the owner is removed",
			newer: func(c *contract.Contract, _ map[string]string) { c.Service.Owner = nil },
			want:  []rule{{"service.owner.team", "removed", diff.NonBreaking}}, overall: diff.NonBreaking},
		{name: "a compatible version bump with a compatible change",
			newer: func(c *contract.Contract, _ map[string]string) {
				c.Service.Version = "1.3.0"
				c.Metadata["tier"] = "core"
			},
			want: []rule{{"service.version", "changed", diff.NonBreaking}, {"metadata", "changed", diff.NonBreaking}}, overall: diff.NonBreaking},
		{name: "a minor bump with a breaking change",
			newer: func(c *contract.Contract, _ map[string]string) { c.Service.Version = "1.3.0"; c.Service.Name = "store" },
			want:  []rule{{"service.name", "changed", diff.Breaking}, {"service.version", "changed", diff.Breaking}}, overall: diff.Breaking},
		{name: "a major bump with a breaking change",
			newer: func(c *contract.Contract, _ map[string]string) { c.Service.Version = "2.0.0"; c.Service.Name = "store" },
			want:  []rule{{"service.name", "changed", diff.Breaking}, {"service.version", "changed", diff.PotentiallyBreaking}}, overall: diff.Breaking},

		// How it runs.
		{name: "the workload kind changes",
			newer: func(c *contract.Contract, _ map[string]string) { c.Workload = "job" },
			want:  []rule{unchangedVersion, {"workload", "changed", diff.Breaking}}, overall: diff.Breaking},
		{name: "the workload kind is removed",
			newer: func(c *contract.Contract, _ map[string]string) { c.Workload = "" },
			want:  []rule{unchangedVersion, {"workload", "removed", diff.Breaking}}, overall: diff.Breaking},
		{name: "a workload kind is declared",
			older: func(c *contract.Contract, _ map[string]string) { c.Workload = "" },
			newer: func(*contract.Contract, map[string]string) {},
			want:  []rule{{"workload", "added", diff.NonBreaking}}, overall: diff.NonBreaking},
		{name: "the state declaration is removed",
			newer: func(c *contract.Contract, _ map[string]string) { c.State = nil },
			want:  []rule{{"state", "changed", diff.PotentiallyBreaking}}, overall: diff.PotentiallyBreaking},
		{name: "the state type changes",
			newer: func(c *contract.Contract, _ map[string]string) { c.State.Type = "stateful" },
			want:  []rule{{"state.type", "changed", diff.PotentiallyBreaking}}, overall: diff.PotentiallyBreaking},
		{name: "the persistence scope changes",
			newer: func(c *contract.Contract, _ map[string]string) { c.State.Persistence.Scope = "shared" },
			want:  []rule{{"state.persistence.scope", "changed", diff.PotentiallyBreaking}}, overall: diff.PotentiallyBreaking},
		{name: "the durability changes",
			newer: func(c *contract.Contract, _ map[string]string) { c.State.Persistence.Durability = "persistent" },
			want:  []rule{{"state.persistence.durability", "changed", diff.PotentiallyBreaking}}, overall: diff.PotentiallyBreaking},
		{name: "the data criticality changes",
			newer: func(c *contract.Contract, _ map[string]string) { c.State.DataCriticality = "high" },
			want:  []rule{{"state.dataCriticality", "changed", diff.NonBreaking}}, overall: diff.NonBreaking},

		// Interfaces.
		{name: "an interface is added",
			newer: func(c *contract.Contract, f map[string]string) {
				c.Interfaces = append(c.Interfaces, contract.Interface{Name: "events", Type: "asyncapi", Ref: "interfaces/events.yaml"})
				f["interfaces/events.yaml"] = "asyncapi: 2.6.0\ninfo: {title: events, version: \"1\"}\nchannels: {}\n"
			},
			want: []rule{{"interfaces.events", "added", diff.NonBreaking}}, overall: diff.NonBreaking},
		{name: "an interface is removed",
			newer: func(c *contract.Contract, _ map[string]string) { c.Interfaces = c.Interfaces[:1] },
			want:  []rule{unchangedVersion, {"interfaces.rpc", "removed", diff.Breaking}}, overall: diff.Breaking},
		{name: "an interface changes protocol",
			newer: func(c *contract.Contract, _ map[string]string) { c.Interfaces[1].Type = "asyncapi" },
			want:  []rule{unchangedVersion, {"interfaces.rpc.type", "changed", diff.Breaking}}, overall: diff.Breaking},
		{name: "a public interface becomes internal",
			newer: func(c *contract.Contract, _ map[string]string) { c.Interfaces[0].Visibility = "internal" },
			want:  []rule{unchangedVersion, {"interfaces.http.visibility", "changed", diff.Breaking}}, overall: diff.Breaking},
		{name: "an internal interface becomes public",
			newer: func(c *contract.Contract, _ map[string]string) { c.Interfaces[1].Visibility = "public" },
			want:  []rule{{"interfaces.rpc.visibility", "changed", diff.NonBreaking}}, overall: diff.NonBreaking},
		{name: "an OpenAPI operation is removed",
			newer: func(_ *contract.Contract, f map[string]string) { f["interfaces/openapi.yaml"] = specNoPost },
			want:  []rule{unchangedVersion, {"interfaces.http.operations.POST /items", "removed", diff.Breaking}}, overall: diff.Breaking},
		{name: "an OpenAPI operation is added",
			newer: func(_ *contract.Contract, f map[string]string) { f["interfaces/openapi.yaml"] = specWithDelete },
			want:  []rule{{"interfaces.http.operations.DELETE /items", "added", diff.NonBreaking}}, overall: diff.NonBreaking},
		{name: "an OpenAPI document changes with the same operations",
			newer: func(_ *contract.Contract, f map[string]string) { f["interfaces/openapi.yaml"] = specReworded },
			want:  []rule{{"interfaces.http.spec", "changed", diff.PotentiallyBreaking}}, overall: diff.PotentiallyBreaking},
		{name: "a path-item parameter goes from optional to required",
			older: func(_ *contract.Contract, f map[string]string) { f["interfaces/openapi.yaml"] = specParams },
			newer: func(_ *contract.Contract, f map[string]string) {
				f["interfaces/openapi.yaml"] = strings.Replace(specParams, "{name: X-Tenant, in: header,", "{name: X-Tenant, in: header, required: true,", 1)
			},
			want: []rule{unchangedVersion,
				{"interfaces.http.operations.GET /items.parameters.header.X-Tenant.required", "changed", diff.Breaking},
				{"interfaces.http.operations.POST /items.parameters.header.X-Tenant.required", "changed", diff.Breaking}}, overall: diff.Breaking},
		{name: "a path-item parameter is removed",
			older: func(_ *contract.Contract, f map[string]string) { f["interfaces/openapi.yaml"] = specParams },
			newer: func(_ *contract.Contract, f map[string]string) {
				f["interfaces/openapi.yaml"] = strings.Replace(specParams, "    parameters:\n      - {name: X-Tenant, in: header, schema: {type: string}}\n", "", 1)
			},
			want: []rule{
				{"interfaces.http.operations.GET /items.parameters.header.X-Tenant", "removed", diff.PotentiallyBreaking},
				{"interfaces.http.operations.POST /items.parameters.header.X-Tenant", "removed", diff.PotentiallyBreaking}}, overall: diff.PotentiallyBreaking},
		{name: "an operation's parameter (by $ref) goes from optional to required",
			older: func(_ *contract.Contract, f map[string]string) { f["interfaces/openapi.yaml"] = specParams },
			newer: func(_ *contract.Contract, f map[string]string) {
				f["interfaces/openapi.yaml"] = strings.Replace(specParams, "limit: {name: limit, in: query,", "limit: {name: limit, in: query, required: true,", 1)
			},
			want: []rule{unchangedVersion, {"interfaces.http.operations.GET /items.parameters.query.limit.required", "changed", diff.Breaking}}, overall: diff.Breaking},
		{name: "a parameter goes from required to optional",
			older: func(_ *contract.Contract, f map[string]string) {
				f["interfaces/openapi.yaml"] = strings.Replace(specParams, "limit: {name: limit, in: query,", "limit: {name: limit, in: query, required: true,", 1)
			},
			newer: func(_ *contract.Contract, f map[string]string) { f["interfaces/openapi.yaml"] = specParams },
			want:  []rule{{"interfaces.http.operations.GET /items.parameters.query.limit.required", "changed", diff.NonBreaking}}, overall: diff.NonBreaking},
		{name: "a required parameter is added",
			older: func(_ *contract.Contract, f map[string]string) { f["interfaces/openapi.yaml"] = specParams },
			newer: func(_ *contract.Contract, f map[string]string) {
				f["interfaces/openapi.yaml"] = strings.Replace(specParams, "        - $ref: '#/components/parameters/limit'\n", "        - $ref: '#/components/parameters/limit'\n        - {name: page, in: query, required: true, schema: {type: integer}}\n", 1)
			},
			want: []rule{unchangedVersion, {"interfaces.http.operations.GET /items.parameters.query.page", "added", diff.Breaking}}, overall: diff.Breaking},
		{name: "an optional parameter is added",
			older: func(_ *contract.Contract, f map[string]string) { f["interfaces/openapi.yaml"] = specParams },
			newer: func(_ *contract.Contract, f map[string]string) {
				f["interfaces/openapi.yaml"] = strings.Replace(specParams, "        - $ref: '#/components/parameters/limit'\n", "        - $ref: '#/components/parameters/limit'\n        - {name: page, in: query, schema: {type: integer}}\n", 1)
			},
			want: []rule{{"interfaces.http.operations.GET /items.parameters.query.page", "added", diff.NonBreaking}}, overall: diff.NonBreaking},
		{name: "a body property becomes required",
			older: func(_ *contract.Contract, f map[string]string) { f["interfaces/openapi.yaml"] = specParams },
			newer: func(_ *contract.Contract, f map[string]string) {
				f["interfaces/openapi.yaml"] = strings.Replace(specParams, "required: [name]", "required: [name, price]", 1)
			},
			want: []rule{unchangedVersion, {"interfaces.http.operations.POST /items.requestBody.application/json.required.price", "added", diff.Breaking}}, overall: diff.Breaking},
		{name: "a body property is no longer required",
			older: func(_ *contract.Contract, f map[string]string) { f["interfaces/openapi.yaml"] = specParams },
			newer: func(_ *contract.Contract, f map[string]string) {
				f["interfaces/openapi.yaml"] = strings.Replace(specParams, "required: [name]", "required: []", 1)
			},
			want: []rule{{"interfaces.http.operations.POST /items.requestBody.application/json.required.name", "removed", diff.NonBreaking}}, overall: diff.NonBreaking},
		{name: "the request body becomes required",
			older: func(_ *contract.Contract, f map[string]string) { f["interfaces/openapi.yaml"] = specParams },
			newer: func(_ *contract.Contract, f map[string]string) {
				f["interfaces/openapi.yaml"] = strings.Replace(specParams, "      requestBody:\n", "      requestBody:\n        required: true\n", 1)
			},
			want: []rule{unchangedVersion, {"interfaces.http.operations.POST /items.requestBody.required", "changed", diff.Breaking}}, overall: diff.Breaking},
		{name: "another spec file changes",
			newer: func(_ *contract.Contract, f map[string]string) {
				f["interfaces/shop.proto"] = "syntax = \"proto3\";\n// the shop\nservice Shop { rpc List(Empty) returns (Empty); }\nmessage Empty {}\n"
			},
			want: []rule{{"interfaces.rpc.spec", "changed", diff.PotentiallyBreaking}}, overall: diff.PotentiallyBreaking},
		{name: "a spec cannot be read in the new revision",
			newer: func(_ *contract.Contract, f map[string]string) { delete(f, "interfaces/shop.proto") },
			want:  []rule{{"interfaces.rpc.spec", "removed", diff.PotentiallyBreaking}}, overall: diff.PotentiallyBreaking},
		{name: "a spec can be read only in the new revision",
			older: func(_ *contract.Contract, f map[string]string) { delete(f, "interfaces/shop.proto") },
			newer: func(*contract.Contract, map[string]string) {},
			want:  []rule{{"interfaces.rpc.spec", "added", diff.PotentiallyBreaking}}, overall: diff.PotentiallyBreaking},
		{name: "an unreadable spec's reference changes",
			older: func(_ *contract.Contract, f map[string]string) { delete(f, "interfaces/shop.proto") },
			newer: func(c *contract.Contract, f map[string]string) {
				delete(f, "interfaces/shop.proto")
				c.Interfaces[1].Ref = "interfaces/v2.proto"
			},
			want: []rule{{"interfaces.rpc.spec", "changed", diff.PotentiallyBreaking}}, overall: diff.PotentiallyBreaking},

		// Configurations.
		{name: "an optional configuration is added",
			newer: func(c *contract.Contract, _ map[string]string) {
				c.Configurations = append(c.Configurations, contract.Configuration{Name: "extra", Schema: "configuration/schema.json"})
			},
			want: []rule{{"configurations.extra", "added", diff.NonBreaking}}, overall: diff.NonBreaking},
		{name: "a required configuration is added",
			newer: func(c *contract.Contract, _ map[string]string) {
				c.Configurations = append(c.Configurations, contract.Configuration{Name: "extra", Required: true, Schema: "configuration/schema.json"})
			},
			want: []rule{unchangedVersion, {"configurations.extra", "added", diff.Breaking}}, overall: diff.Breaking},
		{name: "a configuration becomes required",
			newer: func(c *contract.Contract, _ map[string]string) { c.Configurations[0].Required = true },
			want:  []rule{unchangedVersion, {"configurations.settings.required", "changed", diff.Breaking}}, overall: diff.Breaking},
		{name: "a configuration's schema source changes",
			newer: func(c *contract.Contract, f map[string]string) {
				c.Configurations[0].Schema = "configuration/v2.json"
				f["configuration/v2.json"] = `{"type": "object"}`
			},
			want: []rule{{"configurations.settings.schema", "changed", diff.PotentiallyBreaking}}, overall: diff.PotentiallyBreaking},
		{name: "a configuration's values change",
			newer: func(c *contract.Contract, _ map[string]string) { c.Configurations[0].Values["pageSize"] = int64(50) },
			want:  []rule{{"configurations.settings.values", "changed", diff.NonBreaking}}, overall: diff.NonBreaking},
		{name: "a configuration is removed",
			newer: func(c *contract.Contract, _ map[string]string) { c.Configurations = nil },
			want:  []rule{{"configurations.settings", "removed", diff.PotentiallyBreaking}}, overall: diff.PotentiallyBreaking},

		// Policies.
		{name: "a policy is added",
			newer: func(c *contract.Contract, _ map[string]string) {
				c.Policies = append(c.Policies, contract.Policy{Name: "tagged", Schema: "policies/owned.json"})
			},
			want: []rule{{"policies.tagged", "added", diff.PotentiallyBreaking}}, overall: diff.PotentiallyBreaking},
		{name: "a policy is removed",
			newer: func(c *contract.Contract, _ map[string]string) { c.Policies = nil },
			want:  []rule{{"policies.owned", "removed", diff.NonBreaking}}, overall: diff.NonBreaking},

		// Dependencies.
		{name: "an optional dependency is added",
			newer: func(c *contract.Contract, _ map[string]string) {
				c.Dependencies = append(c.Dependencies, contract.Dependency{Name: "search", Ref: "oci://registry.example/search:2.0.0", Compatibility: "^2.0.0"})
			},
			want: []rule{{"dependencies.search", "added", diff.NonBreaking}}, overall: diff.NonBreaking},
		{name: "a required dependency is added",
			newer: func(c *contract.Contract, _ map[string]string) {
				c.Dependencies = append(c.Dependencies, contract.Dependency{Name: "search", Ref: "oci://registry.example/search:2.0.0", Required: true, Compatibility: "^2.0.0"})
			},
			want: []rule{{"dependencies.search", "added", diff.PotentiallyBreaking}}, overall: diff.PotentiallyBreaking},
		{name: "a dependency's range changes",
			newer: func(c *contract.Contract, _ map[string]string) { c.Dependencies[0].Compatibility = "^1.4.0" },
			want:  []rule{{"dependencies.payments.compatibility", "changed", diff.PotentiallyBreaking}}, overall: diff.PotentiallyBreaking},
		{name: "a dependency's reference changes",
			newer: func(c *contract.Contract, _ map[string]string) {
				c.Dependencies[0].Ref = "oci://registry.example/payments:1.4.0"
			},
			want: []rule{{"dependencies.payments.ref", "changed", diff.PotentiallyBreaking}}, overall: diff.PotentiallyBreaking},
		{name: "a dependency becomes required",
			newer: func(c *contract.Contract, _ map[string]string) { c.Dependencies[0].Required = true },
			want:  []rule{{"dependencies.payments.required", "changed", diff.PotentiallyBreaking}}, overall: diff.PotentiallyBreaking},
		{name: "a dependency is removed",
			newer: func(c *contract.Contract, _ map[string]string) { c.Dependencies = nil },
			want:  []rule{{"dependencies.payments", "removed", diff.NonBreaking}}, overall: diff.NonBreaking},

		// Capabilities, readiness, metadata.
		{name: "a capability is removed",
			newer: func(c *contract.Contract, _ map[string]string) { c.Capabilities = c.Capabilities[:1] },
			want:  []rule{{"capabilities.metrics", "removed", diff.PotentiallyBreaking}}, overall: diff.PotentiallyBreaking},
		{name: "a capability is added",
			older: func(c *contract.Contract, _ map[string]string) { c.Capabilities = c.Capabilities[:1] },
			newer: func(*contract.Contract, map[string]string) {},
			want:  []rule{{"capabilities.metrics", "added", diff.NonBreaking}}, overall: diff.NonBreaking},
		{name: "a readiness declaration is added",
			newer: func(c *contract.Contract, _ map[string]string) {
				c.Readiness = &contract.Readiness{Expires: "2027-01-31", Claims: []contract.ReadinessClaim{}}
			},
			want: []rule{{"readiness", "changed", diff.NonBreaking}}, overall: diff.NonBreaking},
		{name: "metadata changes",
			newer: func(c *contract.Contract, _ map[string]string) { c.Metadata["tier"] = "core" },
			want:  []rule{{"metadata", "changed", diff.NonBreaking}}, overall: diff.NonBreaking},

		// The most severe change decides.
		{name: "a breaking change among compatible ones",
			newer: func(c *contract.Contract, f map[string]string) {
				f["interfaces/openapi.yaml"] = specNoPost
				c.Policies = nil
				c.State.DataCriticality = "high"
			},
			want: []rule{
				unchangedVersion,
				{"state.dataCriticality", "changed", diff.NonBreaking},
				{"interfaces.http.operations.POST /items", "removed", diff.Breaking},
				{"policies.owned", "removed", diff.NonBreaking},
			}, overall: diff.Breaking},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			oc, of := baseContract(), baseFiles()
			if tc.older != nil {
				tc.older(oc, of)
			}
			nc, nf := baseContract(), baseFiles()
			tc.newer(nc, nf)
			changes, err := diff.Diff(t.Context(), revision(t, oc, of), revision(t, nc, nf))
			if err != nil {
				t.Fatal(err)
			}
			got := make([]rule, 0, len(changes))
			for _, c := range changes {
				got = append(got, rule{c.Path, c.Kind, c.Classification})
				if strings.TrimSpace(c.Message) == "" {
					t.Errorf("%s: no message", c.Path)
				}
			}
			if tc.want == nil {
				tc.want = []rule{}
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("changes (-want +got):\n%s", d)
			}
			if c := diff.Classification(changes); c != tc.overall {
				t.Errorf("Classification = %s; want %s", c, tc.overall)
			}
		})
	}
}
