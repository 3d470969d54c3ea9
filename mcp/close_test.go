package mcp

import (
	"context"
	"runtime"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

// watching reports whether a goroutine is in the fleet's watch on its
// local sources.
func watching() bool {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return strings.Contains(string(buf[:n]), "fleetgraph/source.(*Feed).Watch")
		}
		buf = make([]byte, 2*len(buf))
	}
}

// watchedFleet is a server whose fleet watches a local directory.
func watchedFleet(ctx context.Context, t *testing.T) *Server {
	t.Helper()
	s, err := NewServer(ctx, &Options{Workspace: t.TempDir(), Families: []Family{FamilyFleet},
		Fleet: FleetOptions{Enabled: true, Local: []string{"../examples/bundles"}}})
	if err != nil {
		t.Fatal(err)
	}
	if !watching() {
		t.Fatal("the fleet over a local directory does not watch it")
	}
	return s
}

// TestCloseEndsTheFleetWatch: the server's background work (the fleet's
// watch) ends when Close returns, not some time later, and leaves no
// goroutine behind; a second Close does nothing.
func TestCloseEndsTheFleetWatch(t *testing.T) {
	before := goleak.IgnoreCurrent()
	s := watchedFleet(t.Context(), t)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if watching() {
		t.Error("the fleet watch is still running after Close returned")
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	goleak.VerifyNone(t, before)
}

// TestContextEndsTheFleetWatch: the ctx given to NewServer bounds the
// same work; Close after it is done returns at once.
func TestContextEndsTheFleetWatch(t *testing.T) {
	before := goleak.IgnoreCurrent()
	ctx, cancel := context.WithCancel(t.Context())
	s := watchedFleet(ctx, t)
	cancel()
	goleak.VerifyNone(t, before)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestFailedServerLeavesNothingRunning: a server NewServer refuses after
// its fleet was built does not keep watching.
func TestFailedServerLeavesNothingRunning(t *testing.T) {
	before := goleak.IgnoreCurrent()
	saved := families
	t.Cleanup(func() { families = saved })
	families = append(families[:len(families):len(families)], &family{name: "broken", build: func(context.Context, *familyEnv) (*familyParts, error) {
		return &familyParts{tools: []*tool{{name: "pacto_fleet_search"}}}, nil // a name the fleet already has
	}})
	_, err := NewServer(t.Context(), &Options{Workspace: t.TempDir(), Families: []Family{FamilyFleet, "broken"},
		Fleet: FleetOptions{Enabled: true, Local: []string{"../examples/bundles"}}})
	if err == nil || !strings.Contains(err.Error(), "registered twice") {
		t.Fatalf("NewServer with a duplicate tool: %v, want refused", err)
	}
	if watching() {
		t.Error("a refused server left its fleet watch running")
	}
	goleak.VerifyNone(t, before)
}
