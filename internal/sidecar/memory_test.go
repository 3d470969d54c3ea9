package sidecar

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"testing"
)

// TestSettleMemoryFloor: a soft limit under what the process keeps live is
// raised above it (a limit that cannot be met only makes the runtime
// collect on every allocation), and a limit above it is kept.
func TestSettleMemoryFloor(t *testing.T) {
	if _, set := os.LookupEnv("GOMEMLIMIT"); set {
		t.Skip("GOMEMLIMIT is set: it wins over --memory-limit-mib")
	}
	t.Cleanup(func() { debug.SetMemoryLimit(math.MaxInt64) })
	live := make([]byte, 64<<20)
	for i := range live {
		live[i] = byte(i)
	}
	got := SettleMemory(16)
	if got < 64<<20*5/4 || debug.SetMemoryLimit(-1) != got {
		t.Errorf("limit applied %d MiB (runtime: %d MiB) with 64 MiB live; want at least 80 MiB", got>>20, debug.SetMemoryLimit(-1)>>20)
	}
	runtime.KeepAlive(live)
	runtime.GC()
	if got := SettleMemory(4096); got != 4096<<20 {
		t.Errorf("limit applied %d MiB, want the 4096 MiB asked for", got>>20)
	}
	if got := SettleMemory(0); got != 0 {
		t.Errorf("no limit asked for, yet %d MiB applied", got>>20)
	}
}
