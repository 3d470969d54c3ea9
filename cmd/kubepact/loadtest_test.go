//go:build !sidecaronly

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubepact/kubepact/api/v1alpha1"
	"github.com/kubepact/kubepact/bundle"
	"github.com/kubepact/kubepact/bundle/oci"
	"github.com/kubepact/kubepact/test/bigspec"
	"github.com/kubepact/kubepact/test/testregistry"
)

// Load test knobs: the chart's memory limit and the GOMEMLIMIT it sets
// (90%), and the hostile caller's size.
const (
	chartMemoryLimit  = 256 << 20
	chartGoMemLimit   = "230MiB"
	hostileWorkers    = 32
	loadPhase         = 30 * time.Second
	distinctLargeAPIs = 4
)

// TestOperatorUnderHostileCaller is the load test of issue 19: the real
// `kubepact operator` process against envtest's API server, with the
// chart's GOMEMLIMIT, its resident memory sampled from /proc (VmRSS, and
// VmHWM, the kernel's own peak, reset when the load starts).
//
// /mcp reads only fleet revisions its caller may see, so the hostile
// caller is a ServiceAccount that may list ServiceContracts in one
// namespace, where distinctLargeAPIs contracts name bundles of
// test/bigspec's 7.8 MB API (as a document of the bundle, not an
// interface: the reconciler's own projection of an interface is not /mcp's
// work, and is left out of these figures). It runs hostileWorkers
// concurrent pacto_impact calls between those revisions, by digest, so no
// cache absorbs them, for loadPhase; a ServiceAccount with no RBAC at all
// hammers the same digests beside it. A legitimate caller, allowed in
// another namespace, queries the fleet and diffs a small bundle
// meanwhile. The operator must stay under the chart's 256 MiB limit and
// serve every legitimate call.
//
// It takes minutes and a control plane, so it runs only when asked:
//
//	KUBEPACT_LOADTEST=1 KUBEBUILDER_ASSETS=bin/k8s/v1.37.2 go test -count=1 -run TestOperatorUnderHostileCaller -v -timeout 30m ./cmd/kubepact
//
// With KUBEPACT_LOADTEST_BASELINE=<a kubepact binary built from an
// earlier commit> it first runs the same load against that binary and
// logs its figures beside (nothing is asserted about it).
func TestOperatorUnderHostileCaller(t *testing.T) {
	if os.Getenv("KUBEPACT_LOADTEST") == "" {
		t.Skip("the load test runs with KUBEPACT_LOADTEST=1 (minutes, a control plane)")
	}
	admin, _, kubeconfig := operatorCluster(t, "kubepact-loadtest")

	reg := testregistry.New(t, nil)
	small, _ := pushDir(t, reg, filepath.Join(repoRoot(t), "examples", "bundles", "catalog"), "bundles/catalog:1.4.0")
	var large, digests []string
	for i := range distinctLargeAPIs {
		sh := bigspec.Large
		sh.DescriptionWords += i // another revision: another digest, the same size
		dir := t.TempDir()
		if err := os.MkdirAll(filepath.Join(dir, "docs"), 0o755); err != nil {
			t.Fatal(err)
		}
		files := map[string][]byte{
			"pacto.yaml":          []byte("pactoVersion: \"2.0\"\nservice:\n  name: large-api\n  version: 1.0." + strconv.Itoa(i) + "\n"),
			"docs/large-api.json": bigspec.Generate(sh),
		}
		for name, data := range files {
			if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		ref, digest := pushDir(t, reg, dir, fmt.Sprintf("bundles/large-api:1.0.%d", i))
		large, digests = append(large, ref), append(digests, digest)
	}

	// Two namespaces: one small contract the legitimate reader may see,
	// and the large ones the hostile reader may see.
	namespace := func(prefix string) string {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix}}
		if err := admin.Create(t.Context(), ns); err != nil {
			t.Fatal(err)
		}
		return ns.Name
	}
	contract := func(ns, name, ref string) {
		sc := &v1alpha1.ServiceContract{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: v1alpha1.ServiceContractSpec{Bundle: v1alpha1.BundleSource{OCI: ref}, TargetRef: v1alpha1.TargetReference{Kind: "Deployment", Name: name}}}
		if err := admin.Create(t.Context(), sc); err != nil {
			t.Fatal(err)
		}
	}
	legitNS, bigNS := namespace("load-"), namespace("big-")
	contract(legitNS, "catalog", small)
	for i, ref := range large {
		contract(bigNS, fmt.Sprintf("large-%d", i), ref)
	}
	legitToken := serviceAccountToken(t, admin, legitNS, "reader", true)
	hostileToken := serviceAccountToken(t, admin, bigNS, "hostile", true)
	nobodyToken := serviceAccountToken(t, admin, bigNS, "nobody", false)

	run := func(name, bin string) loadFigures {
		addr, probe := freeAddr(t), freeAddr(t)
		_, port, _ := net.SplitHostPort(addr)
		logFile := filepath.Join(t.TempDir(), "operator.log")
		logs, err := os.Create(logFile)
		if err != nil {
			t.Fatal(err)
		}
		defer logs.Close()
		op := exec.Command(bin, "operator", "--kubeconfig", kubeconfig, "--port", port,
			"--metrics-bind-address", "0", "--health-probe-bind-address", probe,
			"--plain-http", "--allowed-registries", reg.Host, "--cache-dir", t.TempDir(), "--log-format", "json")
		op.Env = append(os.Environ(), "HOME="+t.TempDir(), "KUBECONFIG=", "GOMEMLIMIT="+chartGoMemLimit)
		op.Stdout, op.Stderr = logs, logs
		if err := op.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan error, 1)
		go func() { exited <- op.Wait() }()
		defer func() {
			_ = op.Process.Kill() // a no-op once it has exited
		}()
		var discard syncBuffer
		waitHTTP(t, "http://"+probe+"/readyz", exited, &discard)
		watch := watchMemory(op.Process.Pid)
		defer watch.stop()

		endpoint := "http://" + addr + "/mcp"
		legit, hostile, nobody := mcpSession(t, endpoint, legitToken), mcpSession(t, endpoint, hostileToken), mcpSession(t, endpoint, nobodyToken)
		// The fleet holds every revision before the load starts.
		deadline := time.Now().Add(5 * time.Minute)
		for {
			res, err := legit.CallTool(t.Context(), &sdk.CallToolParams{Name: "pacto_fleet_get", Arguments: map[string]any{"service": "catalog"}})
			got := toolJSON(res)
			big, err2 := hostile.CallTool(t.Context(), &sdk.CallToolParams{Name: "pacto_fleet_get", Arguments: map[string]any{"service": "large-api"}})
			all := err == nil && err2 == nil && strings.Contains(got, `"found":true`)
			for _, d := range digests {
				all = all && strings.Contains(toolJSON(big), d)
			}
			if all {
				break
			}
			if time.Now().After(deadline) || processExited(exited) {
				t.Fatalf("%s: the fleet never showed every revision: %v %v %s %s", name, err, err2, got, toolJSON(big))
			}
			time.Sleep(time.Second)
		}
		watch.reset() // the figures are the load's, not the reconciler's start
		idle := watch.rss()

		ctx, cancel := context.WithTimeout(t.Context(), loadPhase)
		defer cancel()
		var hostileOutcomes sync.Map // outcome → *atomic.Int64
		count := func(m *sync.Map, k string) {
			v, _ := m.LoadOrStore(k, new(atomic.Int64))
			v.(*atomic.Int64).Add(1)
		}
		var wg sync.WaitGroup
		for w := range hostileWorkers {
			wg.Go(func() {
				cs := hostile
				if w%4 == 3 { // a quarter of the workers: the identity that may see nothing
					cs = nobody
				}
				for i := 0; ctx.Err() == nil; i++ {
					args := map[string]any{"old_ref": digests[(w+i)%len(digests)], "new_ref": digests[(w+i+1)%len(digests)]}
					res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "pacto_impact", Arguments: args})
					switch {
					case ctx.Err() != nil:
					case err != nil:
						count(&hostileOutcomes, "transport error")
						time.Sleep(100 * time.Millisecond)
					default:
						count(&hostileOutcomes, outcomeCode(res))
					}
				}
			})
		}
		var legitCalls, legitFailures atomic.Int64
		var latMu sync.Mutex
		var latencies []time.Duration
		var failures []string
		wg.Go(func() {
			for i := 0; ctx.Err() == nil; i++ {
				call := &sdk.CallToolParams{Name: "pacto_fleet_get", Arguments: map[string]any{"service": "catalog"}}
				if i%2 == 1 {
					call = &sdk.CallToolParams{Name: "pacto_impact", Arguments: map[string]any{"old_ref": "catalog@1.4.0", "new_ref": "catalog"}}
				}
				start := time.Now()
				res, err := legit.CallTool(ctx, call)
				if ctx.Err() != nil {
					return
				}
				legitCalls.Add(1)
				latMu.Lock()
				latencies = append(latencies, time.Since(start))
				if err != nil || res.IsError {
					legitFailures.Add(1)
					failures = append(failures, fmt.Sprintf("%s: %v %s", call.Name, err, toolJSON(res)))
				}
				latMu.Unlock()
			}
		})
		wg.Wait()
		alive := !processExited(exited)
		f := loadFigures{name: name, idleRSS: idle, peakRSS: watch.stop(), alive: alive,
			legitCalls: legitCalls.Load(), legitFailures: legitFailures.Load(), failures: failures, outcomes: map[string]int64{}}
		hostileOutcomes.Range(func(k, v any) bool {
			f.outcomes[k.(string)] = v.(*atomic.Int64).Load()
			return true
		})
		slices.Sort(latencies)
		if n := len(latencies); n > 0 {
			f.p50, f.p99 = latencies[n/2], latencies[n*99/100]
		}
		if alive && op.Process.Signal(os.Interrupt) == nil {
			select {
			case err := <-exited:
				t.Logf("%s: operator exited: %v", name, err)
			case <-time.After(60 * time.Second): // killed by the deferred Kill
			}
		}
		t.Logf("%s: %s (log: %s)", name, f, logFile)
		return f
	}

	if baseline := os.Getenv("KUBEPACT_LOADTEST_BASELINE"); baseline != "" {
		run("baseline "+baseline, baseline)
	}
	f := run("chart defaults", kubepactBin)
	if !f.alive {
		t.Errorf("the operator exited under the hostile load")
	}
	if f.peakRSS >= chartMemoryLimit {
		t.Errorf("peak RSS %s: at or past the chart's %s limit", mibs(f.peakRSS), mibs(chartMemoryLimit))
	}
	if f.legitCalls == 0 || f.legitFailures > 0 {
		t.Errorf("the legitimate caller: %d calls, %d failed; want all served: %v", f.legitCalls, f.legitFailures, f.failures[:min(len(f.failures), 5)])
	}
	if f.outcomes["ok"] == 0 || f.outcomes["BUSY"] == 0 || f.outcomes["NOT_FOUND"] == 0 {
		t.Errorf("hostile outcomes %v: want some served, some refused BUSY, and NOT_FOUND for the identity that may see nothing", f.outcomes)
	}
}

