//go:build !sidecaronly

package main

import (
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
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
	"github.com/kubepact/kubepact/test/freeport"
	"github.com/kubepact/kubepact/test/gobuild"
)

// floorRounds, floorCalls1, floorClients and floorBlocks size
// TestSidecarVsFloor: the rounds, the calls of one round at 1 client (at
// 16 clients four times as many in all), and the blocks each phase is cut
// into. KUBEPACT_FLOOR_ROUNDS and KUBEPACT_FLOOR_CALLS change the first two.
const (
	floorRounds  = 3
	floorCalls1  = 1500
	floorClients = 16
	floorBlocks  = 10
)

// noRateLimits turns the sidecar's per-caller rate limits off: the
// harness is one caller sending as fast as it can, which is what they
// refuse, and the floor has none.
var noRateLimits = []string{"--rate-limit-requests=-1", "--rate-limit-tool-calls=-1"}

// floorServer is one contestant of TestSidecarVsFloor: its binary and its
// arguments, given the upstream's URL, the MCP port and the health port.
type floorServer struct {
	name string
	bin  string
	args func(upstream string, port, hport int) []string
	// ready is the URL that answers 200 once the contestant serves: on
	// the health port (hport), or the MCP port for the floor.
	ready func(port, hport int) string
	// env is added to the contestant's environment (such as GOGC=400).
	env []string
}

// sidecarArgs is a contestant running `BIN sidecar` on the catalog example
// with the rate limits off and extra flags.
func sidecarArgs(root string, extra ...string) func(string, int, int) []string {
	return func(upstream string, port, hport int) []string {
		return append([]string{"sidecar", "--bundle", filepath.Join(root, "examples", "bundles", "catalog"), "--upstream", upstream,
			"--port", strconv.Itoa(port), "--health-addr", "127.0.0.1:" + strconv.Itoa(hport)}, append(slices.Clone(noRateLimits), extra...)...)
	}
}

func healthReady(_, hport int) string { return fmt.Sprintf("http://127.0.0.1:%d/readyz", hport) }

// floorCell is what one contestant did at one client count in one round:
// every block's latencies, wall time and server CPU, and the garbage
// collections of the phase.
type floorCell struct {
	blocks   [][]time.Duration // per block, each sorted
	wall     time.Duration     // sum over the blocks
	cpuTicks int64             // utime+stime of the server process over the blocks, in clock ticks
	gcs      int               // collections during the phase (GODEBUG=gctrace=1)
	gcCPU    float64           // their CPU, ms (the five cpu figures of each gctrace line)
}

func (c *floorCell) calls() int {
	n := 0
	for _, b := range c.blocks {
		n += len(b)
	}
	return n
}

