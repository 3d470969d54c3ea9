package main

import (
	"bufio"
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kubepact/kubepact/test/demoservice"
	"github.com/kubepact/kubepact/test/freeport"
)

// sidecarProc is a running `kubepact sidecar`.
type sidecarProc struct {
	cmd    *exec.Cmd
	mcpURL string
	health string
	stderr *syncBuffer
	ready  time.Duration // from process start to the first ready /readyz
	exited chan error
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startSidecar starts the built binary beside upstream and waits until
// /readyz answers 200.
func startSidecar(t testing.TB, upstream string, extra ...string) *sidecarProc {
	t.Helper()
	return startSidecarBin(t, kubepactBin, upstream, extra...)
}

// startSidecarBin is startSidecar with another build of kubepact (the slim
// sidecar build, -tags sidecaronly).
func startSidecarBin(t testing.TB, bin, upstream string, extra ...string) *sidecarProc {
	t.Helper()
	port, hport := freeport.Port(t), freeport.Port(t)
	bundleDir := filepath.Join(repoRootTB(t), "examples", "bundles", "catalog")
	args := append([]string{"sidecar", "--bundle", bundleDir, "--upstream", upstream,
		"--port", strconv.Itoa(port), "--health-addr", "127.0.0.1:" + strconv.Itoa(hport)}, extra...)
	return launchSidecarBin(t, bin, args, port, hport)
}

// launchSidecar starts the built binary with args — a sidecar serving MCP
// on 127.0.0.1:mcpPort and its probes on 127.0.0.1:healthPort — and waits
// until /readyz answers 200.
func launchSidecar(t testing.TB, args []string, mcpPort, healthPort int) *sidecarProc {
	t.Helper()
	return launchSidecarBin(t, kubepactBin, args, mcpPort, healthPort)
}

// launchSidecarBin is launchSidecar with another build of kubepact.
func launchSidecarBin(t testing.TB, bin string, args []string, mcpPort, healthPort int) *sidecarProc {
	t.Helper()
	p := &sidecarProc{
		mcpURL: fmt.Sprintf("http://127.0.0.1:%d/mcp", mcpPort),
		health: fmt.Sprintf("http://127.0.0.1:%d", healthPort),
	}
	p.launchBin(t, bin, args, "sidecar ready (/readyz 200)", func() bool {
		resp, err := http.Get(p.health + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	return p
}

// launch starts the built binary with args, kills it when the test ends,
// and waits until ready holds, recording how long that took; it fails the
// test if the process exits first or is not ready within 30 s.
func (p *sidecarProc) launch(t testing.TB, args []string, what string, ready func() bool) {
	t.Helper()
	p.launchBin(t, kubepactBin, args, what, ready)
}

// launchBin is launch with another binary (the floor server of
// TestSidecarVsFloor).
func (p *sidecarProc) launchBin(t testing.TB, bin string, args []string, what string, ready func() bool) {
	t.Helper()
	p.cmd = exec.Command(bin, args...)
	p.stderr = &syncBuffer{}
	p.exited = make(chan error, 1)
	p.cmd.Stderr = p.stderr
	p.cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "KUBEPACT_CACHE_DIR="+t.TempDir())
	start := time.Now()
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.exited <- p.cmd.Wait() }()
	t.Cleanup(func() {
		_ = p.cmd.Process.Kill()
		err := <-p.exited
		p.exited <- err // a later reader still sees how it ended
	})
	for !ready() {
		select {
		case err := <-p.exited:
			t.Fatalf("kubepact exited before %s (%v):\n%s", what, err, p.stderr)
		case <-time.After(2 * time.Millisecond):
		}
		if time.Since(start) > 30*time.Second {
			t.Fatalf("kubepact: no %s after 30s:\n%s", what, p.stderr)
		}
	}
	p.ready = time.Since(start)
}

func repoRootTB(t testing.TB) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(wd, "..", "..")
}

func (p *sidecarProc) connect(t testing.TB) *sdk.ClientSession {
	t.Helper()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "sidecar-test", Version: "v0"}, nil).Connect(t.Context(),
		&sdk.StreamableClientTransport{Endpoint: p.mcpURL, DisableStandaloneSSE: true, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatalf("connecting to the sidecar: %v\n%s", err, p.stderr)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// vmRSS reads a process's resident set size in bytes from /proc.
func vmRSS(t testing.TB, pid int) int64 { return procStatus(t, pid, "VmRSS:") }

// procStatus reads one kB figure of /proc/PID/status, in bytes.
func procStatus(t testing.TB, pid int, field string) int64 {
	t.Helper()
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), field); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb << 10
		}
	}
	t.Fatalf("no %s line", field)
	return 0
}

