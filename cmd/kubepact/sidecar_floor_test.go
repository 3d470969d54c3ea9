//go:build !sidecaronly

package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kubepact/kubepact/test/demoservice"
	"github.com/kubepact/kubepact/test/gobuild"
)

// floorRounds, floorCalls1 and floorCalls16 size TestSidecarVsFloor: the
// interleaved rounds, and the calls of one round at 1 client and (in all)
// at 16 clients. KUBEPACT_FLOOR_ROUNDS and KUBEPACT_FLOOR_CALLS (calls per
// client at 1 client; 16 clients make four times as many in all) change
// them.
const (
	floorRounds  = 3
	floorCalls1  = 1500
	floorClients = 16
)

// noRateLimits turns the sidecar's per-caller rate limits off: the
// harness is one caller sending as fast as it can, which is what they
// refuse, and the floor has none.
var noRateLimits = []string{"--rate-limit-requests=-1", "--rate-limit-tool-calls=-1"}

// floorServer is one contestant of TestSidecarVsFloor: how to start it.
type floorServer struct {
	name  string
	start func(t *testing.T, upstream string) *sidecarProc
}

// floorCell is what one contestant did at one client count in one round.
type floorCell struct {
	lat      []time.Duration // per call, sorted
	wall     time.Duration
	cpuTicks int64 // utime+stime of the server process, in clock ticks
}

