package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"runtime/debug"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"github.com/opencontainers/go-digest"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/kubepact/kubepact/bundle"
	"github.com/kubepact/kubepact/bundle/archive"
	"github.com/kubepact/kubepact/bundle/capability"
	"github.com/kubepact/kubepact/bundle/oci"
	"github.com/kubepact/kubepact/mcp"
)

// sidecarOptions is the option group of `kubepact sidecar`; the HTTP
// options are mcp's shared group (mcp.Options.BindHTTPFlags).
type sidecarOptions struct {
	bundle              string
	bundleDigest        string
	allowRemoteUpstream bool
	healthAddr          string
	memoryLimitMiB      int64
	http                *mcp.Options
}

// Sidecar defaults that differ from `kubepact mcp`: a pod's agent traffic
// arrives through kubectl port-forward, so a few hundred sessions and
// connections are plenty, and kept small they fit the memory limit.
const (
	sidecarMaxSessions    = 256
	sidecarMaxConnections = 256
	sidecarDrainTimeout   = 20 * time.Second
)

func newSidecarOptions() *sidecarOptions {
	h := mcp.DefaultOptions()
	h.MaxSessions = sidecarMaxSessions
	h.MaxConnections = sidecarMaxConnections
	h.DrainTimeout = sidecarDrainTimeout
	return &sidecarOptions{http: h}
}

func (o *sidecarOptions) BindFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.bundle, "bundle", "", "the pod's bundle: a mounted directory, a mounted bundle.tar.gz (as \"kubepact pack\" writes it, e.g. from a ConfigMap), or an oci:// reference pinned by digest (oci://REPO@sha256:…)")
	fs.StringVar(&o.bundleDigest, "bundle-digest", "", "refuse to start unless the bundle's digest (its OCI manifest digest, as \"kubepact push\" prints it) is this one (sha256:…); the injection webhook pins a mounted ConfigMap bundle with it")
	fs.BoolVar(&o.allowRemoteUpstream, "allow-remote-upstream", false, "allow an --upstream that is not loopback (the sidecar is meant to reach only its own pod)")
	fs.StringVar(&o.healthAddr, "health-addr", ":8586", "address serving /healthz and /readyz for the kubelet's probes")
	fs.Int64Var(&o.memoryLimitMiB, "memory-limit-mib", 16, "soft limit in MiB on the memory the Go runtime manages (as GOMEMLIMIT, which wins when set; 0: none)")
	o.http.BindHTTPFlags(fs)
}

