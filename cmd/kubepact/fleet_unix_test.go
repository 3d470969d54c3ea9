//go:build unix && !sidecaronly

package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestFleetTargetStateFIFORefused: a FIFO as --target-state used to hang
// start-up silently (opening it waits for a writer). It is refused as not
// a regular file, in the log and in meta.limitations, and the server
// serves.
func TestFleetTargetStateFIFORefused(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "targets.yaml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	cs, stderr := startFleet(t, "--target-state", fifo)
	meta := fleetMeta(t, cs)
	lims, _ := json.Marshal(meta["limitations"])
	if !strings.Contains(string(lims), "not a regular file") || meta["completeness"] != "partial" {
		t.Errorf("FIFO target-state: completeness %v, limitations %s", meta["completeness"], lims)
	}
	if !strings.Contains(stderr.String(), "not a regular file") {
		t.Errorf("the log does not say why the target-state file was refused:\n%s", stderr)
	}
}
