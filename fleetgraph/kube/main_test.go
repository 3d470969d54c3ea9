package kube_test

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/kubepact/kubepact/api/v1alpha1"
	"github.com/kubepact/kubepact/fleetgraph"
	"github.com/kubepact/kubepact/fleetgraph/kube"
	"github.com/kubepact/kubepact/mcp"
	"github.com/kubepact/kubepact/test/kcm"
)

// The package's control plane: one real kube-apiserver and etcd, with the
// ServiceContract CRD and a Pacto CRD installed.
var (
	env        *envtest.Environment
	adminCfg   *rest.Config
	admin      client.Client
	scheme     = runtime.NewScheme()
	skipReason string
)

func TestMain(m *testing.M) { os.Exit(runMain(m)) }

// benchmarking reports whether -test.bench asks for benchmarks.
func benchmarking() bool {
	f := flag.Lookup("test.bench")
	return f != nil && f.Value.String() != ""
}

func runMain(m *testing.M) int {
	flag.Parse()
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		skipReason = "KUBEBUILDER_ASSETS is not set: run `make test`, or `make envtest-assets` and KUBEBUILDER_ASSETS=bin/k8s/<version>"
		return m.Run()
	}
	if os.Getenv("KUBEBUILDER_CONTROLPLANE_START_TIMEOUT") == "" {
		_ = os.Setenv("KUBEBUILDER_CONTROLPLANE_START_TIMEOUT", "60s")
	}
	ctrl.SetLogger(zap.New(zap.WriteTo(io.Discard)))
	_ = clientgoscheme.AddToScheme(scheme)
	_ = v1alpha1.AddToScheme(scheme)
	// A certificate directory of our own survives an API server restart
	// (TestAPIServerRestart), so clients keep trusting the restarted one.
	certDir, err := os.MkdirTemp("", "kubepact-kube-apiserver-")
	if err != nil {
		fmt.Fprintf(os.Stderr, "cert dir: %v\n", err)
		return 1
	}
	defer os.RemoveAll(certDir)
	env = &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join("..", "..", "config", "crd", "bases"), "testdata"},
		ErrorIfCRDPathMissing: true,
	}
	env.ControlPlane.APIServer = &envtest.APIServer{CertDir: certDir, StopTimeout: 10 * time.Second}
	// Room for the benchmark's 2,000 Services (envtest's default is a /24).
	env.ControlPlane.APIServer.Configure().Set("service-cluster-ip-range", "10.96.0.0/16")
	cfg, err := env.Start()
	if err != nil {
		fmt.Fprintf(os.Stderr, "envtest: starting the control plane: %v\n", err)
		return 1
	}
	defer func() {
		if err := env.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "envtest: stopping the control plane: %v\n", err)
		}
	}()
	adminCfg = cfg
	adminCfg.QPS = -1
	if admin, err = client.New(cfg, client.Options{Scheme: scheme}); err != nil {
		fmt.Fprintf(os.Stderr, "client: %v\n", err)
		return 1
	}
	if !benchmarking() {
		// A real kube-controller-manager beside the API server, as in a
		// cluster: the tests' Deployments become ReplicaSets and Pods,
		// which the feed must not watch (TestFeedWatchesOnlyItsKinds).
		// The benchmark runs without it: its 6,000 Deployments would
		// become as many ReplicaSets and Pods, and the figures would
		// measure the controller manager on 2 cores, not the feed.
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second) //nolint:forbidigo // TestMain has no t.Context
		p, err := kcm.Start(ctx, cfg, nil)
		cancel()
		if err != nil {
			fmt.Fprintf(os.Stderr, "kube-controller-manager: %v\n", err)
			return 1
		}
		defer func() {
			if err := p.Stop(); err != nil {
				fmt.Fprintf(os.Stderr, "kube-controller-manager: %v\n%s", err, p.Logs())
			}
		}()
	}
	return m.Run()
}

func needControlPlane(t testing.TB) {
	t.Helper()
	if skipReason != "" {
		t.Skip(skipReason)
	}
}