// TestSidecarVsFloor is issue 27's side-by-side measurement: the real
// `kubepact sidecar` process on the catalog example in front of a
// loopback upstream (the demo service), beside test/sidecarfloor — a
// go-sdk server whose one tool does the same GET through an HTTP client
// configured as the sidecar's (idle connections kept per host) —, beside
// the slim sidecar build (-tags sidecaronly, bin/kubepact-sidecar, what
// injected sidecars run), beside the sidecar with its soft memory limit
// off (--memory-limit-mib 0) and beside the floor serving the stateless
// era as the sidecar does (floor-stateless, -stateless-era), with the same
// harness: go-sdk clients over Streamable HTTP calling getProduct, each
// client its own session and its own HTTP connection (its own transport,
// as separate agents have).
//
// Fair under a loaded machine: each round starts every contestant afresh
// and keeps them all running; each phase (1 client, then 16 clients) is
// cut into blocks, and the contestants take turns block by block, in an
// order that rotates, so a change of load falls on all of them alike.
// Every contestant writes its stderr to a file (as a container runtime
// writes a container's log), so the harness spends the same on each
// however much it logs, and runs with GODEBUG=gctrace=1 so the
// collections of each phase are counted.
//
// It logs p50/p99 latency pooled over the rounds, the p50 overhead above
// the floor both pooled and as the median of the block-by-block
// differences (a block of a contestant against the floor's block of the
// same turn), calls/s, server CPU per 1,000 calls (utime+stime from
// /proc/PID/stat), GC cycles and GC CPU per 1,000 calls, each round's
// overhead and throughput ratio with the load average, idle RSS (VmRSS
// after ready and one initialize, before a call; with RssAnon and
// RssFile), peak RSS (VmHWM at the end), start→ready and start→initialize.
// Nothing about time is asserted: every call must succeed, that is all.
//
// It takes minutes, so it runs only when asked:
//
//	KUBEPACT_SIDECAR_FLOOR=1 go test -count=1 -run TestSidecarVsFloor -v -timeout 20m ./cmd/kubepact
//
// KUBEPACT_FLOOR_MEMLIMITS=32,64 adds the sidecar at those soft memory
// limits (MiB) beside the default (32) and none;
// KUBEPACT_FLOOR_VARIANTS="sidecar-slim GOMAXPROCS=1;floor GOGC=200" adds
// those contestants again with the settings added to their environment
// (sidecar-slim[GOMAXPROCS=1], floor[GOGC=200]);
// KUBEPACT_FLOOR_BASELINE
// names another kubepact binary (such as main's) to run beside this one
// (several, comma-separated: baseline, baseline2, …);
// KUBEPACT_FLOOR_ONLY=floor,sidecar-slim runs only the named contestants
// (the floor always). KUBEPACT_FLOOR_PROTOCOL=2025-11-25 pins the protocol
// version the clients ask for; unset, they ask for the Go client's latest,
// 2026-07-28, which the sidecar serves statelessly (the SDK makes and
// closes a session per request) and the floor, a stateful go-sdk handler,
// refuses, so its clients fall back to sessions. The era each contestant
// negotiated is logged. The sidecar is built with kubepact's dependency
// patches (test/gobuild, hack/sdkpatch); the floor with the go-sdk as
// upstream ships it.
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
	per1 := max(1, calls1/floorBlocks)                 // calls of one 1-client block
	per16 := max(1, calls1*4/floorClients/floorBlocks) // calls of each client in one 16-client block

	root := repoRoot(t)
	floorBin := filepath.Join(t.TempDir(), "sidecarfloor")
	build := gobuild.Stock(root, floorBin, "./test/sidecarfloor") // the go-sdk as upstream ships it
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building test/sidecarfloor: %v\n%s", err, out)
	}
	slimBin := slimSidecarBin(t)
	demo := httptest.NewServer(demoservice.New(nil))
	t.Cleanup(demo.Close)

	servers := []floorServer{
		{"floor", floorBin, func(upstream string, port, _ int) []string {
			return []string{"-upstream", upstream, "-addr", "127.0.0.1:" + strconv.Itoa(port)}
		}, func(port, _ int) string { return fmt.Sprintf("http://127.0.0.1:%d/readyz", port) }, nil},
		// The floor serving the stateless era too, as the sidecar does.
		{"floor-stateless", floorBin, func(upstream string, port, _ int) []string {
			return []string{"-upstream", upstream, "-addr", "127.0.0.1:" + strconv.Itoa(port), "-stateless-era"}
		}, func(port, _ int) string { return fmt.Sprintf("http://127.0.0.1:%d/readyz", port) }, nil},
		{"sidecar", kubepactBin, sidecarArgs(root), healthReady, nil},
		{"sidecar-slim", slimBin, sidecarArgs(root), healthReady, nil},
		{"sidecar-nolimit", kubepactBin, sidecarArgs(root, "--memory-limit-mib", "0"), healthReady, nil},
	}
	// KUBEPACT_FLOOR_MEMLIMITS=32,64 adds the sidecar with those soft
	// memory limits (MiB), to choose the default by measurement.
	for _, mib := range strings.FieldsFunc(os.Getenv("KUBEPACT_FLOOR_MEMLIMITS"), func(r rune) bool { return r == ',' }) {
		if _, err := strconv.Atoi(mib); err != nil {
			t.Fatalf("KUBEPACT_FLOOR_MEMLIMITS: %q is not a whole number of MiB (accepted: a comma-separated list such as 32,64)", mib)
		}
		servers = append(servers, floorServer{"sidecar-" + mib + "MiB", kubepactBin, sidecarArgs(root, "--memory-limit-mib", mib), healthReady, nil})
	}
	// KUBEPACT_FLOOR_BASELINE=/path/to/kubepact adds the sidecar of that
	// binary (another build, such as main's) beside this tree's.
	// Several, comma-separated, are baseline, baseline2, baseline3, …
	for i, bin := range strings.FieldsFunc(os.Getenv("KUBEPACT_FLOOR_BASELINE"), func(r rune) bool { return r == ',' }) {
		name := "baseline"
		if i > 0 {
			name += strconv.Itoa(i + 1)
		}
		servers = append(servers, floorServer{name, bin, sidecarArgs(root), healthReady, nil})
	}
	// KUBEPACT_FLOOR_VARIANTS="sidecar-slim GOMAXPROCS=1;floor GOMAXPROCS=1 GOGC=200"
	// adds, for each ';'-separated entry, the contestant it names run with
	// those VAR=value settings added to its environment, named
	// sidecar-slim[GOMAXPROCS=1], floor[GOMAXPROCS=1+GOGC=200]: the
	// runtime's settings (GOMAXPROCS and GOGC win over the sidecar's own),
	// to choose the defaults by measurement, and the same settings on the
	// floor. The floor itself stays the one every row is compared with.
	for _, entry := range strings.FieldsFunc(os.Getenv("KUBEPACT_FLOOR_VARIANTS"), func(r rune) bool { return r == ';' }) {
		f := strings.Fields(entry)
		if len(f) < 2 {
			t.Fatalf("KUBEPACT_FLOOR_VARIANTS: %q is not a contestant followed by VAR=value settings (accepted: ';'-separated entries such as \"sidecar-slim GOMAXPROCS=1;floor GOGC=200\")", entry)
		}
		i := slices.IndexFunc(servers, func(s floorServer) bool { return s.name == f[0] })
		if i < 0 {
			t.Fatalf("KUBEPACT_FLOOR_VARIANTS: %q names no contestant (names: floor, floor-stateless, sidecar, sidecar-slim, sidecar-nolimit, sidecar-NMiB, baseline)", f[0])
		}
		for _, kv := range f[1:] {
			if k, _, ok := strings.Cut(kv, "="); !ok || k == "" {
				t.Fatalf("KUBEPACT_FLOOR_VARIANTS: %q is not VAR=value", kv)
			}
		}
		v := servers[i]
		v.name += "[" + strings.Join(f[1:], "+") + "]"
		v.env = append(slices.Clone(v.env), f[1:]...)
		servers = append(servers, v)
	}
	if only := os.Getenv("KUBEPACT_FLOOR_ONLY"); only != "" {
		keep := strings.Split(only, ",")
		servers = slices.DeleteFunc(servers, func(s floorServer) bool { return s.name != "floor" && !slices.Contains(keep, s.name) })
		if len(servers) < 2 {
			t.Fatalf("KUBEPACT_FLOOR_ONLY=%q names no contestant beside the floor (names: floor-stateless, sidecar, sidecar-slim, sidecar-nolimit, sidecar-NMiB, baseline, NAME[VAR=value+…])", only)
		}
	}
	type key struct {
		server  string
		clients int
	}
	cells := map[key][]floorCell{}
	idle, idleAnon, idleFile := map[string][]int64{}, map[string][]int64{}, map[string][]int64{}
	peak := map[string][]int64{}
	ready, initialized := map[string][]time.Duration{}, map[string][]time.Duration{}
	var loads []string
	protocol := os.Getenv("KUBEPACT_FLOOR_PROTOCOL")
	negotiated := map[string]string{}
	for r := range rounds {
		t.Run(fmt.Sprintf("round%d", r), func(t *testing.T) {
			loads = append(loads, loadAverage())
			procs := make([]*floorProc, len(servers))
			// Fresh processes, started one after the other in a rotating
			// order; each is measured idle before the next starts.
			for i := range servers {
				k := (i + r) % len(servers)
				s := servers[k]
				p := startFloorProc(t, s, demo.URL)
				procs[k] = p
				ready[s.name] = append(ready[s.name], p.ready)
				// start→initialize: ready, then the first client's
				// initialize handshake, at once.
				t0 := time.Now()
				p.sessions = []*sdk.ClientSession{p.connect(t, protocol)}
				initialized[s.name] = append(initialized[s.name], p.ready+time.Since(t0))
				negotiated[s.name] = p.sessions[0].InitializeResult().ProtocolVersion
				time.Sleep(200 * time.Millisecond)
				pid := p.cmd.Process.Pid
				idle[s.name] = append(idle[s.name], vmRSS(t, pid))
				idleAnon[s.name] = append(idleAnon[s.name], procStatus(t, pid, "RssAnon:"))
				idleFile[s.name] = append(idleFile[s.name], procStatus(t, pid, "RssFile:"))
			}
			for _, p := range procs {
				for len(p.sessions) < floorClients {
					p.sessions = append(p.sessions, p.connect(t, protocol))
				}
				// Warm up: connections at both hops, caches.
				floorCalls(t, p, p.sessions[:1], 100)
				floorCalls(t, p, p.sessions, 10)
			}
			for _, ph := range []struct{ clients, calls int }{{1, per1}, {floorClients, per16}} {
				phase := make([]floorCell, len(servers))
				gc0 := make([]int, len(servers))
				for k, p := range procs {
					gc0[k] = gcCycles(p.logText())
				}
				for b := range floorBlocks {
					for i := range servers {
						k := (i + b + r) % len(servers)
						blk := floorCalls(t, procs[k], procs[k].sessions[:ph.clients], ph.calls)
						if t.Failed() {
							return
						}
						phase[k].blocks = append(phase[k].blocks, blk.lat)
						phase[k].wall += blk.wall
						phase[k].cpuTicks += blk.cpuTicks
					}
				}
				for k, p := range procs {
					phase[k].gcs, phase[k].gcCPU = gcSince(p.logText(), gc0[k])
					kk := key{servers[k].name, ph.clients}
					cells[kk] = append(cells[kk], phase[k])
				}
			}
			for k, p := range procs {
				peak[servers[k].name] = append(peak[servers[k].name], procStatus(t, p.cmd.Process.Pid, "VmHWM:"))
			}
		})
		if t.Failed() {
			return
		}
	}

	var b strings.Builder
	fmt.Fprintf(&b, "sidecar vs go-sdk floor: %d rounds × %d blocks, %d calls per block at 1 client, %d×%d per block at %d clients (machine: %d CPUs, load average at each round's start: %s; now %s)\n",
		rounds, floorBlocks, per1, floorClients, per16, floorClients, runtime.NumCPU(), strings.Join(loads, " | "), loadAverage())
	b.WriteString("protocol negotiated:")
	for _, s := range servers {
		fmt.Fprintf(&b, " %s %s", s.name, negotiated[s.name])
	}
	if protocol == "" {
		protocol = "the client's latest"
	}
	fmt.Fprintf(&b, " (asked for: %s)\n", protocol)
	fmt.Fprintf(&b, "%-16s %3s %8s %8s %8s %8s %8s %6s %9s %6s %7s %9s\n", "server", "cl", "p50", "p99", "+p50", "+p50pair", "calls/s", "×rate", "cpu-ms/1k", "×cpu", "gc/1k", "gc-ms/1k")
	for _, clients := range []int{1, floorClients} {
		base := summarise(cells[key{"floor", clients}], nil)
		for _, s := range servers {
			m := summarise(cells[key{s.name, clients}], cells[key{"floor", clients}])
			fmt.Fprintf(&b, "%-16s %3d %8s %8s %8s %8s %8.0f %6.2f %9.1f %6.2f %7.1f %9.1f\n", s.name, clients,
				m.p50.Round(time.Microsecond), m.p99.Round(time.Microsecond), (m.p50 - base.p50).Round(time.Microsecond), m.pairedOver.Round(time.Microsecond),
				m.rate, m.rate/base.rate, m.cpuPer1k, m.cpuPer1k/base.cpuPer1k, m.gcPer1k, m.gcCPUPer1k)
		}
	}
	fmt.Fprintf(&b, "per round (+p50pair at 1 client, ×calls/s at %d clients):\n", floorClients)
	for r := range rounds {
		fmt.Fprintf(&b, "  round %d (load %s):", r, loads[r])
		for _, s := range servers[1:] {
			one := summarise(cells[key{s.name, 1}][r:r+1], cells[key{"floor", 1}][r:r+1])
			many := summarise(cells[key{s.name, floorClients}][r:r+1], nil)
			base := summarise(cells[key{"floor", floorClients}][r:r+1], nil)
			fmt.Fprintf(&b, "  %s %s %.2f×", s.name, one.pairedOver.Round(time.Microsecond), many.rate/base.rate)
		}
		b.WriteString("\n")
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

// floorProc is one running contestant.
type floorProc struct {
	cmd      *exec.Cmd
	mcpURL   string
	logPath  string
	ready    time.Duration // from process start to the first ready probe
	exited   chan error
	sessions []*sdk.ClientSession
}

// startFloorProc starts s with its stderr written to a file, kills it when
// the test ends, and waits until its ready probe answers 200 (failing the
// test if it exits first or is not ready within 30 s).
func startFloorProc(t *testing.T, s floorServer, upstream string) *floorProc {
	t.Helper()
	port, hport := freeport.Port(t), freeport.Port(t)
	dir := t.TempDir()
	p := &floorProc{mcpURL: fmt.Sprintf("http://127.0.0.1:%d/mcp", port), logPath: filepath.Join(dir, "stderr.log"), exited: make(chan error, 1)}
	logf, err := os.Create(p.logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close() // the child holds its own descriptor
	p.cmd = exec.Command(s.bin, s.args(upstream, port, hport)...)
	p.cmd.Stderr = logf
	godebug := "gctrace=1"
	if v := os.Getenv("GODEBUG"); v != "" {
		godebug = v + "," + godebug
	}
	p.cmd.Env = append(append(os.Environ(), "HOME="+dir, "KUBEPACT_CACHE_DIR="+t.TempDir(), "GODEBUG="+godebug), s.env...)
	start := time.Now()
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.exited <- p.cmd.Wait() }()
	t.Cleanup(func() {
		_ = p.cmd.Process.Kill()
		t.Logf("contestant stopped (killed here, so how it ended says nothing): %v", <-p.exited)
	})
	readyURL := s.ready(port, hport)
	for {
		if resp, err := http.Get(readyURL); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		select {
		case err := <-p.exited:
			p.exited <- err // for the cleanup, which waits for the exit
			t.Fatalf("%s exited before it was ready (%v):\n%s", s.name, err, p.logText())
		case <-time.After(2 * time.Millisecond):
		}
		if time.Since(start) > 30*time.Second {
			t.Fatalf("%s: not ready after 30s:\n%s", s.name, tail(p.logText(), 4096))
		}
	}
	p.ready = time.Since(start)
	return p
}

// logText is what the process has written to stderr so far.
func (p *floorProc) logText() string {
	raw, _ := os.ReadFile(p.logPath)
	return string(raw)
}

// connect opens one client session over its own HTTP transport (one
// agent, one connection, kept alive), asking for protocol ("": the
// client's latest).
func (p *floorProc) connect(t *testing.T, protocol string) *sdk.ClientSession {
	t.Helper()
	tr := http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(tr.CloseIdleConnections)
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "sidecar-floor-test", Version: "v0"}, nil).Connect(t.Context(),
		&sdk.StreamableClientTransport{Endpoint: p.mcpURL, HTTPClient: &http.Client{Transport: tr}, DisableStandaloneSSE: true, MaxRetries: -1}, &sdk.ClientSessionOptions{ProtocolVersion: protocol})
	if err != nil {
		t.Fatalf("connecting to %s: %v\n%s", p.mcpURL, err, tail(p.logText(), 4096))
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// gcCycles is the number of the last collection a gctrace log reports.
func gcCycles(log string) int {
	n, _ := gcSince(log, math.MaxInt)
	return n
}

// gcSince counts the collections of a gctrace log numbered above after
// and sums their CPU (ms); with after = math.MaxInt it returns the last
// collection's number instead. A gctrace line reads
// "gc N @Ts P%: a+b+c ms clock, d+e/f/g+h ms cpu, …".
func gcSince(log string, after int) (count int, cpuMs float64) {
	last := 0
	for line := range strings.Lines(log) {
		rest, ok := strings.CutPrefix(line, "gc ")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		n, err := strconv.Atoi(f[0])
		if err != nil {
			continue
		}
		last = n
		if n <= after {
			continue
		}
		count++
		for i := range f {
			if f[i] == "cpu," && i > 1 && f[i-1] == "ms" {
				for _, v := range strings.FieldsFunc(f[i-2], func(r rune) bool { return r == '+' || r == '/' }) {
					x, _ := strconv.ParseFloat(v, 64)
					cpuMs += x
				}
			}
		}
	}
	if after == math.MaxInt {
		return last, 0
	}
	return count, cpuMs
}

// floorBlock is one block of calls: every call's latency (sorted), the
// wall time and the server's CPU ticks.
type floorBlock struct {
	lat      []time.Duration
	wall     time.Duration
	cpuTicks int64
}

// floorCalls runs calls getProduct calls on each session concurrently.
func floorCalls(t *testing.T, p *floorProc, sessions []*sdk.ClientSession, calls int) floorBlock {
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
			lats[c] = make([]time.Duration, 0, calls)
			for i := range calls {
				t0 := time.Now()
				res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "getProduct", Arguments: map[string]any{"productId": ids[i%len(ids)]}})
				if err != nil || res.IsError {
					failed.Do(func() { t.Errorf("getProduct: %v %s\n%s", err, toolJSON(res), tail(p.logText(), 4096)) })
					return
				}
				lats[c] = append(lats[c], time.Since(t0))
			}
		})
	}
	wg.Wait()
	blk := floorBlock{wall: time.Since(start), cpuTicks: cpuTicks(t, pid) - before}
	blk.lat = slices.Concat(lats...)
	slices.Sort(blk.lat)
	return blk
}

