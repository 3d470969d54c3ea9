package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/kubepact/kubepact/bundle"
	"github.com/kubepact/kubepact/bundle/capability"
	"github.com/kubepact/kubepact/bundle/oci"
	"github.com/kubepact/kubepact/mcp"
)

// sidecarOptions is the option group of `kubepact sidecar`.
type sidecarOptions struct {
	bundle              string
	allowRemoteUpstream bool
	listen              string
	port                int
	healthAddr          string
	authTokenFile       string
	sessionTimeout      time.Duration
	drainTimeout        time.Duration
	memoryLimitMiB      int64
}

func (o *sidecarOptions) BindFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.bundle, "bundle", "", "the pod's bundle: a mounted directory, or an oci:// reference pinned by digest (oci://REPO@sha256:…)")
	fs.BoolVar(&o.allowRemoteUpstream, "allow-remote-upstream", false, "allow an --upstream that is not loopback (the sidecar is meant to reach only its own pod)")
	fs.StringVar(&o.listen, "listen", mcp.DefaultListen, "address the MCP endpoint binds to (reach it with kubectl port-forward)")
	fs.IntVar(&o.port, "port", mcp.DefaultPort, "port of the MCP endpoint (/mcp)")
	fs.StringVar(&o.healthAddr, "health-addr", ":8586", "address serving /healthz and /readyz for the kubelet's probes")
	fs.StringVar(&o.authTokenFile, "auth-token-file", "", "file holding the bearer token every MCP request must carry (default: none; the endpoint is loopback only)")
	fs.DurationVar(&o.sessionTimeout, "session-timeout", mcp.DefaultSessionTimeout, "close MCP sessions idle this long")
	fs.DurationVar(&o.drainTimeout, "drain-timeout", 20*time.Second, "on SIGTERM, how long in-flight calls may take to finish")
	fs.Int64Var(&o.memoryLimitMiB, "memory-limit-mib", 16, "soft limit in MiB on the memory the Go runtime manages (as GOMEMLIMIT, which wins when set; 0: none)")
}

