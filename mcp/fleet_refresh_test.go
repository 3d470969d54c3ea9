package mcp

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestFleetSessionMovesToLatest is the agent's own story over Streamable
// HTTP: it reads the fleet, creates a contract with pacto_create in the
// watched workspace, and asks for it. The session still reads its first
// snapshot, so the miss must say — in the text, not only in
// structuredContent — that the newer snapshot has the service and how to
// read it; snapshot: "latest" then moves the session, and it stays moved.
func TestFleetSessionMovesToLatest(t *testing.T) {
	ws := t.TempDir()
	if out, err := exec.Command("cp", "-R", "../examples/bundles/payments", ws).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v: %s", err, out)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	s, err := NewServer(ctx, &Options{Workspace: ws, Families: []Family{FamilyAuthoring, FamilyFleet},
		Fleet: FleetOptions{Enabled: true, Local: []string{ws}, WatchDebounce: 50 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	url := serveHTTP(t, s)
	cs, err := httpClient(t.Context(), t, url, "2025-11-25", nil)
	if err != nil {
		t.Fatal(err)
	}
	_, pin := searchNames(t, cs, map[string]any{})
	first := pin["snapshotId"].(string)

	if res := fleetCall(t, cs, "pacto_create", map[string]any{"name": "shipping", "interfaces": []any{map[string]any{"name": "api", "type": "openapi"}}}); res.IsError {
		t.Fatalf("pacto_create: %s", text(res))
	}
	var miss string
	waitFor(t, "the fleet to publish a snapshot with shipping", func() bool {
		res := fleetCall(t, cs, "pacto_fleet_get", map[string]any{"service": "shipping"})
		miss = text(res)
		return strings.Contains(miss, "newer snapshot")
	})
	got := structured(t, fleetCall(t, cs, "pacto_fleet_get", map[string]any{"service": "shipping"}))
	p := got["pin"].(map[string]any)
	newest := p["current"].(string)
	for _, want := range []string{"Not found: no service named shipping is in snapshot " + first, "the newer snapshot " + newest + " has one",
		`repeat with snapshot: "latest"`, "A newer snapshot, " + newest + ", exists; this session reads " + first + `: pass snapshot: "latest" to move the session to it.`} {
		if !strings.Contains(miss, want) {
			t.Errorf("the miss's text %q does not say %q", miss, want)
		}
	}
	if got["found"] != false || p["snapshotId"] != first || !strings.Contains(got["reason"].(string), "newer snapshot "+newest) || got["candidates"] != nil {
		t.Errorf("the miss's structuredContent: found %v, pin %v, reason %q, candidates %v", got["found"], p, got["reason"], got["candidates"])
	}
	for name, args := range map[string]map[string]any{"pacto_fleet_explain": {"subject": "shipping"}, "pacto_fleet_graph": {"service": "shipping"}} {
		if txt := text(fleetCall(t, cs, name, args)); !strings.Contains(txt, "the newer snapshot "+newest+" has one") {
			t.Errorf("%s in the old snapshot: %q does not point to the newer one", name, txt)
		}
	}
	if txt := text(fleetCall(t, cs, "pacto_fleet_status", map[string]any{})); !strings.Contains(txt, `A newer snapshot, `+newest+`, exists`) {
		t.Errorf("pacto_fleet_status's text %q does not say a newer snapshot exists", txt)
	}

	moved := fleetCall(t, cs, "pacto_fleet_get", map[string]any{"service": "shipping", "snapshot": "latest"})
	got = structured(t, moved)
	p = got["pin"].(map[string]any)
	if got["found"] != true || p["snapshotId"] != newest || p["movedFrom"] != first || p["newerAvailable"] != false {
		t.Errorf(`snapshot "latest": found %v, pin %v; want shipping found in %s, moved from %s`, got["found"], p, newest, first)
	}
	if want := "Found service shipping. This session now reads the newest snapshot, " + newest + " (it read " + first + " before)."; text(moved) != want {
		t.Errorf("text %q, want %q", text(moved), want)
	}
	// The session stays on the snapshot it moved to, and is not told again.
	again := fleetCall(t, cs, "pacto_fleet_get", map[string]any{"service": "shipping"})
	got = structured(t, again)
	p = got["pin"].(map[string]any)
	if got["found"] != true || p["snapshotId"] != newest || p["by"] != "session" || p["movedFrom"] != nil || text(again) != "Found service shipping." {
		t.Errorf("after the move: found %v, pin %v, text %q; want the session pinned to %s", got["found"], p, text(again), newest)
	}
	names, _ := searchNames(t, cs, map[string]any{})
	if strings.Join(names, ",") != "payments,shipping" {
		t.Errorf("search after the move: %v", names)
	}

	// A stateless request that pins the old snapshot is told the same.
	stateless, err := httpClient(t.Context(), t, url, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if txt := text(fleetCall(t, stateless, "pacto_fleet_search", map[string]any{"snapshot": first})); !strings.Contains(txt, "A newer snapshot, "+newest+", exists; this answer is from "+first+`: pass snapshot: "latest" to read it.`) {
		t.Errorf("a stateless search pinned to %s: %q", first, txt)
	}
	// latest with a cursor is a contradiction, refused with both ways out.
	res := fleetCall(t, cs, "pacto_fleet_search", map[string]any{"snapshot": "latest", "cursor": "x"})
	if te := errorOf(t, res); te["code"] != CodeInvalidArgument || te["field"] != "cursor" || !strings.Contains(te["message"].(string), "drop the cursor") {
		t.Errorf(`snapshot "latest" with a cursor: %v`, te)
	}
}
