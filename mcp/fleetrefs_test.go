package mcp

import (
	"encoding/json"
	"errors"
	"net"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/kubepact/kubepact/bundle/oci"
	"github.com/kubepact/kubepact/fleetgraph"
	"github.com/kubepact/kubepact/fleetgraph/source"
)

// fleetRefsServer serves the fleet of the example bundles with
// FleetRefsOnly, as the operator does, and a registry client that may
// reach the foreign host: only the option stands between a caller and a
// dial.
func fleetRefsServer(t *testing.T) (*Server, *fleetgraph.Snapshot) {
	t.Helper()
	b := fleetgraph.NewBuilder(nil)
	snap := source.NewFeed(b, []source.Source{
		&source.LocalSource{Dir: "../examples/bundles"},
		&source.TargetStateSource{Path: "../examples/fleet/targets.yaml"},
	}).Collect(t.Context(), nil)
	reg, err := oci.NewClient(&oci.ClientOptions{AllowedRegistries: []string{"127.0.0.2"}, PlainHTTP: true, NoRetry: true, DockerConfigJSON: []byte(`{"auths":{}}`)})
	if err != nil {
		t.Fatal(err)
	}
	s := newTestServer(t, &Options{Families: []Family{FamilyFleet, FamilyPayload}, Fleet: FleetOptions{Enabled: true, Builder: b},
		FleetRefsOnly: true, Registry: reg})
	return s, snap
}

// acceptConns listens on addr and counts the connections it accepts.
func acceptConns(t *testing.T, addr string) (net.Listener, *atomic.Int64) {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	var n atomic.Int64
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			n.Add(1)
			_ = c.Close()
		}
	}()
	t.Cleanup(func() { _ = ln.Close() })
	return ln, &n
}

// TestFleetRefsOnlyDialsNothing: with FleetRefsOnly, a bundle argument
// that names a registry (here a foreign host's open port, then the same
// port closed), a URL or a local path is refused before anything is
// dialled or opened, with what is accepted; the answers for the open and
// the closed port are the same bytes.
func TestFleetRefsOnlyDialsNothing(t *testing.T) {
	s, _ := fleetRefsServer(t)
	cs := connect(t.Context(), t, s)
	ln, accepted := acceptConns(t, "127.0.0.2:0")
	foreign := "oci://" + ln.Addr().String() + "/acme/orders:1.0.0"
	calls := []struct {
		tool string
		args map[string]any
	}{
		{"pacto_impact", map[string]any{"old_ref": foreign, "new_ref": "payments"}},
		{"pacto_impact", map[string]any{"old_ref": "payments", "new_ref": foreign}},
		{"pacto_validate_payload", map[string]any{"service": foreign, "payload": map[string]any{}}},
		{"pacto_explain_field", map[string]any{"service": foreign, "field": "id"}},
	}
	answers := func() []string {
		var out []string
		for _, c := range calls {
			res := call(t, cs, c.tool, c.args)
			raw, err := json.Marshal(res)
			if err != nil {
				t.Fatal(err)
			}
			if !res.IsError || !strings.Contains(text(res), "INVALID_ARGUMENT: only fleet revisions are read here") || !strings.Contains(text(res), "got an oci:// reference") {
				t.Errorf("%s %v: %s, want INVALID_ARGUMENT naming what is accepted", c.tool, c.args, text(res))
			}
			out = append(out, string(raw))
		}
		return out
	}
	open := answers()
	_ = ln.Close()
	closed := answers()
	if n := accepted.Load(); n != 0 {
		t.Errorf("%d connections reached %s, want 0", n, ln.Addr())
	}
	for i := range open {
		if open[i] != closed[i] {
			t.Errorf("%s: the answer for an open port differs from the one for a closed port:\nopen:   %s\nclosed: %s", calls[i].tool, open[i], closed[i])
		}
	}

	for arg, kind := range map[string]string{
		"/etc/passwd": "a local path", "../../etc": "a local path", "./orders": "a local path", "file:///etc": "a local path",
		`..\windows`: "a local path", "~/.ssh": "a local path", "https://169.254.169.254/latest": "a URL",
	} {
		res := call(t, cs, "pacto_impact", map[string]any{"old_ref": arg, "new_ref": "payments"})
		if errorCode(t, res) != CodeInvalidArgument || !strings.Contains(text(res), "got "+kind) || strings.Contains(text(res), arg) {
			t.Errorf("old_ref %q: %s, want INVALID_ARGUMENT saying it got %s, not echoing it", arg, text(res), kind)
		}
	}
}

