package sidecar

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"time"

	"github.com/opencontainers/go-digest"

	"github.com/kubepact/kubepact/bundle/archive"
	"github.com/kubepact/kubepact/bundle/oci"
	"github.com/kubepact/kubepact/internal/netx"
	"github.com/kubepact/kubepact/internal/openapitools"
	"github.com/kubepact/kubepact/mcp"
)

// Defaults of the sidecar that differ from `kubepact mcp`: a pod's agent
// traffic arrives through kubectl port-forward, so a few hundred sessions
// and connections are plenty, and kept small they fit the memory limit.
const (
	DefaultMaxSessions    = 256
	DefaultMaxConnections = 256
	DefaultDrainTimeout   = 20 * time.Second
	// DefaultHealthAddr serves /healthz and /readyz.
	DefaultHealthAddr = ":8586"
	// DefaultMemoryLimitMiB is the soft limit of the Go runtime's memory,
	// chosen by TestSidecarVsFloor (KUBEPACT_FLOOR_MEMLIMITS): at 16 clients
	// 16 MiB gave a third of 32 MiB's throughput at four times its CPU
	// per call; 32 MiB did as well as 64 MiB or none, idle RSS unchanged.
	DefaultMemoryLimitMiB = 32
	// DefaultMaxProcs is how many OS threads run Go code at once
	// (GOMAXPROCS) once the sidecar is ready, chosen by TestSidecarVsFloor
	// (KUBEPACT_FLOOR_VARIANTS). A call passes between goroutines several
	// times (the connection's, the MCP session's, the upstream call's);
	// with a second P idle each hand-off wakes another OS thread, which
	// then spins looking for work: on 2 CPUs at 1 client that cost about
	// 100 µs of p50 and a fifth of the CPU per call, while at 16 clients
	// the slim build on one P still served 1.1–1.5× the calls per second
	// of the go-sdk floor on two. The sidecar serves one pod's agents;
	// start-up (loading and projecting the bundle) still runs on every
	// CPU.
	DefaultMaxProcs = 1
	// DefaultGCPercent is the most the sidecar raises GOGC to once ready,
	// while its live heap is small (gcPercent): with one P the collector's
	// work is the calls' own, and a catalog-sized bundle keeps about
	// 2 MiB live, so Go's default 100 collects every 2 MiB of garbage,
	// every few dozen calls. Chosen by TestSidecarVsFloor
	// (KUBEPACT_FLOOR_VARIANTS, one P): at 16 clients 200 served 1.19× the
	// floor's calls per second where 100 served 1.02× (one run, load 2–10),
	// for 1 MiB more peak RSS; 400 gained no p50 for 6–10 MiB more.
	DefaultGCPercent = 200
)

// Config is everything a sidecar runs with: where its bundle is and which
// digest it must have, the service it calls, its endpoints, the shape of
// its tools, its registry and the bounds of the bundle. The injection
// webhook writes a Config into a container (Container, Args), the runtime
// starts from one, and the operator computes the tool surface of one
// (ToolSurface): the same value in all three places.
type Config struct {
	// Bundle is the pod's bundle: a mounted directory, a mounted packed
	// bundle file, or an oci:// reference pinned by digest (--bundle).
	Bundle string
	// BundleDigest, when set, is the only digest the sidecar serves
	// (--bundle-digest).
	BundleDigest string
	// Upstream is the base URL of the service beside the sidecar
	// (--upstream); loopback unless AllowRemoteUpstream.
	Upstream            string
	AllowRemoteUpstream bool
	// GRPCTarget is the gRPC service beside the sidecar, as host:port
	// (--grpc-target), for a bundle with grpc interfaces; loopback only.
	// Empty: the gRPC tools are listed, and a call says no target is set.
	GRPCTarget string
	// HealthAddr serves /healthz and /readyz (--health-addr).
	HealthAddr string
	// MemoryLimitMiB is the soft limit of the Go runtime's memory
	// (--memory-limit-mib; GOMEMLIMIT wins; 0: none).
	MemoryLimitMiB int64
	// MaxProcs is how many OS threads run Go code at once once ready
	// (--max-procs, as GOMAXPROCS, which wins when set; 0: the Go
	// runtime's default, the CPUs or the container's CPU limit).
	MaxProcs int
	// HTTP is the MCP endpoint: mcp's HTTP option group (--listen, --port,
	// --auth-token-file, sessions, connections, timeouts).
	HTTP mcp.Options
	// Tools shape the generated tools (the exposure flags); Tools.BaseURL
	// is not read: Upstream is the base URL.
	Tools openapitools.Options
	// ToolsLock is a lock file the generated tools are held to
	// (--tools-lock), read inside the sidecar's container.
	ToolsLock string
	// Registry is the registry client of an oci:// bundle.
	Registry oci.Options
	// Limits bound the bundle, pulled or mounted.
	Limits archive.Limits
}