// loadFigures are one phase's measurements.
type loadFigures struct {
	name                      string
	idleRSS, peakRSS          int64
	alive                     bool
	legitCalls, legitFailures int64
	failures                  []string
	p50, p99                  time.Duration
	outcomes                  map[string]int64
}

func (f loadFigures) String() string {
	return fmt.Sprintf("RSS idle %s, peak (VmHWM) %s; alive %v; legitimate caller: %d calls, %d failed, p50 %s, p99 %s; hostile calls by outcome: %v",
		mibs(f.idleRSS), mibs(f.peakRSS), f.alive, f.legitCalls, f.legitFailures, f.p50.Round(time.Millisecond), f.p99.Round(time.Millisecond), f.outcomes)
}

func mibs(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

// outcomeCode is "ok" or the error code of a tool result.
func outcomeCode(res *sdk.CallToolResult) string {
	if !res.IsError {
		return "ok"
	}
	var out struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	raw, _ := json.Marshal(res.StructuredContent)
	if json.Unmarshal(raw, &out) != nil || out.Error.Code == "" {
		return "error"
	}
	return out.Error.Code
}

func toolJSON(res *sdk.CallToolResult) string {
	if res == nil {
		return ""
	}
	raw, _ := json.Marshal(res.StructuredContent)
	return string(raw)
}

// pushDir pushes the bundle in dir to repo:tag of reg and returns its
// oci:// reference and its digest.
func pushDir(t *testing.T, reg *testregistry.Registry, dir, repoTag string) (string, string) {
	t.Helper()
	b, err := bundle.LoadDir(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	img, err := b.Image()
	if err != nil {
		t.Fatal(err)
	}
	c, err := oci.NewClient(&oci.ClientOptions{PlainHTTP: true, DockerConfigJSON: []byte(`{"auths":{}}`), AllowedRegistries: []string{"127.0.0.1"}})
	if err != nil {
		t.Fatal(err)
	}
	r, err := oci.ParseReference(reg.Host + "/" + repoTag)
	if err != nil {
		t.Fatal(err)
	}
	d, err := c.Push(t.Context(), r, img)
	if err != nil {
		t.Fatal(err)
	}
	return "oci://" + reg.Host + "/" + repoTag, d.String()
}

func mcpSession(t *testing.T, endpoint, token string) *sdk.ClientSession {
	t.Helper()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "loadtest", Version: "v0"}, nil).Connect(t.Context(),
		&sdk.StreamableClientTransport{Endpoint: endpoint, DisableStandaloneSSE: true, MaxRetries: -1,
			HTTPClient: &http.Client{Transport: bearerTransport{token: token}}}, nil)
	if err != nil {
		t.Fatalf("connecting to %s: %v", endpoint, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// memoryWatch samples a process's resident memory.
type memoryWatch struct {
	pid  int
	done chan struct{}
	peak atomic.Int64
	once sync.Once
	last atomic.Int64
}

// watchMemory samples /proc/pid/status every 20ms; its peak is the
// larger of the samples' VmRSS and the kernel's VmHWM.
func watchMemory(pid int) *memoryWatch {
	w := &memoryWatch{pid: pid, done: make(chan struct{})}
	go func() {
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			w.sample()
			select {
			case <-w.done:
				return
			case <-tick.C:
			}
		}
	}()
	return w
}

func (w *memoryWatch) sample() {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", w.pid))
	if err != nil {
		return
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		key, val, ok := strings.Cut(sc.Text(), ":")
		if !ok || (key != "VmRSS" && key != "VmHWM") {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(val), " kB"), 10, 64)
		if err != nil {
			continue
		}
		n := kb << 10
		if key == "VmRSS" {
			w.last.Store(n)
		}
		for p := w.peak.Load(); n > p && !w.peak.CompareAndSwap(p, n); p = w.peak.Load() {
		}
	}
}

// reset restarts the peak: the kernel's (VmHWM, through clear_refs) and
// the samples'.
func (w *memoryWatch) reset() {
	_ = os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", w.pid), []byte("5"), 0)
	w.peak.Store(0)
	w.sample()
}

// rss is the latest VmRSS sample.
func (w *memoryWatch) rss() int64 { w.sample(); return w.last.Load() }

// stop ends the sampling and returns the peak.
func (w *memoryWatch) stop() int64 {
	w.once.Do(func() { w.sample(); close(w.done) })
	return w.peak.Load()
}
