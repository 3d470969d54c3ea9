package sidecar

import (
	"context"
	"fmt"
	"net"
	"os"
	"strconv"
	"time"

	"github.com/go-logr/logr"

	"github.com/kubepact/kubepact/bundle"
	"github.com/kubepact/kubepact/mcp"
)

// Loaders are what Run takes from the command that starts it: the bundle
// loaders and the projection `kubepact mcp` and `check` share, whose
// errors name that command's flags, and the version the server reports.
type Loaders struct {
	// Load loads a bundle directory or an oci:// reference (dialing the
	// registry only for the latter).
	Load func(ctx context.Context, ref string) (*bundle.Bundle, error)
	// LoadFile loads a packed bundle file (bundle.tar.gz).
	LoadFile func(path string) (*bundle.Bundle, error)
	// Project projects a loaded bundle into its tools, calling Upstream.
	Project func(ctx context.Context, b *bundle.Bundle) (*mcp.CapabilityBundle, error)
	// Version is the server's version, as initialize reports it.
	Version string
}

// Stage is where a sidecar failed to start.
type Stage int

// The stages of a start, in order.
const (
	// StageConfig: Config.Validate refused the configuration.
	StageConfig Stage = iota
	// StageHealth: the probes' address (HealthAddr) could not be listened on.
	StageHealth
	// StageLoad: the bundle could not be loaded, projected, or has
	// another digest than BundleDigest.
	StageLoad
	// StageServer: the MCP server refused its options.
	StageServer
	// StageListen: the MCP endpoint's address could not be listened on.
	StageListen
)

// StartError is a failure before the sidecar serves: the process exits
// without having been ready. Addr is the address of a listen failure.
type StartError struct {
	Stage Stage
	Addr  string
	Err   error
}

func (e *StartError) Error() string { return e.Err.Error() }

func (e *StartError) Unwrap() error { return e.Err }

// Run starts the sidecar of cfg and serves until ctx is done: it
// validates cfg, serves the probes (not ready), loads the bundle and
// checks its digest, projects its tools, listens for MCP, turns ready,
// settles memory and the OS threads running Go code, and on ctx's end
// turns unready while Serve drains the calls in progress. A failure
// before ready is a *StartError.
func Run(ctx context.Context, cfg Config, l Loaders) error {
	start := time.Now()
	log := logr.FromContextOrDiscard(ctx).WithName("sidecar")
	if err := cfg.Validate(); err != nil {
		return &StartError{Stage: StageConfig, Err: err}
	}
	health, err := ServeHealth(ctx, cfg.HealthAddr)
	if err != nil {
		return &StartError{Stage: StageHealth, Addr: cfg.HealthAddr, Err: err}
	}
	defer health.Close()

	cb, err := load(ctx, cfg, l)
	if err != nil {
		return &StartError{Stage: StageLoad, Err: err}
	}
	opts := cfg.HTTP
	opts.Transport = mcp.TransportHTTP
	opts.Families = []mcp.Family{mcp.FamilyCapability}
	opts.Capability = cb
	opts.Version = l.Version
	opts.Logger = log.WithName("mcp")
	s, err := mcp.NewServer(ctx, &opts)
	if err != nil {
		return &StartError{Stage: StageServer, Err: err}
	}
	defer s.Close()
	var lc net.ListenConfig
	addr := net.JoinHostPort(opts.Listen, strconv.Itoa(opts.Port))
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return &StartError{Stage: StageListen, Addr: addr, Err: fmt.Errorf("listening for MCP on %s: %w", addr, err)}
	}
	surface, err := s.ToolSurfaceDigest(ctx)
	if err != nil {
		return fmt.Errorf("listing the tools: %w", err)
	}
	health.Ready(ReadyDetails{Bundle: cfg.Bundle, BundleDigest: cb.Bundle.Identity.String(), ToolSurfaceDigest: surface, Tools: len(s.ToolNames())})
	memLimit, gcPct := SettleMemory(cfg.MemoryLimitMiB)
	procs := SettleProcs(cfg.MaxProcs)
	ReleaseStartupPages()
	log.Info("Sidecar ready", "url", "http://"+ln.Addr().String()+mcp.Endpoint, "health", cfg.HealthAddr,
		"service", cb.Capability.Service, "bundle", cb.Bundle.Identity.String(), "tools", s.ToolNames(),
		"withheld", len(cb.Capability.Withheld), "toolSurface", surface, "memoryLimitBytes", memLimit, "gcPercent", gcPct, "maxProcs", procs, "startupMs", time.Since(start).Milliseconds())
	// On SIGTERM the kubelet's probe sees unready at once, while Serve
	// drains the calls in progress.
	stopReady := context.AfterFunc(ctx, health.Unready)
	defer stopReady()
	if err := s.Serve(ctx, ln); err != nil {
		return fmt.Errorf("serving MCP: %w", err)
	}
	log.Info("Stopped")
	return nil
}

// load loads the pod's bundle and projects it, refusing another digest
// than cfg.BundleDigest: a packed file (cfg.Bundle is a regular file and no
// oci:// reference) is checked before it is projected; a directory or
// reference after, as `kubepact mcp` loads and projects one.
func load(ctx context.Context, cfg Config, l Loaders) (*mcp.CapabilityBundle, error) {
	if st, err := os.Stat(cfg.Bundle); err == nil && st.Mode().IsRegular() && !bundle.IsOCIRef(cfg.Bundle) {
		b, err := l.LoadFile(cfg.Bundle)
		if err != nil {
			return nil, err
		}
		if err := CheckDigest(cfg, b); err != nil {
			return nil, err
		}
		return l.Project(ctx, b)
	}
	b, err := l.Load(ctx, cfg.Bundle)
	if err != nil {
		return nil, err
	}
	cb, err := l.Project(ctx, b)
	if err != nil {
		return nil, err
	}
	if err := CheckDigest(cfg, cb.Bundle); err != nil {
		return nil, err
	}
	return cb, nil
}