// countingConfig is adminCfg with a transport that counts every request
// the feed sends the API server.
func countingConfig(n *atomic.Int64) *rest.Config {
	cfg := rest.CopyConfig(adminCfg)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			n.Add(1)
			return rt.RoundTrip(r)
		})
	})
	return cfg
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// live is one running live fleet: a feed into a Builder, and the MCP
// server's fleet family on that Builder over Streamable HTTP on loopback.
type live struct {
	b    *fleetgraph.Builder
	feed *kube.Feed
	url  string
}

// startLive starts a feed with opts on cfg, the Builder's publisher and
// an MCP server (fleet family only) on the Builder, until the test ends;
// it returns once the feed has listed everything.
func startLive(t *testing.T, cfg *rest.Config, opts *kube.Options) *live {
	t.Helper()
	l, stop, err := startLiveCtx(t.Context(), cfg, opts, 20*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := stop(); err != nil {
			t.Errorf("live fleet stopped with: %v", err)
		}
	})
	return l
}

// startLiveCtx is startLive until ctx is done or stop is called; debounce
// 0 is the Builder's default.
func startLiveCtx(parent context.Context, cfg *rest.Config, opts *kube.Options, debounce time.Duration) (l *live, stop func() error, err error) {
	ctx, cancel := context.WithCancel(parent)
	b := fleetgraph.NewBuilder(&fleetgraph.BuilderOptions{Debounce: debounce})
	feed, err := kube.NewFeed(cfg, b, opts)
	if err != nil {
		cancel()
		return nil, nil, err
	}
	// The tests query as fast as they can from one caller (1,000 fleet
	// calls in a row, say): the rate limits, tested on their own in mcp,
	// are off here.
	s, err := mcp.NewServer(ctx, &mcp.Options{Transport: mcp.TransportHTTP, Families: []mcp.Family{mcp.FamilyFleet},
		Fleet:       mcp.FleetOptions{Enabled: true, Builder: b},
		HTTPOptions: mcp.HTTPOptions{RateLimit: mcp.RateLimitOptions{RequestRate: -1, ToolCallRate: -1}}})
	if err != nil {
		cancel()
		return nil, nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		cancel()
		return nil, nil, err
	}
	done := make(chan error, 3)
	go func() { done <- feed.Start(ctx) }()
	go func() { done <- b.Run(ctx) }()
	go func() { done <- s.Serve(ctx, ln) }()
	stop = func() error {
		cancel()
		var errs []error
		for range 3 {
			errs = append(errs, <-done)
		}
		return errors.Join(errs...)
	}
	wctx, wcancel := context.WithTimeout(ctx, 5*time.Minute)
	defer wcancel()
	if err := feed.WaitSynced(wctx); err != nil {
		_ = stop()
		return nil, nil, err
	}
	return &live{b: b, feed: feed, url: "http://" + ln.Addr().String() + mcp.Endpoint}, stop, nil
}

// session opens an MCP session over HTTP (protocol 2025-11-25, the
// session era): it pins the snapshot current at its first fleet call.
func (l *live) session(t *testing.T) *sdk.ClientSession {
	t.Helper()
	c := sdk.NewClient(&sdk.Implementation{Name: "kube-test", Version: "1"}, nil)
	cs, err := c.Connect(t.Context(), &sdk.StreamableClientTransport{Endpoint: l.url, DisableStandaloneSSE: true, MaxRetries: -1},
		&sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// call calls a fleet tool and returns its structured answer.
func call(t *testing.T, cs *sdk.ClientSession, tool string, args map[string]any) map[string]any {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	raw, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	if res.IsError {
		t.Fatalf("%s(%v) failed: %s", tool, args, raw)
	}
	return out
}

// fresh answers a fleet call on the current snapshot: a new session each
// time, since a session keeps the snapshot it started with.
func (l *live) fresh(t *testing.T, tool string, args map[string]any) map[string]any {
	t.Helper()
	cs := l.session(t)
	defer cs.Close()
	return call(t, cs, tool, args)
}

// eventually polls cond, on fresh sessions, until it holds; the deadline
// only stops a broken feed from hanging the test.
func (l *live) eventually(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	last := ""
	for {
		ok, got := cond()
		if ok {
			return
		}
		if got != last {
			last = got
		}
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s; last answer: %s", what, last)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// jsonOf renders v for failure messages and substring checks.
func jsonOf(v any) string {
	raw, _ := json.Marshal(v)
	return string(raw)
}