// TestSidecarVsFloor is issue 27's side-by-side measurement: the real
// `kubepact sidecar` process on the catalog example in front of a
// loopback upstream (the demo service), beside test/sidecarfloor — a
// go-sdk server whose one tool does the same GET —, beside the slim
// sidecar build (-tags sidecaronly, bin/kubepact-sidecar, what injected
// sidecars run) and beside the sidecar with its soft memory limit off
// (--memory-limit-mib 0), with the same harness: go-sdk clients over Streamable HTTP calling getProduct, each
// client its own session. Each round starts every contestant afresh, in
// an order that rotates between rounds, and runs 1 client and then 16
// concurrent clients. It logs p50/p99 latency, calls/s, server CPU per
// 1,000 calls (utime+stime from /proc/PID/stat), idle RSS (VmRSS after
// ready and one initialize, before a call; with its anonymous and
// file-backed parts, RssAnon and RssFile), peak RSS (VmHWM at the end),
// start→ready (process start to the first ready /readyz) and
// start→initialize (to the end of the first client's initialize
// handshake), and each figure as a ratio to the floor. Nothing about time is asserted: every call must
// succeed, that is all.
//
// It takes minutes (about three on a loaded 2-CPU machine), so it runs
// only when asked:
//
//	KUBEPACT_SIDECAR_FLOOR=1 go test -count=1 -run TestSidecarVsFloor -v -timeout 20m ./cmd/kubepact
//
// KUBEPACT_FLOOR_MEMLIMITS=32,64 adds the sidecar at those soft memory
// limits (MiB) beside the default (32) and none; KUBEPACT_FLOOR_BASELINE
// names another kubepact binary (such as main's) to run beside this one.
// The sidecar is built with kubepact's dependency patches (test/gobuild,
// hack/sdkpatch); the floor with the go-sdk as upstream ships it.
func TestSidecarVsFloor(t *testing.T) {
	if os.Getenv("KUBEPACT_SIDECAR_FLOOR") == "" {
		t.Skip("the sidecar-vs-floor measurement runs with KUBEPACT_SIDECAR_FLOOR=1 (minutes)")
	}
	rounds, calls1 := floorRounds, floorCalls1
	if v, err := strconv.Atoi(os.Getenv("KUBEPACT_FLOOR_ROUNDS")); err == nil && v > 0 {
		rounds = v
	}
	if v, err := strconv.Atoi(os.Getenv("KUBEPACT_FLOOR_CALLS")); err == nil && v > 0 {
		calls1 = v
	}
	callsPer16 := max(1, calls1*4/floorClients)

	floorBin := filepath.Join(t.TempDir(), "sidecarfloor")
	build := gobuild.Stock(repoRoot(t), floorBin, "./test/sidecarfloor") // the go-sdk as upstream ships it
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building test/sidecarfloor: %v\n%s", err, out)
	}
	slimBin := slimSidecarBin(t)
	demo := httptest.NewServer(demoservice.New(nil))
	t.Cleanup(demo.Close)

	servers := []floorServer{
		{"floor", func(t *testing.T, upstream string) *sidecarProc {
			port := freePort(t)
			p := &sidecarProc{mcpURL: fmt.Sprintf("http://127.0.0.1:%d/mcp", port)}
			p.launchBin(t, floorBin, []string{"-upstream", upstream, "-addr", "127.0.0.1:" + strconv.Itoa(port)}, "floor ready", func() bool {
				resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/readyz", port))
				if err != nil {
					return false
				}
				resp.Body.Close()
				return resp.StatusCode == http.StatusOK
			})
			return p
		}},
		{"sidecar", func(t *testing.T, upstream string) *sidecarProc { return startSidecar(t, upstream, noRateLimits...) }},
		{"sidecar-slim", func(t *testing.T, upstream string) *sidecarProc {
			return startSidecarBin(t, slimBin, upstream, noRateLimits...)
		}},
		{"sidecar-nolimit", func(t *testing.T, upstream string) *sidecarProc {
			return startSidecar(t, upstream, append(slices.Clone(noRateLimits), "--memory-limit-mib", "0")...)
		}},
	}
	// KUBEPACT_FLOOR_MEMLIMITS=32,64 adds the sidecar with those soft
	// memory limits (MiB), to choose the default by measurement.
	for _, mib := range strings.FieldsFunc(os.Getenv("KUBEPACT_FLOOR_MEMLIMITS"), func(r rune) bool { return r == ',' }) {
		if _, err := strconv.Atoi(mib); err != nil {
			t.Fatalf("KUBEPACT_FLOOR_MEMLIMITS: %q is not a whole number of MiB (accepted: a comma-separated list such as 32,64)", mib)
		}
		servers = append(servers, floorServer{"sidecar-" + mib + "MiB", func(t *testing.T, upstream string) *sidecarProc {
			return startSidecar(t, upstream, append(slices.Clone(noRateLimits), "--memory-limit-mib", mib)...)
		}})
	}
	// KUBEPACT_FLOOR_BASELINE=/path/to/kubepact adds the sidecar of that
	// binary (another build, such as main's) beside this tree's.
	if bin := os.Getenv("KUBEPACT_FLOOR_BASELINE"); bin != "" {
		servers = append(servers, floorServer{"baseline", func(t *testing.T, upstream string) *sidecarProc {
			port, hport := freePort(t), freePort(t)
			p := &sidecarProc{mcpURL: fmt.Sprintf("http://127.0.0.1:%d/mcp", port), health: fmt.Sprintf("http://127.0.0.1:%d", hport)}
			p.launchBin(t, bin, append([]string{"sidecar", "--bundle", filepath.Join(repoRoot(t), "examples", "bundles", "catalog"), "--upstream", upstream,
				"--port", strconv.Itoa(port), "--health-addr", "127.0.0.1:" + strconv.Itoa(hport)}, noRateLimits...), "baseline sidecar ready", func() bool {
				resp, err := http.Get(p.health + "/readyz")
				if err != nil {
					return false
				}
				resp.Body.Close()
				return resp.StatusCode == http.StatusOK
			})
			return p
		}})
	}
	type key struct {
		server  string
		clients int
	}
	cells := map[key][]floorCell{}
	idle, idleAnon, idleFile := map[string][]int64{}, map[string][]int64{}, map[string][]int64{}
	peak := map[string][]int64{}
	ready, initialized := map[string][]time.Duration{}, map[string][]time.Duration{}
	for r := range rounds {
		for i := range servers {
			s := servers[(i+r)%len(servers)]
			t.Run(fmt.Sprintf("round%d/%s", r, s.name), func(t *testing.T) {
				p := s.start(t, demo.URL)
				ready[s.name] = append(ready[s.name], p.ready)
				// start→initialize: ready, then the first client's
				// initialize handshake, at once.
				t0 := time.Now()
				sessions := make([]*sdk.ClientSession, floorClients)
				sessions[0] = p.connect(t)
				initialized[s.name] = append(initialized[s.name], p.ready+time.Since(t0))
				time.Sleep(200 * time.Millisecond)
				pid := p.cmd.Process.Pid
				idle[s.name] = append(idle[s.name], vmRSS(t, pid))
				idleAnon[s.name] = append(idleAnon[s.name], procStatus(t, pid, "RssAnon:"))
				idleFile[s.name] = append(idleFile[s.name], procStatus(t, pid, "RssFile:"))
				for c := 1; c < len(sessions); c++ {
					sessions[c] = p.connect(t)
				}
				floorCalls(t, p, sessions[:1], 100) // warm up: connections, caches
				cells[key{s.name, 1}] = append(cells[key{s.name, 1}], floorCalls(t, p, sessions[:1], calls1))
				cells[key{s.name, floorClients}] = append(cells[key{s.name, floorClients}], floorCalls(t, p, sessions, callsPer16))
				peak[s.name] = append(peak[s.name], procStatus(t, pid, "VmHWM:"))
			})
		}
	}
	if t.Failed() {
		return
	}

	var b strings.Builder
	fmt.Fprintf(&b, "sidecar vs go-sdk floor: %d rounds, %d calls at 1 client, %d×%d at %d clients (machine: %d CPUs, load average %s)\n",
		rounds, calls1, floorClients, callsPer16, floorClients, runtime.NumCPU(), loadAverage())
	fmt.Fprintf(&b, "%-16s %4s %9s %9s %9s %12s %8s %8s %8s\n", "server", "cl", "p50", "p99", "calls/s", "cpu-ms/1k", "×p50", "×calls/s", "×cpu")
	for _, clients := range []int{1, floorClients} {
		base := summarise(cells[key{"floor", clients}])
		for _, s := range servers {
			m := summarise(cells[key{s.name, clients}])
			fmt.Fprintf(&b, "%-16s %4d %9s %9s %9.0f %12.1f %8.2f %8.2f %8.2f\n", s.name, clients,
				m.p50.Round(time.Microsecond), m.p99.Round(time.Microsecond), m.rate, m.cpuPer1k,
				float64(m.p50)/float64(base.p50), m.rate/base.rate, m.cpuPer1k/base.cpuPer1k)
		}
	}
	fmt.Fprintf(&b, "%-16s %12s %12s %12s %12s %8s %14s %14s\n", "server", "idle-RSS", "anon", "file", "peak-RSS", "×idle", "start→ready", "start→init")
	baseIdle := median(idle["floor"])
	for _, s := range servers {
		fmt.Fprintf(&b, "%-16s %12s %12s %12s %12s %8.2f %14s %14s\n", s.name, mibs(median(idle[s.name])),
			mibs(median(idleAnon[s.name])), mibs(median(idleFile[s.name])), mibs(median(peak[s.name])),
			float64(median(idle[s.name]))/float64(baseIdle),
			median(ready[s.name]).Round(time.Millisecond), median(initialized[s.name]).Round(time.Millisecond))
	}
	t.Log("\n" + b.String())
}