type floorSummary struct {
	p50, p99   time.Duration
	pairedOver time.Duration // median over blocks of (p50 of the block − p50 of the floor's block of the same turn)
	rate       float64       // calls/s
	cpuPer1k   float64       // server CPU ms per 1,000 calls
	gcPer1k    float64       // collections per 1,000 calls
	gcCPUPer1k float64       // their CPU, ms per 1,000 calls
}

// summarise pools the rounds' latencies for p50/p99 and takes the median
// round's throughput, CPU and collections; given the floor's cells of the
// same rounds, it pairs each block with the floor's for pairedOver.
func summarise(cells, floor []floorCell) floorSummary {
	var all []time.Duration
	var rates, cpu, gcs, gcCPU []float64
	var over []time.Duration
	for r, c := range cells {
		n := float64(c.calls())
		for i, blk := range c.blocks {
			all = append(all, blk...)
			if floor != nil && r < len(floor) && i < len(floor[r].blocks) && len(blk) > 0 && len(floor[r].blocks[i]) > 0 {
				fb := floor[r].blocks[i]
				over = append(over, blk[len(blk)/2]-fb[len(fb)/2])
			}
		}
		rates = append(rates, n/c.wall.Seconds())
		cpu = append(cpu, float64(c.cpuTicks)*1000/clockTicks/n*1000)
		gcs = append(gcs, float64(c.gcs)/n*1000)
		gcCPU = append(gcCPU, c.gcCPU/n*1000)
	}
	slices.Sort(all)
	if len(all) == 0 {
		return floorSummary{}
	}
	return floorSummary{p50: all[len(all)/2], p99: all[len(all)*99/100], pairedOver: median(over), rate: median(rates),
		cpuPer1k: median(cpu), gcPer1k: median(gcs), gcCPUPer1k: median(gcCPU)}
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
