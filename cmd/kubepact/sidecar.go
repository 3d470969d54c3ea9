package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/kubepact/kubepact/bundle"
	"github.com/kubepact/kubepact/bundle/archive"
	"github.com/kubepact/kubepact/bundle/oci"
	"github.com/kubepact/kubepact/internal/sidecar"
	"github.com/kubepact/kubepact/mcp"
)

// sidecarOptions binds the flags of `kubepact sidecar` into a
// sidecar.Config: its own flags and mcp's HTTP group into cfg directly,
// the generated tools' and the registry's shared groups through their
// binders, gathered by config.
type sidecarOptions struct {
	cfg   sidecar.Config
	tools *capabilityOptions
	reg   *registryOptions
	auth  *oauthFlags
}

func newSidecarOptions() *sidecarOptions {
	return &sidecarOptions{cfg: sidecar.DefaultConfig(), tools: &capabilityOptions{}, reg: &registryOptions{}, auth: &oauthFlags{}}
}

func (o *sidecarOptions) BindFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.cfg.Bundle, "bundle", "", "the pod's bundle: a mounted directory, a mounted bundle.tar.gz (as \"kubepact pack\" writes it, e.g. from a ConfigMap), or an oci:// reference pinned by digest (oci://REPO@sha256:…)")
	fs.StringVar(&o.cfg.BundleDigest, "bundle-digest", "", "refuse to start unless the bundle's digest (its OCI manifest digest, as \"kubepact push\" prints it) is this one (sha256:…); the injection webhook pins a mounted ConfigMap bundle with it")
	fs.BoolVar(&o.cfg.AllowRemoteUpstream, "allow-remote-upstream", false, "allow an --upstream that is not loopback (the sidecar is meant to reach only its own pod)")
	fs.StringVar(&o.cfg.HealthAddr, "health-addr", sidecar.DefaultHealthAddr, "address serving /healthz and /readyz for the kubelet's probes")
	fs.Int64Var(&o.cfg.MemoryLimitMiB, "memory-limit-mib", sidecar.DefaultMemoryLimitMiB, "soft limit in MiB on the memory the Go runtime manages (as GOMEMLIMIT, which wins when set; 0: none); raised to what the bundle keeps live plus a quarter when it is lower")
	fs.IntVar(&o.cfg.MaxProcs, "max-procs", sidecar.DefaultMaxProcs, "how many OS threads run Go code at once once the sidecar is ready (as GOMAXPROCS, which wins when set; 0: the Go runtime's default, the CPUs or the container's CPU limit); start-up runs on every CPU")
	o.cfg.HTTP.BindHTTPFlags(fs)
	o.auth.bindMode(fs)
	o.auth.o.BindFlags(fs)
	o.tools.bindFlags(fs, "upstream", "base URL of the service in this pod, e.g. http://127.0.0.1:8080 (required)")
	o.reg.BindFlags(fs)
}

// config is the Config the parsed flags say.
func (o *sidecarOptions) config() sidecar.Config {
	c := o.cfg
	c.Upstream = o.tools.BaseURL
	c.Tools = o.tools.Options
	c.Tools.BaseURL = ""
	c.ToolsLock = o.tools.toolsLock
	c.GRPCTarget = o.tools.grpc.Target
	c.Registry = o.reg.Options
	c.Limits = o.reg.limits.lim
	return c
}

func newSidecarCommand() *cobra.Command {
	o := newSidecarOptions()
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
			if err := refuseInapplicable(cmd.Flags(), append(sidecarFlagRules(o, o.tools, o.reg), oauthRule(func() string { return o.auth.mode }))); err != nil {
				return err
			}
			if err := o.auth.applyMode(&o.cfg.HTTP.HTTPOptions); err != nil {
				return &exitError{code: 2, msg: err.Error()}
			}
			return runSidecar(cmd.Context(), o)
		},
	}
	o.BindFlags(cmd.Flags())
	return cmd
}

// runSidecar runs the sidecar of the parsed flags with the loaders that
// `kubepact mcp` and `check` share, and says a failure to start in the
// sidecar's flags (exit code 2).
func runSidecar(ctx context.Context, o *sidecarOptions) error {
	const prefix = "kubepact sidecar"
	err := sidecar.Run(ctx, o.config(), sidecar.Loaders{
		Load: func(ctx context.Context, ref string) (*bundle.Bundle, error) {
			var client *oci.Client // only an oci:// bundle needs one (and its cache directory)
			if bundle.IsOCIRef(ref) {
				var err error
				if client, err = o.reg.client(ctx, ref); err != nil {
					return nil, err
				}
			}
			return loadBundle(ctx, ref, client, &o.reg.limits)
		},
		LoadFile: func(path string) (*bundle.Bundle, error) { return loadLayerFile(path, &o.reg.limits) },
		Project: func(ctx context.Context, b *bundle.Bundle) (*mcp.CapabilityBundle, error) {
			return o.tools.project(ctx, b, &o.reg.limits, os.Stderr, prefix)
		},
		Version: version,
	})
	se, ok := errors.AsType[*sidecar.StartError](err)
	if !ok {
		return err
	}
	switch se.Stage {
	case sidecar.StageHealth:
		if msg, ok := listenFailure(se.Err, se.Addr, "--health-addr"); ok {
			return &exitError{code: 2, msg: msg}
		}
	case sidecar.StageListen:
		if msg, ok := listenFailure(se.Err, se.Addr, "--listen and --port"); ok {
			return &exitError{code: 2, msg: msg}
		}
	case sidecar.StageServer:
		return &exitError{code: 2, msg: inWords(fieldsToFlags(se.Err, mcp.FlagNames))}
	}
	return &exitError{code: 2, msg: inWords(se.Err)}
}

// loadLayerFile loads a packed bundle file (bundle.tar.gz), bounded by the
// bundle limits before it is read, and says what went wrong in the
// sidecar's flags.
func loadLayerFile(path string, limits *limitOptions) (*bundle.Bundle, error) {
	lim, err := limits.limits()
	if err != nil {
		return nil, err
	}
	b, err := bundle.LoadLayerFile(path, &bundle.LoadOptions{Limits: lim})
	var pe *fs.PathError
	switch ae := (*archive.Error)(nil); {
	case err == nil:
		return b, nil
	case errors.As(err, &pe):
		return nil, fmt.Errorf("--bundle %s: %w", path, err)
	case errors.Is(err, bundle.ErrLayerFileTooLarge):
		return nil, fmt.Errorf("--bundle %s: the file is larger than the %d bytes a bundle may hold in all", path, lim.WithDefaults().MaxTotalBytes)
	case errors.As(err, &ae) && errors.Is(ae.Kind, archive.ErrFormat):
		return nil, fmt.Errorf("--bundle %s is a file, but not a packed bundle (the gzip'd tar \"kubepact pack\" writes): give a packed bundle, or the bundle's directory", path)
	default:
		return nil, fmt.Errorf("--bundle %s: the packed bundle cannot be served: %w", path, explainLimit(err))
	}
}