// DefaultConfig is the Config of a sidecar command line that sets nothing:
// every flag's default.
func DefaultConfig() Config {
	h := mcp.DefaultOptions()
	h.MaxSessions = DefaultMaxSessions
	h.MaxConnections = DefaultMaxConnections
	h.DrainTimeout = DefaultDrainTimeout
	return Config{
		HealthAddr:     DefaultHealthAddr,
		MemoryLimitMiB: DefaultMemoryLimitMiB,
		MaxProcs:       DefaultMaxProcs,
		HTTP:           *h,
		Tools: openapitools.Options{ConfirmWrites: openapitools.ConfirmDelete, Timeout: openapitools.DefaultTimeout, MaxResponseBytes: openapitools.DefaultMaxResponseBytes,
			MaxNameLength: openapitools.DefaultNameCap, ToolMode: openapitools.ToolModeAll},
		Registry: oci.Options{CacheDir: oci.DefaultCacheDir(), Timeout: oci.DefaultTimeout},
		Limits:   archive.DefaultLimits,
	}
}

// Args is the sidecar's command line for c: the bundle, its digest, the
// upstream and the endpoints always, then what differs from DefaultConfig
// among the registry, tool, bound and listener settings (the HTTP group's
// session, connection and timeout bounds are not written: the webhook
// never sets them).
func (c Config) Args() []string {
	d := DefaultConfig()
	args := []string{"sidecar", "--bundle=" + c.Bundle}
	if c.BundleDigest != "" {
		args = append(args, "--bundle-digest="+c.BundleDigest)
	}
	args = append(args,
		"--upstream="+c.Upstream,
		"--port="+strconv.Itoa(c.HTTP.Port),
		"--health-addr="+c.HealthAddr,
	)
	flag := func(set bool, name string) {
		if set {
			args = append(args, "--"+name)
		}
	}
	value := func(set bool, name, v string) {
		if set {
			args = append(args, "--"+name+"="+v)
		}
	}
	each := func(name string, vs []string) {
		for _, v := range vs {
			args = append(args, "--"+name+"="+v)
		}
	}
	// The root filesystem is read-only and a pinned digest is pulled once
	// per container start: the webhook's sidecar has no content cache.
	flag(c.Registry.NoCache, "no-cache")
	flag(c.Registry.PlainHTTP, "plain-http")
	value(c.Registry.SecretFile != "", "registry-secret-file", c.Registry.SecretFile)
	value(c.Registry.ConfigPath != "", "registry-config", c.Registry.ConfigPath)
	value(c.Registry.CacheDir != d.Registry.CacheDir, "cache-dir", c.Registry.CacheDir)
	each("allowed-registries", c.Registry.AllowedRegistries)
	value(c.Registry.Timeout != d.Registry.Timeout, "registry-timeout", c.Registry.Timeout.String())
	flag(c.AllowRemoteUpstream, "allow-remote-upstream")
	value(c.GRPCTarget != "", "grpc-target", c.GRPCTarget)
	value(c.MemoryLimitMiB != d.MemoryLimitMiB, "memory-limit-mib", strconv.FormatInt(c.MemoryLimitMiB, 10))
	value(c.MaxProcs != d.MaxProcs, "max-procs", strconv.Itoa(c.MaxProcs))
	value(c.HTTP.Listen != d.HTTP.Listen, "listen", c.HTTP.Listen)
	value(c.HTTP.AuthTokenFile != "", "auth-token-file", c.HTTP.AuthTokenFile)
	each("auth", c.Tools.Auth)
	each("auth-file", c.Tools.AuthFiles)
	flag(c.Tools.AllowWrites, "allow-writes")
	each("allow-operations", c.Tools.AllowOperations)
	each("deny-operations", c.Tools.DenyOperations)
	each("include-tags", c.Tools.IncludeTags)
	each("exclude-tags", c.Tools.ExcludeTags)
	each("include-paths", c.Tools.IncludePaths)
	each("exclude-paths", c.Tools.ExcludePaths)
	value(c.Tools.DescriptionsFile != "", "descriptions-file", c.Tools.DescriptionsFile)
	flag(c.Tools.AllowCredentialsInQuery, "allow-credentials-in-query")
	value(c.Tools.Timeout != d.Tools.Timeout, "call-timeout", c.Tools.Timeout.String())
	value(c.Tools.MaxResponseBytes != d.Tools.MaxResponseBytes, "max-response-bytes", strconv.FormatInt(c.Tools.MaxResponseBytes, 10))
	value(c.Tools.ConfirmWrites != d.Tools.ConfirmWrites, "confirm-writes", c.Tools.ConfirmWrites)
	value(c.Tools.MaxNameLength != d.Tools.MaxNameLength && c.Tools.MaxNameLength != 0, "max-tool-name-length", strconv.Itoa(c.Tools.MaxNameLength))
	value(c.Tools.ToolMode != d.Tools.ToolMode && c.Tools.ToolMode != "", "tool-mode", c.Tools.ToolMode)
	each("tool-pin", c.Tools.ToolPins)
	value(c.ToolsLock != "", "tools-lock", c.ToolsLock)
	value(c.Limits.MaxFileBytes != d.Limits.MaxFileBytes, "max-file-bytes", strconv.FormatInt(c.Limits.MaxFileBytes, 10))
	value(c.Limits.MaxTotalBytes != d.Limits.MaxTotalBytes, "max-total-bytes", strconv.FormatInt(c.Limits.MaxTotalBytes, 10))
	value(c.Limits.MaxEntries != d.Limits.MaxEntries, "max-entries", strconv.Itoa(c.Limits.MaxEntries))
	return args
}

