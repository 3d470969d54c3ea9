package mcp

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/kubepact/kubepact/fleetgraph"
	"github.com/kubepact/kubepact/fleetgraph/source"
	"github.com/kubepact/kubepact/internal/openapitools"
)

// TestToolsMatchMCPSchema checks every tool definition of every server
// configuration kubepact ships against the Tool definition of the MCP
// schema (testdata/mcp-schema, with its provenance): what the TypeScript
// SDK client enforces on tools/list, checked here in plain go test. The
// go-sdk client the other tests use does not check it.
func TestToolsMatchMCPSchema(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "mcp-schema", "schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("mcp-schema.json", doc); err != nil {
		t.Fatal(err)
	}
	toolSchema, err := c.Compile("mcp-schema.json#/definitions/Tool")
	if err != nil {
		t.Fatal(err)
	}

	base := demoService(t, nil)
	fleet := func() *fleetgraph.Builder {
		b := fleetgraph.NewBuilder(nil)
		source.NewFeed(b, []source.Source{
			&source.LocalSource{Dir: "../examples/bundles"},
			&source.TargetStateSource{Path: "../examples/fleet/targets.yaml"},
		}).Collect(t.Context(), nil)
		return b
	}
	configs := map[string]func() *Server{
		"authoring":           func() *Server { return newTestServer(t, nil) },
		"authoring read-only": func() *Server { return newTestServer(t, &Options{ReadOnly: true}) },
		"fleet": func() *Server {
			return newTestServer(t, &Options{Families: []Family{FamilyAuthoring, FamilyFleet}, Fleet: FleetOptions{Enabled: true, Builder: fleet()}})
		},
	}
	for _, name := range []string{"catalog", "orders", "payments"} {
		for _, writes := range []bool{false, true} {
			label := name
			if writes {
				label += " --allow-writes"
			}
			configs[label] = func() *Server {
				return capabilityServer(t, "../examples/bundles/"+name, &openapitools.Options{BaseURL: base, AllowWrites: writes},
					&Options{Families: []Family{FamilyAuthoring, FamilyCapability}})
			}
		}
	}
	configs["demo (catalog, fleet, authoring)"] = func() *Server {
		return capabilityServer(t, "../examples/bundles/catalog", &openapitools.Options{BaseURL: base},
			&Options{Families: []Family{FamilyAuthoring, FamilyCapability, FamilyFleet}, Fleet: FleetOptions{Enabled: true, Builder: fleet()}})
	}

	for label, build := range configs {
		t.Run(label, func(t *testing.T) {
			tools := listTools(t, build())
			if len(tools) == 0 {
				t.Fatal("no tools listed")
			}
			for _, tl := range tools {
				enc, err := json.Marshal(tl)
				if err != nil {
					t.Fatal(err)
				}
				v, err := jsonschema.UnmarshalJSON(bytes.NewReader(enc))
				if err != nil {
					t.Fatal(err)
				}
				if err := toolSchema.Validate(v); err != nil {
					t.Errorf("tool %s does not match the MCP schema's Tool: %v", tl["name"], err)
				}
			}
		})
	}
}
