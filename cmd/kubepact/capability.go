package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/kubepact/kubepact/bundle"
	"github.com/kubepact/kubepact/bundle/oci"
	"github.com/kubepact/kubepact/internal/grpctools"
	"github.com/kubepact/kubepact/internal/netx"
	"github.com/kubepact/kubepact/internal/openapitools"
	"github.com/kubepact/kubepact/mcp"
)

// capabilityOptions is the option group of the generated tools, shared by
// `kubepact mcp BUNDLE` (base URL: --base-url) and `kubepact sidecar`
// (base URL: --upstream).
type capabilityOptions struct {
	openapitools.Options
	baseURLFlag string
	// toolsLock is the lock file the generated tools are held to; empty:
	// the bundle's own tools.lock.json, if it carries one.
	toolsLock string
	// grpc configures the tools of the bundle's gRPC interfaces; exposure,
	// the deadline and the confirmation policy are the OpenAPI flags'.
	grpc grpctools.Options
	// remote is set by bindRemoteFlags: the command may reach a gRPC
	// target that is not loopback (over TLS). The sidecar may not.
	remote bool
}

// grpcFlagNames maps grpctools.Options fields to the flags that set them.
var grpcFlagNames = map[string]string{
	"Target":        "--grpc-target",
	"UseTLS":        "--grpc-tls",
	"CAFile":        "--grpc-ca-file",
	"ServerName":    "--grpc-server-name",
	"Metadata":      "--grpc-metadata",
	"MetadataFiles": "--grpc-metadata-file",
	"AllowWrites":   "--allow-writes",
	"AllowMethods":  "--allow-operations",
	"DenyMethods":   "--deny-operations",
	"ConfirmWrites": "--confirm-writes",
	"Timeout":       "--call-timeout",
}

// bindFlags binds the shared flags and the base URL under the given name.
func (o *capabilityOptions) bindFlags(fs *pflag.FlagSet, baseURLFlag, baseURLHelp string) {
	fs.StringVar(&o.BaseURL, baseURLFlag, o.BaseURL, baseURLHelp)
	o.baseURLFlag = "--" + baseURLFlag
	o.BindFlags(fs)
	fs.StringVar(&o.grpc.Target, "grpc-target", o.grpc.Target, "host:port of the gRPC service the bundle's grpc interfaces describe, reached over plaintext HTTP/2 on loopback (e.g. 127.0.0.1:9090); kubepact mcp reaches a remote one with --grpc-tls")
	fs.StringArrayVar(&o.grpc.Metadata, "grpc-metadata", o.grpc.Metadata, "metadata sent with every gRPC call, as name=value, e.g. authorization=Bearer… (repeatable; needs --grpc-target)")
	fs.StringArrayVar(&o.grpc.MetadataFiles, "grpc-metadata-file", o.grpc.MetadataFiles, "gRPC metadata read from a file (e.g. a mounted Secret), as name=PATH (repeatable; needs --grpc-target)")
	fs.StringVar(&o.toolsLock, "tools-lock", "", "offer only the generated tools this lock file (written by \"kubepact lock\") pins, unchanged; others are withheld with reason DRIFT (default: the bundle's own "+openapitools.LockFile+", if any; this flag wins over it)")
}

// bindRemoteFlags binds the flags that reach a remote gRPC target over
// TLS: kubepact mcp's only, since the sidecar reaches loopback only.
func (o *capabilityOptions) bindRemoteFlags(fs *pflag.FlagSet) {
	o.remote = true
	fs.BoolVar(&o.grpc.UseTLS, "grpc-tls", o.grpc.UseTLS, "reach --grpc-target over TLS, verifying its certificate (against the system's roots unless --grpc-ca-file); needed for a target that is not loopback")
	fs.StringVar(&o.grpc.CAFile, "grpc-ca-file", o.grpc.CAFile, "PEM file of the CA certificates --grpc-target's certificate must chain to (needs --grpc-tls)")
	fs.StringVar(&o.grpc.ServerName, "grpc-server-name", o.grpc.ServerName, "name --grpc-target's certificate must hold (default: the target's host; needs --grpc-tls)")
}

// loadCapability loads the bundle ref names, projects it, and prints the
// projection's warnings (skipped and withheld operations) on w, each line
// prefixed with the command's name and naming its flags.
func (o *capabilityOptions) loadCapability(ctx context.Context, ref string, client *oci.Client, limits *limitOptions, w io.Writer, prefix string) (*mcp.CapabilityBundle, error) {
	b, err := loadBundle(ctx, ref, client, limits)
	if err != nil {
		return nil, err
	}
	return o.project(ctx, b, limits, w, prefix)
}

// loadBundle loads the bundle ref names (a directory or an oci://
// reference, through client) within the bundle limits, naming the limit
// flag a bundle exceeds.
func loadBundle(ctx context.Context, ref string, client *oci.Client, limits *limitOptions) (*bundle.Bundle, error) {
	lim, err := limits.limits()
	if err != nil {
		return nil, err
	}
	b, err := bundle.Load(ctx, ref, &bundle.LoadOptions{Client: client, Limits: lim})
	if err != nil {
		return nil, explainLimit(err)
	}
	return b, nil
}

