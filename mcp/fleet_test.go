package mcp

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kubepact/kubepact/fleetgraph"

	"github.com/kubepact/kubepact/fleetgraph/source"
)

// fakeClock is a settable clock for snapshot retention.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// fleetServer serves the fleet of examples/bundles, fleetgraph's test
// bundles and its target-state fixture, with the repository as workspace.
func fleetServer(t *testing.T) (*Server, *fleetgraph.Builder, *fakeClock) {
	t.Helper()
	clock := &fakeClock{now: time.Date(2026, 8, 1, 0, 0, 0, 0, time.UTC)}
	b := fleetgraph.NewBuilder(&fleetgraph.BuilderOptions{Clock: clock.Now, Freshness: 24 * time.Hour, Retention: time.Minute})
	source.NewFeed(b, []source.Source{
		&source.LocalSource{Dir: "../examples/bundles"},
		&source.LocalSource{Dir: "../fleetgraph/testdata/bundles"},
		&source.TargetStateSource{Path: "../fleetgraph/testdata/targets.yaml"},
	}).Collect(t.Context(), nil)
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	s := newTestServer(t, &Options{Workspace: root, Families: []Family{FamilyFleet}, Fleet: FleetOptions{Enabled: true, Builder: b}})
	return s, b, clock
}

func fleetCall(t *testing.T, cs *sdk.ClientSession, name string, args map[string]any) *sdk.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

// TestFleetToolsGolden records a transcript of every fleet tool and its
// misses and errors.
func TestFleetToolsGolden(t *testing.T) {
	s, _, _ := fleetServer(t)
	cs := connect(t.Context(), t, s)
	calls := []struct {
		tool string
		args map[string]any
	}{
		{"pacto_fleet_search", map[string]any{}},
		{"pacto_fleet_search", map[string]any{"text": "pay", "limit": 1}},
		{"pacto_fleet_search", map[string]any{"compliance": "NonCompliant", "labels": "env=production"}},
		{"pacto_fleet_search", map[string]any{"status": "Bad"}},
		{"pacto_fleet_search", map[string]any{"offset": 3}},
		{"pacto_fleet_get", map[string]any{"service": "orders"}},
		{"pacto_fleet_get", map[string]any{"target": "commerce/orders"}},
		{"pacto_fleet_get", map[string]any{"service": "ordres"}},
		{"pacto_fleet_get", map[string]any{"service": "payments"}},
		{"pacto_fleet_get", map[string]any{}},
		{"pacto_fleet_graph", map[string]any{"service": "billing", "transitive": true}},
		{"pacto_fleet_graph", map[string]any{"service": "catalog", "direction": "dependents", "transitive": true, "max_depth": 1}},
		{"pacto_fleet_graph", map[string]any{"target": "nowhere"}},
		{"pacto_fleet_status", map[string]any{}},
		{"pacto_fleet_status", map[string]any{"stale": true, "non_compliant": true}},
		{"pacto_fleet_explain", map[string]any{"subject": "finance/ledger"}},
		{"pacto_fleet_explain", map[string]any{"subject": "legder"}},
		{"pacto_impact", map[string]any{"old_ref": "examples/bundles/payments", "new_ref": "fleetgraph/testdata/impact/payments-v4"}},
		{"pacto_impact", map[string]any{"old_ref": "examples/bundles/payments", "new_ref": "../../etc"}},
		{"pacto_impact", map[string]any{"old_ref": "examples/bundles/payments", "new_ref": "oci://registry.example.com/x/payments:4.0.0"}},
		{"pacto_impact", map[string]any{"old_ref": "examples/bundles/payments", "new_ref": "fleetgraph/testdata/impact/payments-v4", "include_observed": true}},
		{"pacto_impact", map[string]any{"old_ref": "examples/bundles/payments", "new_ref": "fleetgraph/testdata/impact/payments-v4", "traces": "/var/run/otlp.json"}},
	}
	var transcript []map[string]any
	for _, c := range calls {
		res := fleetCall(t, cs, c.tool, c.args)
		transcript = append(transcript, map[string]any{"tool": c.tool, "args": c.args, "isError": res.IsError, "text": text(res), "structured": structured(t, res)})
	}
	got, err := json.MarshalIndent(transcript, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	golden := filepath.Join("testdata", "fleet.golden.json")
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test ./mcp -run TestFleetToolsGolden -update)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("fleet transcript differs from %s (-want +got):\n%s", golden, diff)
	}
}

// TestFleetToolListIsCompact measures the family's share of tools/list.
func TestFleetToolListIsCompact(t *testing.T) {
	s, _, _ := fleetServer(t)
	var size int
	for _, tl := range listTools(t, s) {
		if name := tl["name"].(string); strings.HasPrefix(name, "pacto_fleet_") || name == "pacto_impact" {
			raw, err := json.Marshal(tl)
			if err != nil {
				t.Fatal(err)
			}
			size += len(raw)
			ann := tl["annotations"].(map[string]any)
			if ann["readOnlyHint"] != true || ann["openWorldHint"] != false {
				t.Errorf("%s annotations %v", name, ann)
			}
		}
	}
	// Every tool's output schema also carries the shared error envelope
	// (tool.go's withErrorAlternative); report it apart from the family's own.
	errRaw, err := json.Marshal(errorSchema)
	if err != nil {
		t.Fatal(err)
	}
	shared := 6 * len(errRaw)
	own := size - shared
	t.Logf("fleet family tools/list: %d bytes ≈ %d tokens in all; %d bytes ≈ %d tokens of the family's own, %d bytes ≈ %d tokens of the shared error envelope",
		size, size/4, own, own/4, shared, shared/4)
	if own/4 > 2000 {
		t.Errorf("fleet family tools/list ≈ %d tokens of its own, aim ≤ 2000", own/4)
	}
}

