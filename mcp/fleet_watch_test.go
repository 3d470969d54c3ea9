package mcp

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// searchNames returns the service names a pacto_fleet_search answered and
// its pin.
func searchNames(t *testing.T, cs *sdk.ClientSession, args map[string]any) ([]string, map[string]any) {
	t.Helper()
	res := structured(t, fleetCall(t, cs, "pacto_fleet_search", args))
	var names []string
	for _, s := range res["services"].([]any) {
		names = append(names, s.(map[string]any)["name"].(string))
	}
	return names, res["pin"].(map[string]any)
}

// waitFor polls cond until it holds or a generous deadline passes; the
// deadline only stops a broken watch from hanging the test.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting: %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestFleetWatchesLocalSources: a bundle created with pacto_create in a
// watched --local directory is in the next snapshot, seen by an MCP client
// over HTTP; the session pinned to the older snapshot is told a newer one
// exists; a deleted bundle disappears; a target-state file rewritten in
// place is re-read.
func TestFleetWatchesLocalSources(t *testing.T) {
	dir := t.TempDir()
	if out, err := exec.Command("cp", "-R", "../examples/bundles/payments", dir).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v: %s", err, out)
	}
	ts := filepath.Join(t.TempDir(), "targets.yaml")
	writeTargets := func(names ...string) {
		body := "schemaVersion: pacto.dev/fleet-targets/v1\ntargets:\n"
		for _, n := range names {
			body += "  - {scope: dev, kind: kubernetes-workload, name: " + n + ", service: " + n + "}\n"
		}
		if err := os.WriteFile(ts, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	writeTargets("payments")
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	s, err := NewServer(ctx, &Options{Workspace: dir, Families: []Family{FamilyAuthoring, FamilyFleet},
		Fleet: FleetOptions{Enabled: true, Local: []string{dir}, TargetState: ts, WatchDebounce: 50 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	url := serveHTTP(t, s)
	pinned, err := httpClient(t.Context(), t, url, "2025-11-25", nil)
	if err != nil {
		t.Fatal(err)
	}
	names, pin := searchNames(t, pinned, map[string]any{})
	if len(names) != 1 || names[0] != "payments" || pin["newerAvailable"] != false || pin["by"] != "session" {
		t.Fatalf("first search: %v, pin %v; want payments alone, nothing newer", names, pin)
	}
	first := pin["snapshotId"]

	created := fleetCall(t, pinned, "pacto_create", map[string]any{"name": "shipping", "interfaces": []any{map[string]any{"name": "api", "type": "openapi"}}})
	if created.IsError {
		t.Fatalf("pacto_create: %s", text(created))
	}
	waitFor(t, "the pinned session to be told a newer snapshot exists", func() bool {
		_, pin = searchNames(t, pinned, map[string]any{})
		return pin["newerAvailable"] == true
	})
	if pin["snapshotId"] != first {
		t.Errorf("the pinned session moved from %v to %v on its own", first, pin["snapshotId"])
	}
	names, _ = searchNames(t, pinned, map[string]any{"snapshot": pin["current"]})
	if len(names) != 2 || names[1] != "shipping" {
		t.Errorf("the newer snapshot holds %v; want payments and shipping", names)
	}
	fresh, err := httpClient(t.Context(), t, url, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if names, _ = searchNames(t, fresh, map[string]any{"text": "shipping"}); len(names) != 1 {
		t.Errorf("a new session's search for shipping: %v", names)
	}

	if err := os.RemoveAll(filepath.Join(dir, "payments")); err != nil {
		t.Fatal(err)
	}
	writeTargets("payments", "shipping")
	waitFor(t, "the deleted bundle to disappear and the rewritten target-state to be read", func() bool {
		cs, err := httpClient(t.Context(), t, url, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		got := structured(t, fleetCall(t, cs, "pacto_fleet_get", map[string]any{"service": "shipping"}))
		names, _ := searchNames(t, cs, map[string]any{"text": "payments"})
		// payments stays a service (a target names it) but has no
		// revision any more; shipping gained a target.
		tg, _ := got["targets"].([]any)
		return got["found"] == true && len(tg) == 1 && len(names) == 1 && !hasRevisions(t, cs, "payments")
	})
}

func hasRevisions(t *testing.T, cs *sdk.ClientSession, service string) bool {
	t.Helper()
	got := structured(t, fleetCall(t, cs, "pacto_fleet_get", map[string]any{"service": service}))
	revs, _ := got["revisions"].([]any)
	return len(revs) > 0
}