func newSidecarCommand() *cobra.Command {
	o := &sidecarOptions{}
	capOpts := &capabilityOptions{}
	reg := &registryOptions{}
	cmd := &cobra.Command{
		Use:   "sidecar --bundle DIR|oci://REPO@sha256:… --upstream http://127.0.0.1:PORT",
		Short: "Serve the pod's own bundle as MCP tools that reach only the service beside it",
		Long: `sidecar runs next to a service in its pod. It loads the pod's bundle (a
mounted directory, or an oci:// reference pinned by digest), turns every
operation of its OpenAPI interfaces into an MCP tool calling --upstream
(loopback only unless --allow-remote-upstream), adds pacto_skill and
pacto_withheld, and serves them over Streamable HTTP at
http://127.0.0.1:8585/mcp — reach it with kubectl port-forward pod/NAME 8585.

/healthz and /readyz are served on --health-addr; /readyz turns ready once
the bundle is loaded and the tools are registered, and unready on SIGTERM,
when in-flight calls are drained before the process exits.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runSidecar(cmd.Context(), o, capOpts, reg)
		},
	}
	o.BindFlags(cmd.Flags())
	capOpts.bindFlags(cmd.Flags(), "upstream", "base URL of the service in this pod, e.g. http://127.0.0.1:8080 (required)")
	reg.BindFlags(cmd.Flags())
	return cmd
}

// validate checks the sidecar's own rules before anything is loaded.
func (o *sidecarOptions) validate(upstream string) error {
	if o.bundle == "" {
		return errors.New("--bundle is required: a mounted bundle directory or an oci:// reference pinned by digest")
	}
	if bundle.IsOCIRef(o.bundle) && !strings.Contains(o.bundle, "@sha256:") {
		return fmt.Errorf("--bundle %s: pin an oci:// reference by digest (oci://REPO@sha256:…) so the pod serves the contract it was deployed with", o.bundle)
	}
	if upstream == "" {
		return errors.New("--upstream is required, e.g. http://127.0.0.1:8080")
	}
	u, err := url.Parse(upstream)
	if err != nil || u.Host == "" {
		return fmt.Errorf("--upstream %q: want an absolute http URL such as http://127.0.0.1:8080", upstream)
	}
	if !capability.IsLoopbackHost(u.Hostname()) && !o.allowRemoteUpstream {
		return fmt.Errorf("--upstream %s is not loopback: the sidecar reaches only its own pod unless --allow-remote-upstream is given", upstream)
	}
	if !capability.IsLoopbackHost(o.listen) && o.authTokenFile == "" {
		return fmt.Errorf("--listen %s reaches beyond loopback: pass --auth-token-file (kubectl port-forward reaches loopback)", o.listen)
	}
	return nil
}

func runSidecar(ctx context.Context, o *sidecarOptions, capOpts *capabilityOptions, reg *registryOptions) error {
	start := time.Now()
	log := logr.FromContextOrDiscard(ctx).WithName("sidecar")
	if err := o.validate(capOpts.BaseURL); err != nil {
		return &exitError{code: 2, msg: err.Error()}
	}

	var ready atomic.Bool
	health, err := serveHealth(ctx, o.healthAddr, &ready)
	if err != nil {
		return &exitError{code: 2, msg: err.Error()}
	}
	defer health.Close()

	var client *oci.Client // only an oci:// bundle needs one (and its cache directory)
	if bundle.IsOCIRef(o.bundle) {
		if client, err = reg.client(); err != nil {
			return &exitError{code: 2, msg: err.Error()}
		}
	}
	cb, err := capOpts.loadCapability(ctx, o.bundle, client, os.Stderr, "kubepact sidecar")
	if err != nil {
		return &exitError{code: 2, msg: err.Error()}
	}
	s, err := mcp.New(&mcp.Options{
		Transport:      mcp.TransportHTTP,
		Listen:         o.listen,
		Port:           o.port,
		Families:       []mcp.Family{mcp.FamilyCapability},
		Capability:     cb,
		AuthTokenFile:  o.authTokenFile,
		SessionTimeout: o.sessionTimeout,
		Version:        version,
		Logger:         log.WithName("mcp"),
	})
	if err != nil {
		return &exitError{code: 2, msg: fieldsToFlags(err, mcp.FlagNames).Error()}
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", net.JoinHostPort(o.listen, strconv.Itoa(o.port)))
	if err != nil {
		return &exitError{code: 2, msg: fmt.Sprintf("listening for MCP: %v", err)}
	}
	var inflight atomic.Int64
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPost {
				inflight.Add(1)
				defer inflight.Add(-1)
			}
			s.Handler().ServeHTTP(w, r)
		}),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	ready.Store(true)
	settleMemory(o.memoryLimitMiB)
	log.Info("Sidecar ready", "url", "http://"+ln.Addr().String()+mcp.Endpoint, "health", o.healthAddr,
		"service", cb.Capability.Service, "bundle", cb.Bundle.Identity.String(), "tools", s.ToolNames(),
		"withheld", len(cb.Capability.Withheld), "startupMs", time.Since(start).Milliseconds())

	select {
	case err := <-served:
		return fmt.Errorf("serving MCP: %w", err)
	case <-ctx.Done():
	}
	ready.Store(false)
	log.Info("Draining", "inflight", inflight.Load(), "timeout", o.drainTimeout)
	drainCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), o.drainTimeout)
	defer cancel()
	shut := make(chan error, 1)
	go func() { shut <- srv.Shutdown(drainCtx) }() // stops accepting; waits for requests in progress
	for inflight.Load() > 0 && drainCtx.Err() == nil {
		time.Sleep(10 * time.Millisecond)
	}
	for ss := range s.SDK().Sessions() {
		_ = ss.Close() // ends idle SSE streams, which Shutdown would otherwise wait for
	}
	if err := <-shut; err != nil {
		_ = srv.Close()
		log.Info("Drain cut short", "reason", err.Error(), "inflight", inflight.Load())
	}
	log.Info("Stopped")
	return nil
}

// settleMemory applies the soft memory limit and returns what loading the
// bundle left behind to the OS. The sidecar's live heap is about a MiB;
// most of its resident memory is the binary's own pages, start-up garbage
// the runtime would otherwise keep mapped, and the heap headroom a burst
// of calls grows. The limit makes the runtime collect sooner, and give
// memory back, as it nears the limit instead of growing the heap
// unchecked.
func settleMemory(limitMiB int64) {
	if _, set := os.LookupEnv("GOMEMLIMIT"); !set && limitMiB > 0 {
		debug.SetMemoryLimit(limitMiB << 20)
	}
	debug.FreeOSMemory()
}

// serveHealth serves /healthz (the process is up) and /readyz (the tools
// are registered and the endpoint accepts calls).
func serveHealth(ctx context.Context, addr string, ready *atomic.Bool) (*http.Server, error) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		if !ready.Load() {
			http.Error(w, "not ready", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ok\n"))
	})
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--health-addr: %w", err)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	return srv, nil
}