// projectionGCPercent is the GOGC projection runs with (unless GOGC is
// set). Projecting a large API holds its decoded document until every
// operation is built (GitHub's REST API: about 70 MiB live at the peak),
// and at the default of 100 the heap grows to twice what is live before
// the collector runs: the process's peak resident memory. At 50, serving
// GitHub's spec peaked about 27 MiB lower (TestGitHubScale: 149 instead of
// 175 MiB for kubepact mcp in discover mode) for about 0.1 s more CPU at
// start-up (more collections while the document is live); what the server
// keeps afterwards is the same.
const projectionGCPercent = 50

// project projects a loaded bundle into its tools, as loadCapability does.
func (o *capabilityOptions) project(ctx context.Context, b *bundle.Bundle, limits *limitOptions, w io.Writer, prefix string) (*mcp.CapabilityBundle, error) {
	lim, err := limits.limits()
	if err != nil {
		return nil, err
	}
	o.MaxSpecBytes = lim.MaxFileBytes
	if _, set := os.LookupEnv("GOGC"); !set {
		defer debug.SetGCPercent(debug.SetGCPercent(projectionGCPercent))
	}
	if o.toolsLock != "" {
		if o.Lock, err = openapitools.ReadLock(o.toolsLock); err != nil {
			return nil, fmt.Errorf("--tools-lock: %w", err)
		}
	}
	oo, g := o.Options, o.grpc
	if hasGRPC(b) {
		if err := splitLists(ctx, b, &oo, &g); err != nil {
			return nil, err
		}
	}
	c, err := openapitools.Project(ctx, b, &oo)
	if err != nil {
		// The library names option fields; print this command's flags.
		return nil, fieldsToFlags(err, openapitools.FlagNames, map[string]string{"BaseURL": o.baseURLFlag})
	}
	for _, line := range c.Warnings {
		fmt.Fprintf(w, "%s: %s\n", prefix, mcp.FlagWords(line, openapitools.FlagNames))
	}
	cb := &mcp.CapabilityBundle{Bundle: b, Capability: c}
	if t := o.grpc.Target; t != "" && !o.remote {
		if host, _, err := net.SplitHostPort(t); err == nil && !netx.IsLoopbackHost(host) {
			return nil, fmt.Errorf("--grpc-target %s is not a loopback address: the sidecar reaches only the service in its own pod, at 127.0.0.1:PORT, [::1]:PORT or localhost:PORT", t)
		}
	}
	if hasGRPC(b) {
		g.AllowWrites, g.Timeout, g.ConfirmWrites = o.AllowWrites, o.Timeout, o.ConfirmWrites
		g.Lock = c.HeldLock()
		if cb.GRPC, err = grpctools.Project(ctx, b, &g); err != nil {
			return nil, fieldsToFlags(err, grpcFlagNames)
		}
		for _, line := range cb.GRPC.Warnings {
			fmt.Fprintf(w, "%s: %s\n", prefix, mcp.FlagWords(line, grpcFlagNames))
		}
	} else if o.grpc.Target != "" || len(o.grpc.Metadata)+len(o.grpc.MetadataFiles) > 0 || o.grpc.UseTLS || o.grpc.CAFile != "" || o.grpc.ServerName != "" {
		return nil, fmt.Errorf("--grpc-target, --grpc-metadata and --grpc-tls configure the tools of grpc interfaces, and bundle %s declares none", b.Source)
	}
	return cb, nil
}

// hasGRPC reports whether b declares a grpc interface.
func hasGRPC(b *bundle.Bundle) bool {
	if b.Contract == nil {
		return false
	}
	for _, in := range b.Contract.Interfaces {
		if in.Type == "grpc" {
			return true
		}
	}
	return false
}

// splitLists hands the names of --allow-operations and --deny-operations
// that name an RPC of b's grpc interfaces (by tool name or
// Service/Method) to the gRPC tools, and the others to the OpenAPI tools
// (which refuse a name no operation has). An allow list holding names of
// one kind only exposes no tool of the other.
func splitLists(ctx context.Context, b *bundle.Bundle, oo *openapitools.Options, g *grpctools.Options) error {
	if len(oo.AllowOperations)+len(oo.DenyOperations) == 0 {
		return nil
	}
	all, err := grpctools.Project(ctx, b, &grpctools.Options{AllowWrites: true, Limits: g.Limits})
	if err != nil {
		return fieldsToFlags(err, grpcFlagNames)
	}
	hasOpenAPI := false
	for _, in := range b.Contract.Interfaces {
		hasOpenAPI = hasOpenAPI || in.Type == "openapi"
	}
	var problem error
	split := func(flag string, list []string) (openapi, rpcs []string) {
		for _, n := range list {
			switch _, ok := all.ToolName(n); {
			case ok:
				rpcs = append(rpcs, n)
			case !hasOpenAPI && problem == nil:
				var known []string
				for _, t := range all.Tools {
					known = append(known, t.Name)
				}
				for _, w := range all.Withheld {
					known = append(known, w.Name)
				}
				slices.Sort(known)
				problem = fmt.Errorf("%s: no tool is named %q (a gRPC tool is named by its tool name or as Service/Method; names: %s)", flag, n, strings.Join(known, ", "))
			default:
				openapi = append(openapi, n)
			}
		}
		return openapi, rpcs
	}
	allowSet := len(oo.AllowOperations) > 0
	oo.AllowOperations, g.AllowMethods = split("--allow-operations", oo.AllowOperations)
	oo.DenyOperations, g.DenyMethods = split("--deny-operations", oo.DenyOperations)
	if problem != nil {
		return problem
	}
	oo.AllowListSet, g.AllowListSet = allowSet, allowSet
	return nil
}
