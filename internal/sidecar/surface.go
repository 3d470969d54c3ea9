package sidecar

import (
	"context"
	"errors"
	"fmt"
	"sync"

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
	co, err := surfaceTools(cfg)
	if err != nil {
		return "", err
	}
	c, err := openapitools.Project(ctx, b, &co)
	if err != nil {
		return "", fmt.Errorf("projecting the bundle's tools: %w", err)
	}
	g, err := surfaceGRPC(ctx, cfg, co, b, c.HeldLock())
	if err != nil {
		return "", err
	}
	return surfaceDigest(ctx, &mcp.CapabilityBundle{Bundle: b, Capability: c, GRPC: g})
}

// Surface is the tool surface of one tool mode (ToolSurfaces).
type Surface struct {
	// Mode is the tool mode, as Config.Tools.ToolMode.
	Mode string
	// Digest is what ToolSurface returns in Mode; empty when Err is set.
	Digest string
	// Err is what ToolSurface returns in Mode alone.
	Err error
}

// ToolSurfaces is ToolSurface of cfg with Tools.ToolMode set to each of
// modes in turn (cfg.Tools.ToolMode itself is not read), at the cost of
// one projection: the bundle's OpenAPI and gRPC tools are projected once
// (openapitools.ProjectModes) and each mode's surface is registered and
// digested from that projection offered in the mode, auto settled by
// the Capability's own rule as in the sidecar. Element i is modes[i]'s; an
// error is one every mode would fail with.
//
// A mode is registered and digested once per mode it settles to
// (Capability.Mode): auto's surface is all's or discover's. Package mcp
// reads the tool mode only through Capability.Mode (the choice between one
// tool per operation and the discovery tools), and what else differs
// between auto and the mode it settles to, the reason Mode gives, goes
// into the instructions only, which the digest does not cover.
// TestToolSurfacesMatchEachMode holds ToolSurfaces to ToolSurface, which
// registers auto's server for itself, over every bundle in the repository.
func ToolSurfaces(ctx context.Context, cfg Config, b *bundle.Bundle, modes []string) ([]Surface, error) {
	co, err := surfaceTools(cfg)
	if err != nil {
		return nil, err
	}
	ps, err := openapitools.ProjectModes(ctx, b, &co, modes)
	if err != nil {
		return nil, fmt.Errorf("projecting the bundle's tools: %w", err)
	}
	// The gRPC tools have no tool mode: projected once, on the first
	// mode whose OpenAPI tools project, held to the lock all modes share.
	grpc := sync.OnceValues(func() (*grpctools.Capability, error) {
		for _, p := range ps {
			if p.Capability != nil {
				return surfaceGRPC(ctx, cfg, co, b, p.Capability.HeldLock())
			}
		}
		return nil, nil
	})
	out := make([]Surface, 0, len(ps))
	settled := map[string]Surface{} // by the mode a projection settles to
	for _, p := range ps {
		s := Surface{Mode: p.Mode}
		if p.Err != nil {
			s.Err = fmt.Errorf("projecting the bundle's tools: %w", p.Err)
		} else if g, err := grpc(); err != nil {
			s.Err = err
		} else {
			mode, _ := p.Capability.Mode()
			done, ok := settled[mode]
			if !ok {
				done.Digest, done.Err = surfaceDigest(ctx, &mcp.CapabilityBundle{Bundle: b, Capability: p.Capability, GRPC: g})
				settled[mode] = done
			}
			s.Digest, s.Err = done.Digest, done.Err
		}
		out = append(out, s)
	}
	return out, nil
}

// surfaceTools is the projection options of cfg: its Tools, calling its
// Upstream; refused with a lock file the operator cannot read.
func surfaceTools(cfg Config) (openapitools.Options, error) {
	if cfg.ToolsLock != "" {
		// A lock file is read inside the sidecar's container; the
		// operator cannot read it to know the surface.
		return openapitools.Options{}, errors.New("sidecar arguments: --tools-lock names a file in the sidecar's container; the tool surface cannot be computed outside it")
	}
	co := cfg.Tools
	co.BaseURL = cfg.Upstream
	return co, nil
}

// surfaceGRPC projects b's gRPC tools as the sidecar does, held to lock
// (the OpenAPI projection's); nil without grpc interfaces.
func surfaceGRPC(ctx context.Context, cfg Config, co openapitools.Options, b *bundle.Bundle, lock *openapitools.Lock) (*grpctools.Capability, error) {
	if !hasGRPC(b) {
		return nil, nil
	}
	if len(co.AllowOperations)+len(co.DenyOperations) > 0 {
		return nil, errors.New("sidecar arguments: --allow-operations or --deny-operations with grpc interfaces; the tool surface is computed without them only")
	}
	g := grpctools.Options{Target: cfg.GRPCTarget, AllowWrites: co.AllowWrites, Timeout: co.Timeout, ConfirmWrites: co.ConfirmWrites, Lock: lock}
	c, err := grpctools.Project(ctx, b, &g)
	if err != nil {
		return nil, fmt.Errorf("projecting the bundle's gRPC tools: %w", err)
	}
	return c, nil
}

// surfaceDigest registers cb's tools as the sidecar does and digests
// them with the function the sidecar calls.
func surfaceDigest(ctx context.Context, cb *mcp.CapabilityBundle) (string, error) {
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