// TestFleetRefsOnlyResolvesRevisions: the forms a fleet-only argument
// accepts — name (newest revision), name@version, digest and
// SERVICE@digest — read the revision's own bundle; an unknown digest
// answers without repeating it.
func TestFleetRefsOnlyResolvesRevisions(t *testing.T) {
	s, snap := fleetRefsServer(t)
	cs := connect(t.Context(), t, s)
	revs, miss := snap.Locate(fleetgraph.LocateQuery{Service: "payments"})
	if !miss.Found {
		t.Fatalf("payments: %+v", miss)
	}
	d := revs[0].Digest
	for _, old := range []string{"payments", "payments@" + revs[0].Version, d, "payments@" + d} {
		res := call(t, cs, "pacto_impact", map[string]any{"old_ref": old, "new_ref": "payments"})
		if res.IsError || structured(t, res)["service"] != "payments" {
			t.Errorf("old_ref %q: %s, want the impact of payments on itself", old, text(res))
		}
	}
	res := call(t, cs, "pacto_validate_payload", map[string]any{"service": "payments", "payload": map[string]any{}, "kind": "configuration"})
	if errorCode(t, res) == CodeInvalidArgument {
		t.Errorf("pacto_validate_payload by name with FleetRefsOnly: %s", text(res))
	}

	unknown := "sha256:" + strings.Repeat("0", 64)
	for _, old := range []string{unknown, "payments@" + unknown} {
		res := call(t, cs, "pacto_impact", map[string]any{"old_ref": old, "new_ref": "payments"})
		if errorCode(t, res) != source.CodeRefNotFound || strings.Contains(text(res), unknown) {
			t.Errorf("old_ref %q: %s, want NOT_FOUND that does not repeat the digest", old, text(res))
		}
	}
	res = call(t, cs, "pacto_impact", map[string]any{"old_ref": "paymnts", "new_ref": "payments"})
	if te := structured(t, res)["error"].(map[string]any); te["code"] != source.CodeRefNotFound || te["didYouMean"] != "payments" {
		t.Errorf("a misspelt name: %s, want NOT_FOUND with didYouMean payments", text(res))
	}
}

// TestFleetRefsOnlyOptions: the mode needs the fleet, and refuses catalog
// roots (references the fleet did not resolve) and the authoring tools
// (paths in the workspace).
func TestFleetRefsOnlyOptions(t *testing.T) {
	for _, o := range []*Options{
		{FleetRefsOnly: true},
		{FleetRefsOnly: true, Fleet: FleetOptions{Enabled: true, Builder: fleetgraph.NewBuilder(nil)}, Catalog: CatalogOptions{Roots: []string{"oci://ghcr.io/acme/platform:1"}}},
		{FleetRefsOnly: true, Fleet: FleetOptions{Enabled: true, Builder: fleetgraph.NewBuilder(nil)}}, // the default families hold authoring
	} {
		o.Workspace = t.TempDir()
		_, err := NewServer(t.Context(), o)
		if oe, ok := errors.AsType[*OptionError](err); !ok || oe.Field != "FleetRefsOnly" {
			t.Errorf("%+v: %v, want an OptionError for FleetRefsOnly", o, err)
		}
	}
}
