package sidecar

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
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

// TestReleaseStartupPages: after start-up the executable's read-only pages
// leave the resident set (RssFile falls), and the process goes on running
// the code they held, mapped back from the page cache.
func TestReleaseStartupPages(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("ReleaseStartupPages acts on Linux only")
	}
	before := rssFile(t)
	if n := ReleaseStartupPages(); n == 0 {
		t.Fatal("no mapping of the executable was released")
	}
	after := rssFile(t)
	if after >= before {
		t.Errorf("RssFile %d kB before, %d kB after; want it lower after", before, after)
	}
	t.Logf("RssFile %d kB before, %d kB after", before, after)
	// Code and read-only data from the released pages still run: a
	// settle and a collection go through the runtime and this package.
	if got := SettleMemory(4096); got == 0 && os.Getenv("GOMEMLIMIT") == "" {
		t.Error("SettleMemory after the release applied no limit")
	}
	debug.SetMemoryLimit(math.MaxInt64)
}

// rssFile is this process's RssFile in kB (/proc/self/status).
func rssFile(t *testing.T) int64 {
	t.Helper()
	raw, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	for line := range strings.Lines(string(raw)) {
		if rest, ok := strings.CutPrefix(line, "RssFile:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb
		}
	}
	t.Fatal("no RssFile line in /proc/self/status")
	return 0
}
