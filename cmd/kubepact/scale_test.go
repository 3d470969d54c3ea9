//go:build !sidecaronly

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kubepact/kubepact/test/bigspec"
)

// writeLargeBundle writes the generated large API bundle to a new directory.
func writeLargeBundle(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	for name, data := range bigspec.WriteBundle(bigspec.Large) {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// vmHWM reads a process's peak resident set size in bytes from /proc.
func vmHWM(t testing.TB, pid int) int64 { return procStatus(t, pid, "VmHWM:") }

// TestMCPLargeAPI serves a generated API of real-world size (1,250
// operations, 950 shared component schemas, 7.6 MB of JSON) with
// `kubepact mcp BUNDLE --allow-writes` as a process and reports what a user
// would feel: start → initialize answered, peak and steady resident memory,
// and the size of tools/list, page by page. It asserts correctness (every
// operation listed once, pages chained by cursors that are the same on a
// second pass), never a time or a size: those are reported (go test -v).
func TestMCPLargeAPI(t *testing.T) {
	if testing.Short() {
		t.Skip("generates and serves a 7.6 MB API")
	}
	dir := writeLargeBundle(t)
	cmd := exec.Command(kubepactBin, "mcp", dir, "--allow-writes", "--workspace", t.TempDir())
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "KUBEPACT_CACHE_DIR="+t.TempDir())
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	start := time.Now()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "scale", Version: "v0"}, nil).Connect(t.Context(), &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, stderr)
	}
	initialized := time.Since(start)
	t.Cleanup(func() { _ = cs.Close() })
	pid := cmd.Process.Pid
	initCPU := cpuTime(t, pid)

	list := func() (names map[string]bool, cursors []string, pageBytes []int) {
		names = map[string]bool{}
		cursor := ""
		for {
			res, err := cs.ListTools(t.Context(), &sdk.ListToolsParams{Cursor: cursor})
			if err != nil {
				t.Fatalf("tools/list (cursor %q): %v", cursor, err)
			}
			raw, _ := json.Marshal(res)
			pageBytes = append(pageBytes, len(raw))
			for _, tl := range res.Tools {
				if names[tl.Name] {
					t.Errorf("tool %s listed twice", tl.Name)
				}
				names[tl.Name] = true
			}
			if res.NextCursor == "" {
				return names, cursors, pageBytes
			}
			cursors = append(cursors, res.NextCursor)
			cursor = res.NextCursor
		}
	}
	names, cursors, pages := list()
	listed := time.Since(start)
	if want := bigspec.Large.Operations(); len(names) < want {
		t.Errorf("tools/list has %d tools; want at least the %d operations", len(names), want)
	}
	_, cursors2, _ := list()
	if !slicesEqual(cursors, cursors2) {
		t.Errorf("cursors differ between two passes:\n%v\n%v", cursors, cursors2)
	}
	res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "get_resource007", Arguments: map[string]any{"id": 7}})
	if err != nil || !res.IsError {
		t.Errorf("a wrongly typed argument: %v %+v (want an argument error)", err, res)
	}
	peak := vmHWM(t, pid)
	time.Sleep(3 * time.Second) // let the runtime return what it freed
	steady := vmRSS(t, pid)
	total, largest := 0, 0
	for _, n := range pages {
		total += n
		largest = max(largest, n)
	}
	t.Logf("large API: %d tools; start → initialize %v (CPU %v), → all tools listed %v; peak RSS %.0f MiB, steady RSS %.0f MiB; tools/list %d bytes in %d page(s), largest page %d bytes",
		len(names), initialized.Round(time.Millisecond), initCPU, listed.Round(time.Millisecond), float64(peak)/(1<<20), float64(steady)/(1<<20), total, len(pages), largest)
}

// cpuTime reads the user and system CPU time a process has used from
// /proc/PID/stat: on a shared machine, a figure the other load does not
// inflate as it does wall time.
func cpuTime(t testing.TB, pid int) time.Duration {
	t.Helper()
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	// Fields after the command name (which may hold spaces, in parentheses).
	rest := string(raw[bytes.LastIndexByte(raw, ')')+2:])
	f := strings.Fields(rest)
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * time.Second / 100 // USER_HZ is 100 on Linux
}

func slicesEqual(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
