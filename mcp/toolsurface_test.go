package mcp

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kubepact/kubepact/bundle"
	"github.com/kubepact/kubepact/fleetgraph"
	"github.com/kubepact/kubepact/internal/grpctools"
	"github.com/kubepact/kubepact/internal/openapitools"
	"github.com/kubepact/kubepact/test/bigspec"
)

// TestToolSurfaceDigestIsTheListedOne: the digest ToolSurfaceDigest reads
// from the tools NewServer registered is, for every server here, the one
// of the tools a client lists over a session (listedSurfaceDigest): the
// capability family of every bundle in the repository in each tool mode
// (as the sidecar serves them, with the gRPC tools of a bundle that has
// grpc interfaces), read-only and not, a generated API wider than auto
// lists one by one, and the other families. A server whose list something
// else may change lists it as a client does.
func TestToolSurfaceDigestIsTheListedOne(t *testing.T) {
	root := ".."
	var dirs []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "bin" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if !d.IsDir() && d.Name() == "pacto.yaml" {
			dirs = append(dirs, filepath.Dir(p))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	type bundleCase struct {
		name string
		b    *bundle.Bundle
	}
	var bundles []bundleCase
	for _, dir := range dirs {
		if b, err := bundle.LoadDir(dir, nil); err == nil {
			rel, _ := filepath.Rel(root, dir)
			bundles = append(bundles, bundleCase{rel, b})
		}
	}
	if len(bundles) < 5 {
		t.Fatalf("found %d bundles in the repository (%v), want the examples among them", len(bundles), dirs)
	}
	wide := t.TempDir()
	for name, data := range bigspec.WriteBundle(bigspec.Shape{Resources: 30, Schemas: 40, DescriptionWords: 8}) {
		if err := os.WriteFile(filepath.Join(wide, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, err := bundle.LoadDir(wide, nil)
	if err != nil {
		t.Fatal(err)
	}
	bundles = append(bundles, bundleCase{"wide", b})

	check := func(t *testing.T, opts *Options) {
		t.Helper()
		s := newTestServer(t, opts)
		if s.listedElsewhere.Load() {
			t.Fatal("the server lists its tools as a client does: the digest read from them is not tested")
		}
		got, err := s.ToolSurfaceDigest(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		want, err := s.listedSurfaceDigest(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("digest of the registered tools %s, of the tools a client lists %s", got, want)
		}
	}
	ran, digested := 0, 0
	for _, bc := range bundles {
		for _, mode := range []string{openapitools.ToolModeAll, openapitools.ToolModeDiscover, openapitools.ToolModeAuto} {
			for _, readOnly := range []bool{false, true} {
				name := bc.name + "/" + mode
				if readOnly {
					name += "/read-only"
				}
				t.Run(name, func(t *testing.T) {
					ran++
					co := &openapitools.Options{ToolMode: mode, AllowWrites: true, BaseURL: "http://127.0.0.1:8080"}
					c, err := openapitools.Project(t.Context(), bc.b, co)
					if err != nil {
						t.Skipf("not projected: %v", err) // no sidecar serves it either
					}
					cb := &CapabilityBundle{Bundle: bc.b, Capability: c}
					if hasGRPCInterface(bc.b) {
						if cb.GRPC, err = grpctools.Project(t.Context(), bc.b, &grpctools.Options{Target: "127.0.0.1:9090", AllowWrites: true, Lock: c.HeldLock()}); err != nil {
							t.Fatalf("gRPC projection: %v", err)
						}
					}
					check(t, &Options{Transport: TransportHTTP, Families: []Family{FamilyCapability}, Capability: cb, ReadOnly: readOnly})
					digested++
				})
			}
		}
	}
	if digested < ran*2/3 {
		t.Errorf("%d servers digested of %d tried: most bundles project in every mode", digested, ran)
	}
	t.Run("other-families", func(t *testing.T) {
		check(t, &Options{Families: []Family{FamilyAuthoring, FamilyFleet, FamilyPayload}, Fleet: FleetOptions{Enabled: true, Builder: fleetgraph.NewBuilder(nil)}})
	})
	// Schemas as a client would not hold them (a property order, a number
	// written 1.50): the digest reads what the client decodes, not the
	// bytes registered. An extension's list is read by a client, so the
	// registered tools' digest is called directly here.
	t.Run("extension-schemas", func(t *testing.T) {
		in := &jsonschema.Schema{Type: "object", AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}}, PropertyOrder: []string{"zeta", "alpha"}, Properties: map[string]*jsonschema.Schema{
			"zeta": {Type: "number", Default: json.RawMessage("1.50")}, "alpha": {Type: "string", Description: "caf\u00e9"},
		}}
		s := newTestServer(t, &Options{Families: []Family{"ext"}, Extensions: []*Extension{{Name: "ext", Summary: "a test extension", Tools: []ExtensionTool{{
			Name: "ext_echo", Title: "Echo", Description: "echoes", ReadOnly: true, Input: in, Output: &jsonschema.Schema{Type: "object", PropertyOrder: []string{"y", "x"}, Properties: map[string]*jsonschema.Schema{"y": {Type: "integer"}, "x": {Type: "integer"}}},
			Call: func(context.Context, json.RawMessage) (*sdk.CallToolResult, error) { return &sdk.CallToolResult{}, nil },
		}}}}})
		if !s.listedElsewhere.Load() {
			t.Error("an extension server's digest is read from the tools registered: its family could change the list")
		}
		got, err := s.registeredSurfaceDigest()
		if err != nil {
			t.Fatal(err)
		}
		if want, err := s.listedSurfaceDigest(t.Context()); err != nil || got != want {
			t.Errorf("digest of the registered tools %s, of the tools a client lists %s (%v)", got, want, err)
		}
	})
	t.Run("catalog-family", func(t *testing.T) {
		s := catalogServer(t)
		got, err := s.ToolSurfaceDigest(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if want, err := s.listedSurfaceDigest(t.Context()); err != nil || got != want {
			t.Errorf("digest %s, listed %s (%v)", got, want, err)
		}
	})
}

// hasGRPCInterface reports whether b declares a grpc interface.
func hasGRPCInterface(b *bundle.Bundle) bool {
	if b.Contract == nil {
		return false
	}
	for _, in := range b.Contract.Interfaces {
		if in.Type == "grpc" {
			return true
		}
	}
	return false
}
