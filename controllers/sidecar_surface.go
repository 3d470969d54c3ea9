package controllers

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/kubepact/kubepact/bundle"
	"github.com/kubepact/kubepact/bundle/capability"
	"github.com/kubepact/kubepact/mcp"
)

// ToolSurface is the digest of the tool surface a sidecar started with
// args (SidecarArgs) serves from b: the value it reports as
// toolSurfaceDigest on /readyz?verbose. The arguments that shape the tools
// (--upstream and the exposure flags) are read by the flag binder the
// sidecar itself uses (capability.Options.BindFlags); the tools are
// projected and registered as the sidecar does, and the digest is the one
// function the sidecar calls (mcp.Server.ToolSurfaceDigest). Other
// arguments are ignored: they say where the bundle and the endpoints are,
// not what the tools are.
func ToolSurface(ctx context.Context, b *bundle.Bundle, args []string) (string, error) {
	co, err := capabilityOptions(args)
	if err != nil {
		return "", err
	}
	c, err := capability.Project(ctx, b, &co)
	if err != nil {
		return "", fmt.Errorf("projecting the bundle's tools: %w", err)
	}
	opts := mcp.DefaultOptions()
	opts.Transport = mcp.TransportHTTP
	opts.Families = []mcp.Family{mcp.FamilyCapability}
	opts.Capability = &mcp.CapabilityBundle{Bundle: b, Capability: c}
	s, err := mcp.NewServer(ctx, opts)
	if err != nil {
		return "", fmt.Errorf("registering the bundle's tools: %w", err)
	}
	defer s.Close()
	return s.ToolSurfaceDigest(ctx)
}

// capabilityOptions reads the capability flags of a sidecar command line.
func capabilityOptions(args []string) (capability.Options, error) {
	var o capability.Options
	var lock string
	fs := pflag.NewFlagSet("sidecar", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.ParseErrorsAllowlist.UnknownFlags = true
	fs.StringVar(&o.BaseURL, "upstream", "", "")
	o.BindFlags(fs)
	fs.StringVar(&lock, "tools-lock", "", "")
	if err := fs.Parse(args); err != nil {
		return o, fmt.Errorf("sidecar arguments: %w", err)
	}
	if lock != "" {
		// A lock file is read inside the sidecar's container; the
		// operator cannot read it to know the surface.
		return o, errors.New("sidecar arguments: --tools-lock names a file in the sidecar's container; the tool surface cannot be computed outside it")
	}
	return o, nil
}