func newSidecarCommand() *cobra.Command {
	o := newSidecarOptions()
	capOpts := &capabilityOptions{}
	reg := &registryOptions{}
	cmd := &cobra.Command{
		Use:   "sidecar --bundle DIR|FILE.tar.gz|oci://REPO@sha256:… --upstream http://127.0.0.1:PORT",
		Short: "Serve the pod's own bundle as MCP tools that reach only the service beside it",
		Long: `sidecar runs next to a service in its pod. It loads the pod's bundle (a
mounted directory, a mounted bundle.tar.gz as "kubepact pack" writes it,
or an oci:// reference pinned by digest; --bundle-digest refuses any other
content), turns every operation of its OpenAPI interfaces into an MCP tool
calling --upstream (loopback only unless --allow-remote-upstream), adds
pacto_skill and pacto_withheld, and serves them over Streamable HTTP at
http://127.0.0.1:8585/mcp — reach it with kubectl port-forward pod/NAME 8585.

/healthz and /readyz are served on --health-addr; /readyz turns ready once
the bundle is loaded and the tools are registered, and unready on SIGTERM,
when in-flight calls are drained before the process exits.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := refuseInapplicable(cmd.Flags(), sidecarFlagRules(o, capOpts, reg)); err != nil {
				return err
			}
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
	if br, err := oci.ParseBundleRef(o.bundle); err != nil {
		return fmt.Errorf("--bundle %s: %w", o.bundle, err)
	} else if !br.IsLocal() && br.OCI.Digest == "" {
		return fmt.Errorf("--bundle %s: pin an oci:// reference by digest (oci://REPO@sha256:…) so the pod serves the contract it was deployed with", o.bundle)
	}
	if o.bundleDigest != "" {
		if _, err := digest.Parse(o.bundleDigest); err != nil {
			return fmt.Errorf("--bundle-digest %q: want a digest such as sha256:<64 hex digits>: %w", o.bundleDigest, err)
		}
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
	if !capability.IsLoopbackHost(o.http.Listen) && o.http.AuthTokenFile == "" {
		return fmt.Errorf("--listen %s reaches beyond loopback: pass --auth-token-file (kubectl port-forward reaches loopback)", o.http.Listen)
	}
	return nil
}

func runSidecar(ctx context.Context, o *sidecarOptions, capOpts *capabilityOptions, reg *registryOptions) error {
	start := time.Now()
	log := logr.FromContextOrDiscard(ctx).WithName("sidecar")
	if err := o.validate(capOpts.BaseURL); err != nil {
		return &exitError{code: 2, msg: inWords(err)}
	}

	var ready atomic.Bool
	var details atomic.Pointer[readyDetails]
	health, err := serveHealth(ctx, o.healthAddr, &ready, &details)
	if err != nil {
		if msg, ok := listenFailure(err, o.healthAddr, "--health-addr"); ok {
			return &exitError{code: 2, msg: msg}
		}
		return &exitError{code: 2, msg: inWords(err)}
	}
	defer health.Close()

	var client *oci.Client // only an oci:// bundle needs one (and its cache directory)
	if bundle.IsOCIRef(o.bundle) {
		if client, err = reg.client(ctx, o.bundle); err != nil {
			return &exitError{code: 2, msg: inWords(err)}
		}
	}
	cb, err := o.load(ctx, capOpts, client, reg)
	if err != nil {
		return &exitError{code: 2, msg: inWords(err)}
	}
	opts := *o.http
	opts.Transport = mcp.TransportHTTP
	opts.Families = []mcp.Family{mcp.FamilyCapability}
	opts.Capability = cb
	opts.Version = version
	opts.Logger = log.WithName("mcp")
	s, err := mcp.NewServer(ctx, &opts)
	if err != nil {
		return &exitError{code: 2, msg: inWords(fieldsToFlags(err, mcp.FlagNames))}
	}
	defer s.Close()
	var lc net.ListenConfig
	addr := net.JoinHostPort(opts.Listen, strconv.Itoa(opts.Port))
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		if msg, ok := listenFailure(err, addr, "--listen and --port"); ok {
			return &exitError{code: 2, msg: msg}
		}
		return &exitError{code: 2, msg: fmt.Sprintf("listening for MCP on %s: %v", addr, err)}
	}
	surface, err := s.ToolSurfaceDigest(ctx)
	if err != nil {
		return fmt.Errorf("listing the tools: %w", err)
	}
	details.Store(&readyDetails{Bundle: o.bundle, BundleDigest: cb.Bundle.Identity.String(), ToolSurfaceDigest: surface, Tools: len(s.ToolNames())})
	ready.Store(true)
	settleMemory(o.memoryLimitMiB)
	log.Info("Sidecar ready", "url", "http://"+ln.Addr().String()+mcp.Endpoint, "health", o.healthAddr,
		"service", cb.Capability.Service, "bundle", cb.Bundle.Identity.String(), "tools", s.ToolNames(),
		"withheld", len(cb.Capability.Withheld), "toolSurface", surface, "startupMs", time.Since(start).Milliseconds())
	// On SIGTERM the kubelet's probe sees unready at once, while Serve
	// drains the calls in progress.
	stopReady := context.AfterFunc(ctx, func() { ready.Store(false) })
	defer stopReady()
	if err := s.Serve(ctx, ln); err != nil {
		return fmt.Errorf("serving MCP: %w", err)
	}
	log.Info("Stopped")
	return nil
}

// load loads and projects the pod's bundle: a directory or oci://
// reference as every command loads one, or a packed bundle.tar.gz file;
// with --bundle-digest, only the bundle of that digest.
func (o *sidecarOptions) load(ctx context.Context, capOpts *capabilityOptions, client *oci.Client, reg *registryOptions) (*mcp.CapabilityBundle, error) {
	const prefix = "kubepact sidecar"
	if st, err := os.Stat(o.bundle); err == nil && st.Mode().IsRegular() && !bundle.IsOCIRef(o.bundle) {
		b, err := loadLayerFile(o.bundle, &reg.limits)
		if err != nil {
			return nil, err
		}
		if err := o.checkDigest(b); err != nil {
			return nil, err
		}
		return capOpts.project(ctx, b, &reg.limits, os.Stderr, prefix)
	}
	cb, err := capOpts.loadCapability(ctx, o.bundle, client, &reg.limits, os.Stderr, prefix)
	if err != nil {
		return nil, err
	}
	if err := o.checkDigest(cb.Bundle); err != nil {
		return nil, err
	}
	return cb, nil
}

// checkDigest refuses a bundle whose digest is not --bundle-digest.
func (o *sidecarOptions) checkDigest(b *bundle.Bundle) error {
	if o.bundleDigest == "" || string(b.Identity) == o.bundleDigest {
		return nil
	}
	return fmt.Errorf("--bundle %s has digest %s, but --bundle-digest pins %s: the bundle changed since it was pinned (for a ConfigMap bundle: the ConfigMap was edited after the Pod was admitted); refusing to serve another contract than the Pod was admitted with — recreate the Pod to pin the current one", o.bundle, b.Identity, o.bundleDigest)
}

// loadLayerFile loads a packed bundle file (bundle.tar.gz), bounded by the
// bundle limits before it is read.
func loadLayerFile(path string, limits *limitOptions) (*bundle.Bundle, error) {
	lim, err := limits.limits()
	if err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("--bundle %s: %w", path, err)
	}
	defer f.Close()
	bound := lim.WithDefaults().MaxTotalBytes
	raw, err := io.ReadAll(io.LimitReader(f, bound+1))
	if err != nil {
		return nil, fmt.Errorf("--bundle %s: %w", path, err)
	}
	if int64(len(raw)) > bound {
		return nil, fmt.Errorf("--bundle %s: the file is larger than the %d bytes a bundle may hold in all", path, bound)
	}
	b, err := bundle.LoadLayer(raw, &bundle.LoadOptions{Limits: lim})
	if ae := (*archive.Error)(nil); errors.As(err, &ae) && errors.Is(ae.Kind, archive.ErrFormat) {
		return nil, fmt.Errorf("--bundle %s is a file, but not a packed bundle (the gzip'd tar \"kubepact pack\" writes): give a packed bundle, or the bundle's directory", path)
	}
	if err != nil {
		return nil, fmt.Errorf("--bundle %s: the packed bundle cannot be served: %w", path, explainLimit(err))
	}
	// A packed file is fixed content, as a pulled bundle is: skills are
	// read from it, not from a directory.
	b.Source = bundle.Source{Ref: path}
	return b, nil
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

// readyDetails is what /readyz?verbose reports once ready: which bundle
// the sidecar serves and a digest of the tool surface it offers, so that a
// Pod still serving an old contract after a tag moved can be told apart.
type readyDetails struct {
	Bundle            string `json:"bundle"`
	BundleDigest      string `json:"bundleDigest"`
	ToolSurfaceDigest string `json:"toolSurfaceDigest"`
	Tools             int    `json:"tools"`
}

// serveHealth serves /healthz (the process is up) and /readyz (the tools
// are registered and the endpoint accepts calls; with ?verbose, the
// readyDetails as JSON).
func serveHealth(ctx context.Context, addr string, ready *atomic.Bool, details *atomic.Pointer[readyDetails]) (*http.Server, error) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		if !ready.Load() {
			http.Error(w, "not ready", http.StatusServiceUnavailable)
			return
		}
		if d := details.Load(); d != nil && r.URL.Query().Has("verbose") {
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(d)
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