// floorCalls runs calls getProduct calls on each session concurrently and
// returns every call's latency, the wall time and the server's CPU ticks.
func floorCalls(t *testing.T, p *sidecarProc, sessions []*sdk.ClientSession, calls int) floorCell {
	t.Helper()
	pid := p.cmd.Process.Pid
	before := cpuTicks(t, pid)
	lats := make([][]time.Duration, len(sessions))
	var wg sync.WaitGroup
	var failed sync.Once
	start := time.Now()
	for c, cs := range sessions {
		wg.Go(func() {
			ids := []string{"p-0001", "p-0002", "p-0003"}
			for i := range calls {
				t0 := time.Now()
				res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "getProduct", Arguments: map[string]any{"productId": ids[i%len(ids)]}})
				if err != nil || res.IsError {
					failed.Do(func() { t.Errorf("getProduct: %v %s\n%s", err, toolJSON(res), tail(p.stderr.String(), 4096)) })
					return
				}
				lats[c] = append(lats[c], time.Since(t0))
			}
		})
	}
	wg.Wait()
	cell := floorCell{wall: time.Since(start), cpuTicks: cpuTicks(t, pid) - before}
	cell.lat = slices.Concat(lats...)
	slices.Sort(cell.lat)
	return cell
}

type floorSummary struct {
	p50, p99 time.Duration
	rate     float64 // calls/s
	cpuPer1k float64 // server CPU ms per 1,000 calls
}

// summarise pools the rounds' latencies for p50/p99 and takes the median
// round's throughput and CPU.
func summarise(cells []floorCell) floorSummary {
	var all []time.Duration
	var rates, cpu []float64
	for _, c := range cells {
		all = append(all, c.lat...)
		rates = append(rates, float64(len(c.lat))/c.wall.Seconds())
		cpu = append(cpu, float64(c.cpuTicks)*1000/clockTicks/float64(len(c.lat))*1000)
	}
	slices.Sort(all)
	if len(all) == 0 {
		return floorSummary{}
	}
	return floorSummary{p50: all[len(all)/2], p99: all[len(all)*99/100], rate: median(rates), cpuPer1k: median(cpu)}
}

func median[T int64 | float64 | time.Duration](v []T) T {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

// clockTicks is USER_HZ, the unit of /proc/PID/stat's utime and stime (100
// on every Linux architecture Go supports).
const clockTicks = 100

// cpuTicks is a process's utime+stime from /proc/PID/stat.
func cpuTicks(t *testing.T, pid int) int64 {
	t.Helper()
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	// The command name (field 2) may hold spaces; the fields after its
	// closing parenthesis start at field 3, so utime (14) and stime (15)
	// are the 12th and 13th of them.
	rest := string(raw[strings.LastIndexByte(string(raw), ')')+2:])
	f := strings.Fields(rest)
	u, _ := strconv.ParseInt(f[11], 10, 64)
	s, _ := strconv.ParseInt(f[12], 10, 64)
	return u + s
}

// loadAverage is /proc/loadavg's 1, 5 and 15 minute figures: how loaded
// the machine was, beside the figures.
func loadAverage() string {
	raw, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(raw)); err == nil && len(f) >= 3 {
		return strings.Join(f[:3], " ")
	}
	return "unknown"
}

// tail is the last n bytes of s.
func tail(s string, n int) string { return s[max(0, len(s)-n):] }