func TestFleetSnapshotPinning(t *testing.T) {
	s, b, clock := fleetServer(t)
	first := b.Current().ID()
	session := connect(t.Context(), t, s)
	page := structured(t, fleetCall(t, session, "pacto_fleet_search", map[string]any{"limit": 2}))
	cursor := page["nextCursor"].(string)

	// The fleet changes.
	if err := b.UpsertTarget(&fleetgraph.Target{Scope: "dev", Kind: "k", Name: "n", Service: "newcomer", Source: "t"}); err != nil {
		t.Fatal(err)
	}
	second := b.Flush().ID()

	// The session still reads its snapshot, and is told a newer one exists.
	got := structured(t, fleetCall(t, session, "pacto_fleet_search", map[string]any{}))
	pin := got["pin"].(map[string]any)
	if got["meta"].(map[string]any)["snapshotId"] != first || pin["newerAvailable"] != true || pin["current"] != second || pin["by"] != "session" {
		t.Errorf("pinned session answer: meta %v pin %v", got["meta"].(map[string]any)["snapshotId"], pin)
	}
	// A new session reads the new snapshot.
	fresh := structured(t, fleetCall(t, connect(t.Context(), t, s), "pacto_fleet_search", map[string]any{}))
	if fresh["meta"].(map[string]any)["snapshotId"] != second || fresh["total"].(float64) != 7 {
		t.Errorf("new session: %v total %v", fresh["meta"].(map[string]any)["snapshotId"], fresh["total"])
	}
	// A cursor pins its snapshot while it is kept...
	next := fleetCall(t, connect(t.Context(), t, s), "pacto_fleet_search", map[string]any{"limit": 2, "cursor": cursor})
	if next.IsError || structured(t, next)["meta"].(map[string]any)["snapshotId"] != first {
		t.Errorf("cursor page: %s", text(next))
	}
	// ...and an explicit snapshot argument too.
	if r := fleetCall(t, connect(t.Context(), t, s), "pacto_fleet_status", map[string]any{"snapshot": first}); r.IsError {
		t.Errorf("explicit pin: %s", text(r))
	}
	// Once it has expired, both are a clear error naming the current one.
	clock.Add(2 * time.Minute)
	for _, args := range []map[string]any{{"limit": 2, "cursor": cursor}, {"snapshot": first}} {
		r := fleetCall(t, connect(t.Context(), t, s), "pacto_fleet_search", args)
		e := structured(t, r)["error"].(map[string]any)
		if !r.IsError || e["code"] != CodeSnapshotExpired || !strings.Contains(e["message"].(string), second) {
			t.Errorf("expired pin %v: %s", args, text(r))
		}
	}
}

func TestFleetNeedsASource(t *testing.T) {
	_, err := NewServer(t.Context(), &Options{Workspace: t.TempDir(), Fleet: FleetOptions{Enabled: true}})
	if err == nil || !strings.Contains(err.Error(), "Fleet.Local") || !strings.Contains(err.Error(), "Fleet.TargetState") {
		t.Errorf("NewServer(--fleet without sources) = %v, want an error naming the source flags", err)
	}
	_, err = NewServer(t.Context(), &Options{Workspace: t.TempDir(), Fleet: FleetOptions{Local: []string{"."}}})
	if err == nil || !strings.Contains(err.Error(), "Fleet.Enabled") {
		t.Errorf("NewServer(--local without --fleet) = %v", err)
	}
}

func TestFleetFromSourceFlags(t *testing.T) {
	s := newTestServer(t, &Options{Families: []Family{}, Fleet: FleetOptions{Enabled: true, Local: []string{"../examples/bundles"}}})
	res := structured(t, fleetCall(t, connect(t.Context(), t, s), "pacto_fleet_search", map[string]any{}))
	if res["total"].(float64) != 3 {
		t.Errorf("--local examples/bundles: total %v, want 3", res["total"])
	}
}

// A session keeps its snapshot for its lifetime, so the cursors it was
// given keep working after the Builder has stopped retaining that snapshot
// (its history is bounded in time and count; a live feed publishes often).
func TestFleetSessionCursorOutlivesRetention(t *testing.T) {
	s, b, clock := fleetServer(t)
	first := b.Current().ID()
	session := connect(t.Context(), t, s)
	page := structured(t, fleetCall(t, session, "pacto_fleet_search", map[string]any{"limit": 2}))
	cursor := page["nextCursor"].(string)
	for i := range 3 {
		if err := b.UpsertTarget(&fleetgraph.Target{Scope: "dev", Kind: "k", Name: fmt.Sprint(i), Service: "newcomer", Source: "t"}); err != nil {
			t.Fatal(err)
		}
		b.Flush()
		clock.Add(2 * time.Minute)
	}
	if _, ok := b.Lookup(first); ok {
		t.Fatal("the builder still retains the first snapshot; the test needs it expired")
	}
	for _, args := range []map[string]any{{"limit": 2, "cursor": cursor}, {"snapshot": first}} {
		r := fleetCall(t, session, "pacto_fleet_search", args)
		if r.IsError {
			t.Errorf("session call %v on its own snapshot: %s", args, text(r))
			continue
		}
		if got := structured(t, r)["meta"].(map[string]any)["snapshotId"]; got != first {
			t.Errorf("session call %v read snapshot %v, want its pinned %s", args, got, first)
		}
	}
}
