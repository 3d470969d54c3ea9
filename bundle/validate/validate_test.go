package validate_test

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kubepact/kubepact/bundle/validate"
	"github.com/kubepact/kubepact/test/pactocompat"
)

const head = "pactoVersion: '2.0'\nservice: {name: svc, version: 1.0.0}\n"

const openAPISpec = `openapi: 3.0.3
info: {title: svc, version: "1"}
paths:
  /ping:
    get:
      operationId: ping
      responses:
        "200": {description: ok}
`

const asyncAPISpec = `{"asyncapi": "3.0.0", "info": {"title": "events", "version": "1"}}`

const protoSpec = `// auth
syntax = "proto3";
package auth.v1;
/* a { brace in a comment */
service Auth { rpc Login (LoginRequest) returns (LoginReply); }
message LoginRequest { string user = 1; string note = 2; } // "}"
message LoginReply { string token = 1; }
`

const configSchema = `{
  "type": "object",
  "properties": {
    "LOG_LEVEL": {"type": "string", "enum": ["debug", "info"]},
    "PORT": {"type": "integer"}
  },
  "additionalProperties": false
}`

// alias bomb: ten levels of ten-fold aliases, a billion leaves if expanded.
func aliasBomb() string {
	s := head + "metadata:\n  a: &a [x, x, x, x, x, x, x, x, x, x]\n"
	for i, prev := 'b', 'a'; i <= 'j'; i, prev = i+1, i {
		s += "  " + string(i) + ": &" + string(i) + " [" + strings.Repeat("*"+string(prev)+", ", 9) + "*" + string(prev) + "]\n"
	}
	return s
}

// errResolver fails every ref, like a registry that cannot be reached.
type errResolver struct{}

func (errResolver) Resolve(context.Context, string) (fs.FS, error) {
	return nil, errors.New("registry unreachable")
}

type finding struct {
	path, code, msg string
}

