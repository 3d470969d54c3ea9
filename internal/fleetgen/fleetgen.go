// Package fleetgen writes a synthetic fleet of bundles: the local fleet
// that fleetgraph/source's start benchmarks load, and that hack/sdkpatch's
// differential test validates with and without its patches. It imports
// nothing of kubepact.
package fleetgen

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Write writes n bundle directories under dir, each a contract with an
// OpenAPI interface, a readiness declaration and five dependencies on
// other services of the fleet: the shape a laptop fleet of many small
// services has.
func Write(dir string, n int) error {
	const deps = 5
	// each service gets its own spec (see Spec)
	for i := range n {
		var y strings.Builder
		fmt.Fprintf(&y, "pactoVersion: \"2.0\"\nservice:\n  name: svc-%05d\n  version: 1.%d.0\n  owner:\n    team: team-%d\n", i, i%7, i%40)
		y.WriteString("interfaces:\n  - name: http\n    type: openapi\n    ref: interfaces/openapi.yaml\n    visibility: internal\nworkload: service\n")
		y.WriteString("capabilities:\n  - type: health\n    binding: {type: http, interface: http, path: /healthz}\n")
		y.WriteString("dependencies:\n")
		for d := range deps {
			j := (i*7919 + d*104729 + 1) % n
			fmt.Fprintf(&y, "  - name: svc-%05d\n    ref: oci://registry.example.com/team%d/svc-%05d\n    required: true\n    compatibility: ^1.0.0\n", j, j%40, j)
		}
		y.WriteString("readiness:\n  expires: 2099-12-31\n  minScore: 50\n  claims:\n    - {id: runbook, type: document, category: documentation, status: done, evidence: https://docs.example.com/runbook, weight: 100}\n")
		bd := filepath.Join(dir, fmt.Sprintf("team%d", i%40), fmt.Sprintf("svc-%05d", i))
		if err := os.MkdirAll(filepath.Join(bd, "interfaces"), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(bd, "pacto.yaml"), []byte(y.String()), 0o644); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(bd, "interfaces", "openapi.yaml"), []byte(Spec(i)), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// Spec is service i's OpenAPI document: distinct from every other
// service's (title, paths, schema names and fields depend on i), so a cache
// keyed by a spec's content cannot make the fleet cheaper than a real one,
// and shaped like a small real service: a few operations with parameters,
// request and response bodies, and components reached by $ref (an item
// is an allOf of a base schema and its own fields, as specs often say).
func Spec(i int) string {
	var s strings.Builder
	res := fmt.Sprintf("res%d", i%97)
	fmt.Fprintf(&s, "openapi: 3.0.3\ninfo: {title: svc-%05d, version: 1.%d.0, description: service %d of the fleet}\n", i, i%7, i)
	s.WriteString("paths:\n  /healthz:\n    get:\n      operationId: getHealth\n      responses:\n        \"200\": {description: alive}\n")
	fmt.Fprintf(&s, "  /%s:\n    get:\n      operationId: list%d\n      parameters:\n        - {name: limit, in: query, schema: {type: integer, minimum: 1, maximum: %d}}\n        - {name: cursor, in: query, schema: {type: string}}\n", res, i, 50+i%200)
	fmt.Fprintf(&s, "      responses:\n        \"200\":\n          description: a page\n          content:\n            application/json:\n              schema: {$ref: \"#/components/schemas/Page%d\"}\n", i)
	fmt.Fprintf(&s, "    post:\n      operationId: create%d\n      requestBody:\n        required: true\n        content:\n          application/json:\n            schema: {$ref: \"#/components/schemas/Item%d\"}\n", i, i)
	fmt.Fprintf(&s, "      responses:\n        \"201\":\n          description: created\n          content:\n            application/json:\n              schema: {$ref: \"#/components/schemas/Item%d\"}\n        \"400\": {$ref: \"#/components/responses/Problem\"}\n", i)
	fmt.Fprintf(&s, "  /%s/{id}:\n    parameters:\n      - {name: id, in: path, required: true, schema: {type: string, maxLength: %d}}\n", res, 16+i%48)
	fmt.Fprintf(&s, "    get:\n      operationId: get%d\n      responses:\n        \"200\":\n          description: one item\n          content:\n            application/json:\n              schema: {$ref: \"#/components/schemas/Item%d\"}\n        \"404\": {$ref: \"#/components/responses/Problem\"}\n", i, i)
	fmt.Fprintf(&s, "    delete:\n      operationId: delete%d\n      responses:\n        \"204\": {description: deleted}\n        \"404\": {$ref: \"#/components/responses/Problem\"}\n", i)
	s.WriteString("components:\n  responses:\n    Problem:\n      description: what went wrong\n      content:\n        application/json:\n          schema:\n            type: object\n            required: [title]\n            properties: {title: {type: string}, detail: {type: string}, status: {type: integer}}\n")
	fmt.Fprintf(&s, "  schemas:\n    Page%d:\n      type: object\n      properties:\n        items: {type: array, items: {$ref: \"#/components/schemas/Item%d\"}}\n        next: {type: string, nullable: true}\n", i, i)
	fmt.Fprintf(&s, "    Base%d:\n      type: object\n      required: [id]\n      properties:\n        id: {type: string}\n        created: {type: string, format: date-time}\n", i)
	fmt.Fprintf(&s, "    Item%d:\n      allOf:\n        - {$ref: \"#/components/schemas/Base%d\"}\n        - type: object\n          properties:\n", i, i)
	for f := range 3 + i%6 {
		switch (i + f) % 4 {
		case 0:
			fmt.Fprintf(&s, "            field%d_%d: {type: string, maxLength: %d}\n", i%31, f, 10+f)
		case 1:
			fmt.Fprintf(&s, "            count%d_%d: {type: integer, minimum: 0}\n", i%29, f)
		case 2:
			fmt.Fprintf(&s, "            state%d: {type: string, enum: [new, active, retired]}\n", f)
		default:
			fmt.Fprintf(&s, "            tags%d: {type: array, items: {type: string}}\n", f)
		}
	}
	return s.String()
}
