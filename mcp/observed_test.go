//go:build unix

package mcp

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestOperatorRefusesTraces: the operator's server (FleetRefsOnly) reads
// no trace file, whatever the path: the answer points at the intake and
// does not echo the path.
func TestOperatorRefusesTraces(t *testing.T) {
	s, _ := fleetRefsServer(t)
	cs := connect(t.Context(), t, s)
	for _, p := range []string{"/etc/passwd", "traces.json", "../x"} {
		res := call(t, cs, "pacto_impact", map[string]any{"old_ref": "payments", "new_ref": "payments", "traces": p})
		if errorCode(t, res) != CodeInvalidArgument || !strings.Contains(text(res), "/v1/traces") || strings.Contains(text(res), p) {
			t.Errorf("traces %q: %s, want INVALID_ARGUMENT pointing at the intake without the path", p, text(res))
		}
	}
}

// TestImpactTracesNotARegularFile: a FIFO (or a directory) in the
// workspace is refused at once, without blocking on a writer that never
// comes.
func TestImpactTracesNotARegularFile(t *testing.T) {
	ws := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(ws, "pipe.json"), 0o600); err != nil {
		t.Skipf("no FIFO here: %v", err)
	}
	if err := os.Mkdir(filepath.Join(ws, "dir.json"), 0o755); err != nil {
		t.Fatal(err)
	}
	f := &fleetState{workspace: ws}
	for _, p := range []string{"pipe.json", "dir.json", "missing.json"} {
		_, err := f.callTraces(p)
		var te *ToolError
		if !errors.As(err, &te) || te.Field != "traces" || (!strings.Contains(te.Message, "not a regular file") && !strings.Contains(te.Message, "no such file")) {
			t.Errorf("%s: %v, want a traces error saying what it is", p, err)
		}
	}
}

// TestTracesFlagRefusesBadFiles: --traces with a file that is missing or
// not OTLP/JSON stops the start with an error naming the flag and file.
func TestTracesFlagRefusesBadFiles(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"resourceSpans": 3}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{bad, filepath.Join(dir, "missing.json")} {
		_, err := NewServer(t.Context(), &Options{Workspace: dir, Fleet: FleetOptions{Enabled: true, Local: []string{dir}, Traces: []string{p}}})
		if err == nil || !strings.Contains(err.Error(), "Traces") || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: %v, want an error naming Fleet.Traces and the file", p, err)
		}
	}
	if _, err := NewServer(t.Context(), &Options{Workspace: dir, Fleet: FleetOptions{Traces: []string{bad}}}); err == nil || !strings.Contains(err.Error(), "Enabled") {
		t.Errorf("traces without the fleet: %v", err)
	}
}