func TestValidateTable(t *testing.T) {
	files := fstest.MapFS{
		"interfaces/openapi.yaml":      {Data: []byte(openAPISpec)},
		"interfaces/events.json":       {Data: []byte(asyncAPISpec)},
		"interfaces/auth.proto":        {Data: []byte(protoSpec)},
		"interfaces/v31.yaml":          {Data: []byte("openapi: 3.1.0\ninfo: {title: t, version: '1'}\npaths:\n  /a:\n    get:\n      responses:\n        '200':\n          description: ok\n          content:\n            application/json:\n              schema: {type: [string, 'null']}\n")},
		"interfaces/broken.yaml":       {Data: []byte("openapi: 3.0.3\ninfo: {title: x}\n")},
		"interfaces/swagger.json":      {Data: []byte(`{"swagger": "2.0", "info": {"title": "s", "version": "1"}, "paths": {}}`)},
		"interfaces/notapi.yaml":       {Data: []byte("hello: world\n")},
		"interfaces/extref.yaml":       {Data: []byte(openAPISpec + "components:\n  schemas:\n    X: {$ref: 'https://evil.example/x.yaml#/X'}\n")},
		"interfaces/missingref.yaml":   {Data: []byte(openAPISpec + "      parameters: [{name: q, in: query, schema: {$ref: '#/components/schemas/Nope'}}]\ncomponents:\n  schemas:\n    Node: {type: string}\n    Note: {type: string}\n")},
		"interfaces/nocomponents.yaml": {Data: []byte(openAPISpec + "      parameters: [{name: q, in: query, schema: {$ref: '#/components/schemas/Nope'}}]\n")},
		"interfaces/swaggerref.json":   {Data: []byte(`{"swagger": "2.0", "info": {"title": "s", "version": "1"}, "paths": {}, "definitions": {"A": {"$ref": "#/definitions/B"}}}`)},
		"interfaces/unbalanced.proto":  {Data: []byte("syntax = \"proto3\";\nmessage A {\n")},
		"interfaces/unknowntype.proto": {Data: []byte("syntax = \"proto3\";\nmessage A {\n  Nope b = 1;\n}\n")},
		"interfaces/escapes.proto":     {Data: []byte("syntax = \"proto3\";\nimport \"../../etc/x.proto\";\nmessage A {}\n")},
		"interfaces/cycle.yaml":        {Data: []byte(openAPISpec + "      parameters: [{name: q, in: query, schema: {$ref: '#/components/schemas/A'}}]\ncomponents:\n  schemas:\n    A: {anyOf: [{$ref: '#/components/schemas/B'}, {type: string}]}\n    B: {allOf: [{$ref: '#/components/schemas/A'}]}\n")},
		"interfaces/tree.yaml":         {Data: []byte(openAPISpec + "components:\n  schemas:\n    Node: {type: object, properties: {children: {type: array, items: {$ref: '#/components/schemas/Node'}}}}\n")},
		"interfaces/swaggercycle.json": {Data: []byte(`{"swagger": "2.0", "info": {"title": "s", "version": "1"}, "paths": {}, "definitions": {"A": {"allOf": [{"$ref": "#/definitions/A"}]}}}`)},
		"interfaces/bad.json":          {Data: []byte("{not json")},
		"configuration/schema.json":    {Data: []byte(configSchema)},
		"configuration/bad.json":       {Data: []byte("{\"type\": ")},
		"configuration/wrong.json":     {Data: []byte(`{"type": 5}`)},
		"configuration/remote.json":    {Data: []byte(`{"$ref": "https://evil.example/schema.json"}`)},
		"configuration/local.json":     {Data: []byte(`{"$ref": "file:///etc/passwd"}`)},
		"policy/schema.json":           {Data: []byte(`{"type": "object", "required": ["workload"], "properties": {"workload": {"const": "service"}}}`)},
	}
	policyBundle := fstest.MapFS{
		"pacto.yaml":         {Data: []byte(head)},
		"policy/schema.json": {Data: []byte(`{"type": "object", "required": ["metadata"], "properties": {"metadata": {"required": ["tier"]}}}`)},
	}
	cycleA := fstest.MapFS{"pacto.yaml": {Data: []byte(head + "policies: [{name: next, ref: 'oci://r.example/b'}]\n")}}
	cycleB := fstest.MapFS{"pacto.yaml": {Data: []byte(head + "policies: [{name: next, ref: 'oci://r.example/a'}]\n")}}
	configBundle := fstest.MapFS{"pacto.yaml": {Data: []byte(head)}, "configuration/schema.json": {Data: []byte(configSchema)}}
	resolver := mapResolver{
		"oci://r.example/policy": policyBundle,
		"oci://r.example/a":      cycleA,
		"oci://r.example/b":      cycleB,
		"oci://r.example/config": configBundle,
		"oci://r.example/empty":  fstest.MapFS{"pacto.yaml": {Data: []byte(head)}},
	}
	withResolver := &validate.Options{Resolver: resolver}

	tests := []struct {
		name     string
		src      string
		opts     *validate.Options
		errors   []finding // each must appear (path and code exact, message substring)
		warnings []finding
		valid    bool
	}{
		{name: "minimal contract", src: head, valid: true},
		{name: "every interface kind", valid: true, src: head + `interfaces:
  - {name: http, type: openapi, ref: ./interfaces/openapi.yaml}
  - {name: legacy, type: openapi, ref: interfaces/swagger.json}
  - {name: modern, type: openapi, ref: interfaces/v31.yaml}
  - {name: events, type: asyncapi, ref: interfaces/events.json}
  - {name: rpc, type: grpc, ref: interfaces/auth.proto}
capabilities:
  - {type: health, binding: {type: http, interface: http, path: /healthz}}
  - {type: extension, ref: example.com/custom}
`},

		// Structural layer.
		{name: "alias bomb", src: aliasBomb(), errors: []finding{{"", "YAML_PARSE_ERROR", "alias bomb"}}},
		{name: "huge input", src: head + "metadata: {pad: '" + strings.Repeat("x", 5<<20) + "'}\n", errors: []finding{{"", "YAML_PARSE_ERROR", "the limit is 4194304 bytes"}}},
		{name: "two documents", src: head + "---\n" + head, errors: []finding{{"", "YAML_PARSE_ERROR", "second YAML document"}}},
		{name: "not a mapping", src: "[1, 2]\n", errors: []finding{{"", "YAML_PARSE_ERROR", "root must be a mapping"}}},
		{name: "old pactoVersion", src: "pactoVersion: '1.0'\nservice: {name: svc, version: 1.0.0}\n", errors: []finding{{"pactoVersion", "UNSUPPORTED_PACTO_VERSION", `the only supported version is "2.0"`}}},
		{name: "pactoVersion as a number", src: "pactoVersion: 2.0\nservice: {name: svc, version: 1.0.0}\n", errors: []finding{{"pactoVersion", "UNSUPPORTED_PACTO_VERSION", "not a string (YAML reads an unquoted 2.0 as a number); write it quoted"}}},
		{name: "unknown field", src: head + "runtime: {replicas: 2}\n", errors: []finding{{"runtime", "SCHEMA_VIOLATION", `unknown field "runtime"; allowed fields: capabilities, configurations, dependencies`}}},
		{name: "unknown nested field", src: head + "interfaces: [{name: a, type: grpc, ref: interfaces/auth.proto, port: 80}]\n", errors: []finding{{"interfaces[0].port", "SCHEMA_VIOLATION", "allowed fields: name, ref, type, visibility"}}},
		{name: "wrong type", src: "pactoVersion: '2.0'\nservice: {name: svc, version: 1}\n", errors: []finding{{"service.version", "SCHEMA_VIOLATION", "must be a string, got number"}}},
		{name: "wrong type for a list", src: head + "interfaces: {name: a}\n", errors: []finding{{"interfaces", "SCHEMA_VIOLATION", "must be an array, got object"}}},
		{name: "missing required", src: "pactoVersion: '2.0'\nservice: {name: svc}\n", errors: []finding{{"service.version", "SCHEMA_VIOLATION", `missing required field "version": Version of this contract revision.`}}},
		{name: "missing service", src: "pactoVersion: '2.0'\n", errors: []finding{{"service", "SCHEMA_VIOLATION", `missing required field "service": Identity of the service`}}},
		{name: "bad enum", src: head + "interfaces: [{name: a, type: soap, ref: x}]\n", errors: []finding{{"interfaces[0].type", "SCHEMA_VIOLATION", `"soap" is not allowed; must be one of: "openapi", "asyncapi", "grpc"`}}},
		{name: "bad name pattern", src: "pactoVersion: '2.0'\nservice: {name: My_Service, version: 1.0.0}\n", errors: []finding{{"service.name", "SCHEMA_VIOLATION", "DNS-label style"}}},
		{name: "stateless but persistent", src: head + "state: {type: stateless, persistence: {scope: local, durability: persistent}, dataCriticality: low}\n", errors: []finding{{"state.persistence.durability", "SCHEMA_VIOLATION", "a stateless service keeps no state"}}},
		{name: "configuration with schema and ref", src: head + "configurations: [{name: c, required: true, schema: configuration/schema.json, ref: 'oci://r.example/config'}]\n", errors: []finding{{"configurations[0]", "SCHEMA_VIOLATION", "use exactly one of: inline schema"}}},
		{name: "values without schema", src: head + "configurations: [{name: c, required: true, values: {A: 1}}]\n", errors: []finding{{"configurations[0]", "SCHEMA_VIOLATION", "matches none of the allowed forms"}}},
		{name: "extension without ref", src: head + "capabilities: [{type: extension}]\n", errors: []finding{{"capabilities[0]", "SCHEMA_VIOLATION", "extension: type extension with ref"}}},
		{name: "weight out of range", src: head + "readiness: {expires: '2030-01-01', claims: [{id: a, type: url, status: done, evidence: x, weight: 101}]}\n", errors: []finding{{"readiness.claims[0].weight", "SCHEMA_VIOLATION", "maximum"}}},
		{name: "schema violation short-circuits cross-field", src: head + "workload: forever\ninterfaces: [{name: a, type: openapi, ref: missing.yaml}]\n", errors: []finding{{"workload", "SCHEMA_VIOLATION", `"forever" is not allowed; must be one of: "service", "job", "scheduled"`}}},

		// Cross-field layer.
		{name: "bad semver", src: "pactoVersion: '2.0'\nservice: {name: svc, version: one.two}\n", errors: []finding{{"service.version", "INVALID_SEMVER", "MAJOR.MINOR.PATCH"}}},
		{name: "duplicate interface names", src: head + "interfaces:\n  - {name: a, type: openapi, ref: interfaces/openapi.yaml}\n  - {name: a, type: asyncapi, ref: interfaces/events.json}\n", errors: []finding{{"interfaces[1].name", "DUPLICATE_INTERFACE_NAME", `duplicate interface name "a": already declared at interfaces[0]`}}},
		{name: "duplicate dependency names", src: head + "dependencies:\n  - {name: d, ref: 'oci://r.example/d', required: true, compatibility: ^1.0.0}\n  - {name: d, ref: 'oci://r.example/e', required: true, compatibility: ^1.0.0}\n", errors: []finding{{"dependencies[1].name", "DUPLICATE_DEPENDENCY_NAME", "names must be unique"}}},
		{name: "duplicate policy and configuration names", src: head + "policies: [{name: p, schema: policy/schema.json}, {name: p, schema: policy/schema.json}]\nconfigurations: [{name: c, required: true, schema: configuration/schema.json}, {name: c, required: false, schema: configuration/schema.json}]\n",
			errors: []finding{{"policies[1].name", "DUPLICATE_POLICY_NAME", "already declared"}, {"configurations[1].name", "DUPLICATE_CONFIGURATION_NAME", "already declared"}}},
		{name: "missing interface file", src: head + "interfaces: [{name: a, type: openapi, ref: interfaces/nope.yaml}]\n", errors: []finding{{"interfaces[0].ref", "FILE_NOT_FOUND", `"interfaces/nope.yaml" does not exist in the bundle`}}},
		{name: "path traversal", src: head + "interfaces: [{name: a, type: openapi, ref: ../../etc/passwd}]\n", errors: []finding{{"interfaces[0].ref", "FILE_NOT_FOUND", "not a path inside the bundle"}}},
		{name: "absolute path", src: head + "interfaces: [{name: a, type: openapi, ref: /etc/passwd}]\n", errors: []finding{{"interfaces[0].ref", "FILE_NOT_FOUND", "not a path inside the bundle"}}},
		{name: "invalid openapi", src: head + "interfaces: [{name: a, type: openapi, ref: interfaces/broken.yaml}]\n", errors: []finding{{"interfaces[0].ref", "INVALID_INTERFACE_SPEC", "OpenAPI document is invalid"}}},
		{name: "openapi with an external ref", src: head + "interfaces: [{name: a, type: openapi, ref: interfaces/extref.yaml}]\n", errors: []finding{{"interfaces[0].ref", "INVALID_INTERFACE_SPEC",
			`the $ref "https://evil.example/x.yaml#/X" at components.schemas.X points outside the document: a bundle's interface documents must be self-contained, so external $refs are not allowed`}}},
		{name: "openapi with a missing internal ref", src: head + "interfaces: [{name: a, type: openapi, ref: interfaces/missingref.yaml}]\n", errors: []finding{{"interfaces[0].ref", "INVALID_INTERFACE_SPEC",
			`interfaces/missingref.yaml is not a valid openapi spec: the $ref "#/components/schemas/Nope" at paths./ping.get.parameters[0].schema points to nothing: components.schemas has no "Nope" (it holds Node, Note; did you mean "Node"?): define it, or point the $ref at what exists`}}},
		{name: "openapi ref into components it lacks", src: head + "interfaces: [{name: a, type: openapi, ref: interfaces/nocomponents.yaml}]\n", errors: []finding{{"interfaces[0].ref", "INVALID_INTERFACE_SPEC",
			`the $ref "#/components/schemas/Nope" at paths./ping.get.parameters[0].schema points to nothing: the document has no "components" (it holds info, openapi, paths)`}}},
		{name: "swagger with a missing ref", src: head + "interfaces: [{name: a, type: openapi, ref: interfaces/swaggerref.json}]\n", errors: []finding{{"interfaces[0].ref", "INVALID_INTERFACE_SPEC",
			`the $ref "#/definitions/B" at definitions.A points to nothing: definitions has no "B" (it holds A; did you mean "A"?): define it`}}},
		{name: "openapi schema cycle (issue 10)", src: head + "interfaces: [{name: a, type: openapi, ref: interfaces/cycle.yaml}]\n", errors: []finding{{"interfaces[0].ref", "SCHEMA_REF_CYCLE", "interfaces/cycle.yaml: the $ref cycle #/components/schemas/A → #/components/schemas/B → #/components/schemas/A returns to itself"}}},
		{name: "swagger schema cycle", src: head + "interfaces: [{name: a, type: openapi, ref: interfaces/swaggercycle.json}]\n", errors: []finding{{"interfaces[0].ref", "SCHEMA_REF_CYCLE", "#/definitions/A → #/definitions/A"}}},
		{name: "a recursive tree is fine", valid: true, src: head + "interfaces: [{name: a, type: openapi, ref: interfaces/tree.yaml}]\n"},
		{name: "not an openapi document", src: head + "interfaces: [{name: a, type: openapi, ref: interfaces/notapi.yaml}]\n", errors: []finding{{"interfaces[0].ref", "INVALID_INTERFACE_SPEC", `expected a top-level "openapi: 3.x.y"`}}},
		{name: "asyncapi spec that is openapi", src: head + "interfaces: [{name: a, type: asyncapi, ref: interfaces/openapi.yaml}]\n", errors: []finding{{"interfaces[0].ref", "INVALID_INTERFACE_SPEC", `expected a top-level "asyncapi" version field`}}},
		{name: "unparseable spec", src: head + "interfaces: [{name: a, type: asyncapi, ref: interfaces/bad.json}]\n", errors: []finding{{"interfaces[0].ref", "INVALID_INTERFACE_SPEC", "not parseable as YAML or JSON"}}},
		{name: "a proto that does not compile", src: head + "interfaces: [{name: a, type: grpc, ref: interfaces/unknowntype.proto}]\n", errors: []finding{{"interfaces[0].ref", "INVALID_INTERFACE_SPEC", "interfaces/unknowntype.proto:3:3: field A.b: unknown type Nope"}}},
		{name: "a proto importing outside the bundle", src: head + "interfaces: [{name: a, type: grpc, ref: interfaces/escapes.proto}]\n", errors: []finding{{"interfaces[0].ref", "INVALID_INTERFACE_SPEC", `import "../../etc/x.proto" leaves the bundle`}}},
		{name: "unbalanced proto", src: head + "interfaces: [{name: a, type: grpc, ref: interfaces/unbalanced.proto}]\n", errors: []finding{{"interfaces[0].ref", "INVALID_INTERFACE_SPEC", "'{' never closed"}}},
		{name: "config values violate the schema", src: head + "configurations: [{name: app, required: true, schema: configuration/schema.json, values: {LOG_LEVEL: loud, PORT: eighty, EXTRA: 1}}]\n",
			errors: []finding{
				{"configurations[0].values.LOG_LEVEL", "CONFIG_VALUES_VALIDATION_FAILED", `"loud" is not allowed; must be one of: "debug", "info"`},
				{"configurations[0].values.PORT", "CONFIG_VALUES_VALIDATION_FAILED", "must be an integer, got string"},
				{"configurations[0].values.EXTRA", "CONFIG_VALUES_VALIDATION_FAILED", `unknown field "EXTRA"; allowed fields: LOG_LEVEL, PORT`},
			}},
		{name: "config values satisfy the schema", valid: true, src: head + "configurations: [{name: app, required: true, schema: configuration/schema.json, values: {LOG_LEVEL: info, PORT: 8080}}]\n"},
		{name: "config schema missing", src: head + "configurations: [{name: app, required: true, schema: configuration/none.json}]\n", errors: []finding{{"configurations[0].schema", "FILE_NOT_FOUND", "does not exist"}}},
		{name: "config schema not json", src: head + "configurations: [{name: app, required: true, schema: configuration/bad.json}]\n", errors: []finding{{"configurations[0].schema", "INVALID_CONFIG_JSON", "is not valid JSON"}}},
		{name: "config schema not a schema", src: head + "configurations: [{name: app, required: true, schema: configuration/wrong.json}]\n", errors: []finding{{"configurations[0].schema", "INVALID_CONFIG_SCHEMA", "is not a valid JSON Schema"}}},
		{name: "config schema loading the internet", src: head + "configurations: [{name: app, required: true, schema: configuration/remote.json}]\n", errors: []finding{{"configurations[0].schema", "INVALID_CONFIG_SCHEMA", "points outside the bundle"}}},
		{name: "config schema loading a local file", src: head + "configurations: [{name: app, required: true, schema: configuration/local.json}]\n", errors: []finding{{"configurations[0].schema", "INVALID_CONFIG_SCHEMA", "points outside the bundle"}}},
		{name: "config ref without a resolver", src: head + "configurations: [{name: c, required: true, ref: 'oci://r.example/config'}]\n", valid: true, warnings: []finding{{"configurations[0].ref", "CONFIG_REF_NOT_RESOLVED", "no resolver configured"}}},
		{name: "config ref resolved", opts: withResolver, valid: true, src: head + "configurations: [{name: c, required: true, ref: 'oci://r.example/config'}]\n"},
		{name: "config ref that fails to resolve", opts: &validate.Options{Resolver: errResolver{}}, src: head + "configurations: [{name: c, required: true, ref: 'oci://r.example/config'}]\n", errors: []finding{{"configurations[0].ref", "INVALID_CONFIG_REF", "registry unreachable"}}},
		{name: "config ref to a bundle without a schema", opts: withResolver, src: head + "configurations: [{name: c, required: true, ref: 'oci://r.example/empty'}]\n", errors: []finding{{"configurations[0].ref", "INVALID_CONFIG_REF", "has no configuration/schema.json"}}},
		{name: "config ref with a bad grammar", src: head + "configurations: [{name: c, required: true, ref: 'https://r.example/x'}]\n", errors: []finding{{"configurations[0].ref", "INVALID_CONFIG_REF", `scheme "https" is not supported`}}},
		{name: "bad oci ref", src: head + "dependencies: [{name: d, ref: 'oci://r.example/UPPER', required: true, compatibility: ^1.0.0}]\n", errors: []finding{{"dependencies[0].ref", "INVALID_OCI_REF", "repository path component"}}},
		{name: "oci ref without registry", src: head + "dependencies: [{name: d, ref: 'oci://redis', required: true, compatibility: ^1.0.0}]\n", errors: []finding{{"dependencies[0].ref", "INVALID_OCI_REF", "has no registry host"}}},
		{name: "bad digest", src: head + "dependencies: [{name: d, ref: 'oci://r.example/d@sha256:abc', required: true, compatibility: ^1.0.0}]\n", errors: []finding{{"dependencies[0].ref", "INVALID_OCI_REF", "sha256:<64 lowercase hex>"}}},
		{name: "tag not digest", valid: true, src: head + "dependencies: [{name: d, ref: 'oci://localhost:5000/team/d:1.2.0', required: false, compatibility: ^1.0.0}]\n", warnings: []finding{{"dependencies[0].ref", "TAG_NOT_DIGEST", "pin a digest"}}},
		{name: "digest and local refs are fine", valid: true, src: head + "dependencies:\n  - {name: d, ref: 'oci://r.example/d@sha256:" + strings.Repeat("a", 64) + "', required: true, compatibility: '>=1.0.0 <2.0.0'}\n  - {name: e, ref: ../e, required: true, compatibility: ~1.2}\n  - {name: f, ref: 'oci://r.example/f', required: true, compatibility: ^1}\n"},
		{name: "bad compatibility", src: head + "dependencies: [{name: d, ref: 'oci://r.example/d', required: true, compatibility: 'about one'}]\n", errors: []finding{{"dependencies[0].compatibility", "INVALID_COMPATIBILITY", "is not a semver constraint"}}},
		{name: "blank compatibility", src: head + "dependencies: [{name: d, ref: 'oci://r.example/d', required: true, compatibility: '  '}]\n", errors: []finding{{"dependencies[0].compatibility", "EMPTY_COMPATIBILITY", "give a semver constraint"}}},
		{name: "capability on an unknown interface", src: head + "capabilities: [{type: metrics, binding: {type: http, interface: nope}}]\n", errors: []finding{{"capabilities[0].binding.interface", "CAPABILITY_INTERFACE_UNKNOWN", `interface "nope", which is not declared; declared interfaces: none`}}},
		{name: "capability declared twice", src: head + "capabilities: [{type: health}, {type: health}]\n", errors: []finding{{"capabilities[1].type", "DUPLICATE_CAPABILITY", "already declared at capabilities[0]"}}},
		{name: "extension ref not namespaced", src: head + "capabilities: [{type: extension, ref: custom}]\n", errors: []finding{{"capabilities[0].ref", "CAPABILITY_REF_INVALID", "not a namespaced id"}}},
		{name: "impossible date", src: head + "readiness: {expires: 2026-02-30, claims: [{id: a, type: url, status: done, evidence: x, weight: 1}]}\n", errors: []finding{{"readiness.expires", "INVALID_READINESS_EXPIRES", `"2026-02-30" is not a real calendar date`}}},
		{name: "date in another layout", src: head + "readiness: {expires: 2026-2-3, claims: [{id: a, type: url, status: done, evidence: x, weight: 1}]}\n", errors: []finding{{"readiness.expires", "INVALID_READINESS_EXPIRES", "YYYY-MM-DD"}}},
		{name: "bad readiness history and claims", src: head + `readiness:
  expires: '2030-01-01'
  history: [{date: '2026-13-01', version: 1.0.0, author: ' ', description: x}]
  claims:
    - {id: a, type: url, status: done, evidence: ' ', weight: 1, description: '  '}
    - {id: a, type: url, status: partial, evidence: x, weight: 1}
`, errors: []finding{
			{"readiness.history[0].date", "INVALID_READINESS_REVISION", "not a real calendar date"},
			{"readiness.history[0].author", "INVALID_READINESS_REVISION", "must not be blank"},
			{"readiness.claims[0].evidence", "EMPTY_READINESS_EVIDENCE", "must not be blank"},
			{"readiness.claims[0].description", "EMPTY_READINESS_DESCRIPTION", "must not be blank"},
			{"readiness.claims[1].id", "DUPLICATE_READINESS_ID", `claim id "a" is already used`},
		}},
		{name: "expired readiness is not an error", valid: true, src: head + "readiness: {expires: '2001-01-01', claims: [{id: a, type: url, status: done, evidence: x, weight: 1}]}\n"},
		{name: "cross-field error short-circuits policies", src: head + "interfaces: [{name: a, type: openapi, ref: gone.yaml}]\npolicies: [{name: p, schema: policy/schema.json}]\n", errors: []finding{{"interfaces[0].ref", "FILE_NOT_FOUND", "does not exist"}}},

		// Policy layer.
		{name: "local policy violated", src: head + "policies: [{name: must-be-service, schema: policy/schema.json}]\n", errors: []finding{{"workload", "POLICY_VIOLATION", `violates policy "must-be-service" (policy/schema.json, declared at policies[0]): missing required field "workload"`}}},
		{name: "local policy satisfied", valid: true, src: head + "workload: service\npolicies: [{name: must-be-service, schema: policy/schema.json}]\n"},
		{name: "policy schema missing", src: head + "policies: [{name: p, schema: policy/none.json}]\n", errors: []finding{{"policies[0].schema", "FILE_NOT_FOUND", "does not exist"}}},
		{name: "policy schema not json", src: head + "policies: [{name: p, schema: configuration/bad.json}]\n", errors: []finding{{"policies[0].schema", "INVALID_POLICY_JSON", "not valid JSON"}}},
		{name: "policy schema not a schema", src: head + "policies: [{name: p, schema: configuration/wrong.json}]\n", errors: []finding{{"policies[0].schema", "INVALID_POLICY_SCHEMA", "not a valid JSON Schema"}}},
		{name: "policy ref without a resolver fails closed", src: head + "policies: [{name: p, ref: 'oci://r.example/policy'}]\n", errors: []finding{{"policies[0].ref", "POLICY_REF_UNRESOLVED", "no resolver is configured; an unresolved policy fails closed"}}},
		{name: "policy ref that fails to resolve", opts: &validate.Options{Resolver: errResolver{}}, src: head + "policies: [{name: p, ref: 'oci://r.example/policy'}]\n", errors: []finding{{"policies[0].ref", "POLICY_REF_UNRESOLVED", "registry unreachable"}}},
		{name: "policy ref enforced", opts: withResolver, src: head + "metadata: {owner: x}\npolicies: [{name: platform, ref: 'oci://r.example/policy'}]\n", errors: []finding{{"metadata.tier", "POLICY_VIOLATION", `violates policy "platform" (oci://r.example/policy/policy/schema.json`}}},
		{name: "policy ref satisfied", opts: withResolver, valid: true, src: head + "metadata: {tier: edge}\npolicies: [{name: platform, ref: 'oci://r.example/policy'}]\n"},
		{name: "policy ref cycle", opts: withResolver, src: head + "policies: [{name: loop, ref: 'oci://r.example/a'}]\n", errors: []finding{{"policies[0].ref", "POLICY_REF_CYCLE", "oci://r.example/a is reached again"}}},
		{name: "policy ref to a bundle without policies", opts: withResolver, src: head + "policies: [{name: p, ref: 'oci://r.example/empty'}]\n", errors: []finding{{"policies[0].ref", "INVALID_POLICY_REF", "declares no policies and has no policy/schema.json"}}},
		{name: "policy ref with a bad grammar", src: head + "policies: [{name: p, ref: 'oci://'}]\n", errors: []finding{{"policies[0].ref", "INVALID_POLICY_REF", "has no registry host"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			got := validate.ValidateBytes(t.Context(), []byte(tt.src), files, tt.opts)
			if elapsed := time.Since(start); elapsed > 3*time.Second {
				t.Errorf("validation took %v, want a fast answer", elapsed)
			}
			if got.Valid() != tt.valid {
				t.Errorf("Valid() = %v, want %v; errors: %+v", got.Valid(), tt.valid, got.Errors)
			}
			assertFindings(t, "error", got.Errors, tt.errors)
			assertFindings(t, "warning", got.Warnings, tt.warnings)
		})
	}
}

// assertFindings checks that every wanted finding is present, and that
// nothing else is (a layer that should have short-circuited would add some).
func assertFindings(t *testing.T, kind string, got []validate.Finding, want []finding) {
	t.Helper()
	for _, w := range want {
		found := false
		for _, g := range got {
			if g.Path == w.path && g.Code == w.code && strings.Contains(g.Message, w.msg) {
				found = true
				break
			}
		}
		if !found {
			t.Errorf("missing %s {path %q, code %s, message containing %q}; got %+v", kind, w.path, w.code, w.msg, got)
		}
	}
	codes := map[string]bool{}
	for _, w := range want {
		codes[w.code] = true
	}
	for _, g := range got {
		if !codes[g.Code] {
			t.Errorf("unexpected %s %+v", kind, g)
		}
	}
}

func TestResultJSON(t *testing.T) {
	b, err := json.Marshal(validate.Result{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(b), `{"errors":[],"warnings":[]}`; got != want {
		t.Errorf("json.Marshal(Result{}) = %s, want %s", got, want)
	}
	r := validate.ValidateBytes(t.Context(), []byte(head+"workload: forever\n"), nil, nil)
	b, err = json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"errors":[{"path":"workload","code":"SCHEMA_VIOLATION","message":"\"forever\" is not allowed; must be one of: \"service\", \"job\", \"scheduled\""}],"warnings":[]}`
	if diff := cmp.Diff(string(b), want); diff != "" {
		t.Errorf("json mismatch (-got +want):\n%s", diff)
	}
}

func TestValidateMissingContract(t *testing.T) {
	r := validate.Validate(t.Context(), fstest.MapFS{}, nil)
	if r.Valid() || len(r.Errors) != 1 || r.Errors[0].Code != validate.CodeFileNotFound || !strings.Contains(r.Errors[0].Message, "pacto.yaml") {
		t.Errorf("Validate(empty FS) = %+v, want one FILE_NOT_FOUND naming pacto.yaml", r)
	}
}

// TestRealPolicyEnforced runs the demo's own policies over real contracts:
// api-gateway's local gateway-routing policy (with the files the copy lacks
// stubbed in, so the policy layer is reached) and the platform-http-policy
// bundle through a resolver (the optional compatibility data; skipped
// without it: TestValidateTable holds the policy layer on kubepact's own
// policies).
func TestRealPolicyEnforced(t *testing.T) {
	root := pactocompat.Demo(t)
	gateway := filepath.Join(root, "bundles", "api-gateway", "v1.2.0")
	raw, err := os.ReadFile(filepath.Join(gateway, "pacto.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	policy, err := os.ReadFile(filepath.Join(gateway, "policy", "schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	files := fstest.MapFS{
		"interfaces/openapi.json":   {Data: []byte(openAPISpec)},
		"configuration/schema.json": {Data: []byte(`{"type": "object"}`)},
		"policy/schema.json":        {Data: policy},
	}
	opts := &validate.Options{Resolver: compatResolver{root}}
	got := validate.ValidateBytes(t.Context(), raw, files, opts)
	// The referenced platform-app-config bundle in the copy lacks its
	// schema, which is the only thing left to report.
	want := []validate.Finding{{Path: "configurations[0].ref", Code: validate.CodeInvalidConfigRef}}
	if diff := cmp.Diff(stripMessages(got.Errors), want); diff != "" {
		t.Errorf("api-gateway errors mismatch (-got +want):\n%s", diff)
	}

	// Drop the config ref and the public interface: gateway-routing must fail.
	c := strings.Replace(string(raw), "visibility: public", "visibility: internal", 1)
	c = strings.Replace(c, "- name: platform\n  ref: oci://ghcr.io/trianalab/pacto-demo/platform-app-config\n  required: true\n", "", 1)
	got = validate.ValidateBytes(t.Context(), []byte(c), files, opts)
	want = []validate.Finding{{Path: "interfaces", Code: validate.CodePolicyViolation}}
	if diff := cmp.Diff(stripMessages(got.Errors), want); diff != "" {
		t.Errorf("api-gateway with an internal interface (-got +want):\n%s", diff)
	}

	// platform-http-policy through a resolver: a contract without owner
	// team, metadata and workload violates it three times.
	src := head + "policies: [{name: http-security, ref: oci://ghcr.io/trianalab/pacto-demo/platform-http-policy}]\n"
	got = validate.ValidateBytes(t.Context(), []byte(src), nil, opts)
	want = []validate.Finding{
		{Path: "metadata", Code: validate.CodePolicyViolation},
		{Path: "service.owner", Code: validate.CodePolicyViolation},
		{Path: "workload", Code: validate.CodePolicyViolation},
	}
	if diff := cmp.Diff(stripMessages(got.Errors), want); diff != "" {
		t.Errorf("platform-http-policy errors mismatch (-got +want):\n%s", diff)
	}
}

func stripMessages(fs []validate.Finding) []validate.Finding {
	out := make([]validate.Finding, len(fs))
	for i, f := range fs {
		out[i] = validate.Finding{Path: f.Path, Code: f.Code}
	}
	return out
}