// HealthPort is the port of HealthAddr (0 when it names none).
func (c Config) HealthPort() int32 {
	_, p, err := net.SplitHostPort(c.HealthAddr)
	if err != nil {
		return 0
	}
	n, err := strconv.ParseInt(p, 10, 32)
	if err != nil {
		return 0
	}
	return int32(n)
}

// Validate checks the sidecar's own rules before anything is loaded; its
// errors name the sidecar's flags.
func (c Config) Validate() error {
	if c.Bundle == "" {
		return errors.New("--bundle is required: a mounted bundle directory or an oci:// reference pinned by digest")
	}
	if br, err := oci.ParseBundleRef(c.Bundle); err != nil {
		return fmt.Errorf("--bundle %s: %w", c.Bundle, err)
	} else if !br.IsLocal() && br.OCI.Digest == "" {
		return fmt.Errorf("--bundle %s: pin an oci:// reference by digest (oci://REPO@sha256:…) so the pod serves the contract it was deployed with", c.Bundle)
	}
	if c.BundleDigest != "" {
		if _, err := digest.Parse(c.BundleDigest); err != nil {
			return fmt.Errorf("--bundle-digest %q: want a digest such as sha256:<64 hex digits>: %w", c.BundleDigest, err)
		}
	}
	if c.Upstream == "" {
		return errors.New("--upstream is required, e.g. http://127.0.0.1:8080")
	}
	u, err := url.Parse(c.Upstream)
	if err != nil || u.Host == "" {
		return fmt.Errorf("--upstream %q: want an absolute http URL such as http://127.0.0.1:8080", c.Upstream)
	}
	if !netx.IsLoopbackHost(u.Hostname()) && !c.AllowRemoteUpstream {
		return fmt.Errorf("--upstream %s is not loopback: the sidecar reaches only its own pod unless --allow-remote-upstream is given", c.Upstream)
	}
	if c.MaxProcs < 0 {
		return fmt.Errorf("--max-procs %d: want how many OS threads may run Go code at once (1 or more), or 0 for the Go runtime's default", c.MaxProcs)
	}
	if !netx.IsLoopbackHost(c.HTTP.Listen) && c.HTTP.AuthTokenFile == "" && c.HTTP.Authenticator == nil {
		return fmt.Errorf("--listen %s reaches beyond loopback: pass --auth-token-file or --mcp-auth oauth (kubectl port-forward reaches loopback)", c.HTTP.Listen)
	}
	return nil
}
