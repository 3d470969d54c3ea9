package sidecar

import (
	"context"
	"errors"
	"fmt"

	"github.com/kubepact/kubepact/bundle"
	"github.com/kubepact/kubepact/internal/grpctools"
	"github.com/kubepact/kubepact/internal/openapitools"
	"github.com/kubepact/kubepact/mcp"
)

// ToolSurface is the digest of the tool surface a sidecar started with
// cfg serves from b: the value it reports as toolSurfaceDigest on
// /readyz?verbose. The tools are projected with cfg's Upstream, GRPCTarget
// and Tools and registered as the sidecar does, and the digest is the one
// function the sidecar calls (mcp.Server.ToolSurfaceDigest). The other
// fields say where the bundle and the endpoints are, not what the tools
// are. The gRPC tools of a bundle with grpc interfaces are projected with
// the OpenAPI tools' write settings, as the sidecar projects them when no
// allow or deny list is set (the webhook never sets one).
func ToolSurface(ctx context.Context, cfg Config, b *bundle.Bundle) (string, error) {
	if cfg.ToolsLock != "" {
		// A lock file is read inside the sidecar's container; the
		// operator cannot read it to know the surface.
		return "", errors.New("sidecar arguments: --tools-lock names a file in the sidecar's container; the tool surface cannot be computed outside it")
	}
	co := cfg.Tools
	co.BaseURL = cfg.Upstream
	c, err := openapitools.Project(ctx, b, &co)
	if err != nil {
		return "", fmt.Errorf("projecting the bundle's tools: %w", err)
	}
	cb := &mcp.CapabilityBundle{Bundle: b, Capability: c}
	if hasGRPC(b) {
		if len(co.AllowOperations)+len(co.DenyOperations) > 0 {
			return "", errors.New("sidecar arguments: --allow-operations or --deny-operations with grpc interfaces; the tool surface is computed without them only")
		}
		g := grpctools.Options{Target: cfg.GRPCTarget, AllowWrites: co.AllowWrites, Timeout: co.Timeout, ConfirmWrites: co.ConfirmWrites, Lock: c.HeldLock()}
		if cb.GRPC, err = grpctools.Project(ctx, b, &g); err != nil {
			return "", fmt.Errorf("projecting the bundle's gRPC tools: %w", err)
		}
	}
	opts := mcp.DefaultOptions()
	opts.Transport = mcp.TransportHTTP
	opts.Families = []mcp.Family{mcp.FamilyCapability}
	opts.Capability = cb
	s, err := mcp.NewServer(ctx, opts)
	if err != nil {
		return "", fmt.Errorf("registering the bundle's tools: %w", err)
	}
	defer s.Close()
	return s.ToolSurfaceDigest(ctx)
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
