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
	t.Cleanup(func() { debug.SetMemoryLimit(math.MaxInt64); debug.SetGCPercent(100) })
	live := make([]byte, 64<<20)
	for i := range live {
		live[i] = byte(i)
	}
	got, gcPct := SettleMemory(16)
	if _, set := os.LookupEnv("GOGC"); !set && gcPct != 100 {
		t.Errorf("GOGC %d with 64 MiB live; want Go's default 100 for a heap this large", gcPct)
	}
	if got < 64<<20*5/4 || debug.SetMemoryLimit(-1) != got {
		t.Errorf("limit applied %d MiB (runtime: %d MiB) with 64 MiB live; want at least 80 MiB", got>>20, debug.SetMemoryLimit(-1)>>20)
	}
	runtime.KeepAlive(live)
	runtime.GC()
	if got, _ := SettleMemory(4096); got != 4096<<20 {
		t.Errorf("limit applied %d MiB, want the 4096 MiB asked for", got>>20)
	}
	if got, _ := SettleMemory(0); got != 0 {
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
	if got, _ := SettleMemory(4096); got == 0 && os.Getenv("GOMEMLIMIT") == "" {
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

// TestSettleProcs: the number asked for is the GOMAXPROCS in effect
// afterwards; 0 keeps the runtime's; a GOMAXPROCS variable wins.
func TestSettleProcs(t *testing.T) {
	before := runtime.GOMAXPROCS(0)
	t.Cleanup(func() { runtime.GOMAXPROCS(before) })
	if _, set := os.LookupEnv("GOMAXPROCS"); !set {
		if got := SettleProcs(1); got != 1 || runtime.GOMAXPROCS(0) != 1 {
			t.Errorf("SettleProcs(1) = %d, GOMAXPROCS now %d; want 1", got, runtime.GOMAXPROCS(0))
		}
		runtime.GOMAXPROCS(3)
		if got := SettleProcs(0); got != 3 || runtime.GOMAXPROCS(0) != 3 {
			t.Errorf("SettleProcs(0) = %d, GOMAXPROCS now %d; want the 3 in effect kept", got, runtime.GOMAXPROCS(0))
		}
	}
	t.Setenv("GOMAXPROCS", "2")
	runtime.GOMAXPROCS(2)
	if got := SettleProcs(1); got != 2 || runtime.GOMAXPROCS(0) != 2 {
		t.Errorf("SettleProcs(1) with GOMAXPROCS=2 set = %d, GOMAXPROCS now %d; want the variable's 2 kept", got, runtime.GOMAXPROCS(0))
	}
}

// TestGCPercent: twice Go's default GOGC while the live heap is small,
// falling so that the garbage between collections stays within
// gcHeadroomBytes, and Go's default from gcHeadroomBytes live on.
func TestGCPercent(t *testing.T) {
	for _, tc := range []struct {
		live int64
		want int
	}{
		{0, DefaultGCPercent}, {1 << 20, DefaultGCPercent}, {4 << 20, DefaultGCPercent},
		{6 << 20, 133}, {8 << 20, 100}, {60 << 20, 100},
	} {
		if got := gcPercent(tc.live); got != tc.want {
			t.Errorf("gcPercent(%d MiB) = %d, want %d", tc.live>>20, got, tc.want)
		}
		if pct := gcPercent(tc.live); tc.live > 0 && tc.live*int64(pct-100)/100 > gcHeadroomBytes/2 {
			t.Errorf("gcPercent(%d MiB) = %d grows the heap %d MiB past Go's default goal; want at most %d", tc.live>>20, pct, tc.live*int64(pct-100)/100>>20, gcHeadroomBytes/2>>20)
		}
	}
}

// TestSettleMemoryGC: the GOGC in effect after SettleMemory is
// gcPercent of the heap left live, and a GOGC variable wins.
func TestSettleMemoryGC(t *testing.T) {
	t.Cleanup(func() { debug.SetGCPercent(100); debug.SetMemoryLimit(math.MaxInt64) })
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(100)
		_, got := SettleMemory(0)
		want := gcPercent(liveHeapBytes())
		if now := debug.SetGCPercent(100); got != want || now != want {
			t.Errorf("SettleMemory says GOGC %d, the runtime has %d; want gcPercent of %d B live = %d", got, now, liveHeapBytes(), want)
		}
	}
	t.Setenv("GOGC", "150")
	debug.SetGCPercent(150)
	if _, got := SettleMemory(0); got != 150 || debug.SetGCPercent(150) != 150 {
		t.Errorf("SettleMemory with GOGC=150 set says GOGC %d; want the variable's 150 kept", got)
	}
}