// slowUpstream is the demo service, with GET /products/p-0002 held for
// 700 ms so a call is in flight when SIGTERM arrives.
func slowUpstream(t testing.TB) string {
	t.Helper()
	demo := demoservice.New(nil)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/products/p-0002" {
			time.Sleep(700 * time.Millisecond)
		}
		demo.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestSidecarProcess(t *testing.T) {
	p := startSidecar(t, slowUpstream(t))
	t.Logf("start to ready: %v", p.ready)
	cs := p.connect(t)

	var names []string
	for tl, err := range cs.Tools(t.Context(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, tl.Name)
	}
	slices.Sort(names)
	if want := []string{"getHealth", "getProduct", "listProducts", "pacto_server_info", "pacto_skill", "pacto_withheld"}; !slices.Equal(names, want) {
		t.Errorf("tools = %v, want %v", names, want)
	}
	if !strings.Contains(p.stderr.String(), `kubepact sidecar: skipped 4 mutating operation(s) in interface "http" (--allow-writes exposes them)`) {
		t.Errorf("stderr lacks the withheld count:\n%s", p.stderr)
	}
	res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "listProducts", Arguments: map[string]any{"limit": 2}})
	if err != nil || res.IsError {
		t.Fatalf("listProducts: %v %+v", err, res)
	}
	// Ready (the line is written before the first call is served), it
	// runs Go code on one OS thread at a time (--max-procs' default),
	// unless the environment sets GOMAXPROCS.
	if _, set := os.LookupEnv("GOMAXPROCS"); !set && !strings.Contains(p.stderr.String(), `"maxProcs": 1,`) {
		t.Errorf("the ready line does not say maxProcs 1:\n%s", p.stderr)
	}

	// SIGTERM drains: the call in flight completes, then the process exits 0.
	type outcome struct {
		res *sdk.CallToolResult
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "getProduct", Arguments: map[string]any{"productId": "p-0002"}})
		done <- outcome{res, err}
	}()
	time.Sleep(200 * time.Millisecond)
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	o := <-done
	if o.err != nil || o.res.IsError {
		t.Fatalf("call in flight during SIGTERM: %v %+v\n%s", o.err, o.res, p.stderr)
	}
	select {
	case err := <-p.exited:
		p.exited <- err
		if err != nil {
			t.Errorf("sidecar exit after SIGTERM: %v\n%s", err, p.stderr)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("sidecar did not exit after SIGTERM:\n%s", p.stderr)
	}
}

func TestSidecarRefusals(t *testing.T) {
	catalog := filepath.Join(repoRoot(t), "examples", "bundles", "catalog")
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{name: "remote upstream", args: []string{"--bundle", catalog, "--upstream", "http://10.1.2.3:8080"}, want: "is not loopback"},
		// Only the name localhost itself is looked up in /etc/hosts first; any
		// other name goes to DNS (and its search domains), which may answer
		// with any address.
		{name: "subdomain of localhost", args: []string{"--bundle", catalog, "--upstream", "http://api.localhost:8080"}, want: "is not loopback"},
		{name: "localhost with a trailing dot", args: []string{"--bundle", catalog, "--upstream", "http://localhost.:8080"}, want: "is not loopback"},
		{name: "oci ref without digest", args: []string{"--bundle", "oci://registry.example.com/catalog:1.4.0", "--upstream", "http://127.0.0.1:8080"}, want: "pin an oci:// reference by digest"},
		{name: "no bundle", args: []string{"--upstream", "http://127.0.0.1:8080"}, want: "--bundle is required"},
		{name: "no upstream", args: []string{"--bundle", catalog}, want: "--upstream is required"},
		{name: "negative max procs", args: []string{"--bundle", catalog, "--upstream", "http://127.0.0.1:8080", "--max-procs", "-1"}, want: "--max-procs -1: want how many OS threads"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, stderr, code := runKubepact(t, append([]string{"sidecar", "--health-addr", "127.0.0.1:0"}, tc.args...)...)
			if code != 2 || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", code, stderr, tc.want)
			}
		})
	}
}

// TestSidecarLinksNoKubernetes checks that nothing the sidecar's code path
// imports pulls in a Kubernetes package.
func TestSidecarLinksNoKubernetes(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps",
		"github.com/kubepact/kubepact/mcp", "github.com/kubepact/kubepact/internal/openapitools",
		"github.com/kubepact/kubepact/bundle", "github.com/kubepact/kubepact/bundle/oci",
		"github.com/kubepact/kubepact/internal/sidecar").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if strings.HasPrefix(pkg, "k8s.io/") || strings.HasPrefix(pkg, "sigs.k8s.io/") {
			t.Errorf("the sidecar's code path imports %s", pkg)
		}
	}
}

// BenchmarkSidecarProcess measures the built sidecar as a process:
// start-to-ready, resident memory idle and under load (VmRSS), and the
// latency of MCP tool calls through it over loopback HTTP.
func BenchmarkSidecarProcess(b *testing.B) {
	demo := httptest.NewServer(demoservice.New(nil))
	b.Cleanup(demo.Close)
	var readies []time.Duration
	var p *sidecarProc
	for range 5 {
		p = startSidecar(b, demo.URL)
		readies = append(readies, p.ready)
		if len(readies) < 5 {
			_ = p.cmd.Process.Kill()
		}
	}
	slices.Sort(readies)
	time.Sleep(300 * time.Millisecond)
	idle := vmRSS(b, p.cmd.Process.Pid)
	cs := p.connect(b)
	var peak int64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
				peak = max(peak, vmRSS(b, p.cmd.Process.Pid))
			}
		}
	}()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			res, err := cs.CallTool(b.Context(), &sdk.CallToolParams{Name: "getProduct", Arguments: map[string]any{"productId": "p-0001"}})
			if err != nil || res.IsError {
				b.Errorf("getProduct: %v", err)
				return
			}
		}
	})
	b.StopTimer()
	close(stop)
	<-sampled
	peak = max(peak, vmRSS(b, p.cmd.Process.Pid))
	b.ReportMetric(float64(readies[len(readies)/2].Microseconds())/1000, "ready-ms(median-of-5)")
	b.ReportMetric(float64(idle)/(1<<20), "rss-idle-MiB")
	b.ReportMetric(float64(peak)/(1<<20), "rss-load-MiB")
}
