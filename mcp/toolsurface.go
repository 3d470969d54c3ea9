package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/opencontainers/go-digest"
)

// ToolSurfaceDigest is the sha256 of the tools s offers as a client lists
// them (name, input and output schema, in name order): two servers with
// the same digest offer an agent exactly the same calls. The sidecar
// reports it on /readyz?verbose, and the operator computes it, through the
// same function, for the Pods it injects.
//
// The SDK serves tools/list from the very tool values NewServer handed it
// (s.listed), so the digest is read from them, each schema decoded from
// its JSON as a client decodes it: a client round trip (a session, the
// handshake, the pages of the list) cost as much as registering a small
// bundle's tools, and the operator digests each tool mode of every new
// digest. When something else may have changed the list (an extension
// family, a caller of SDK), a client lists it (listedSurfaceDigest).
// TestToolSurfaceDigestIsTheListedOne holds the two equal.
func (s *Server) ToolSurfaceDigest(ctx context.Context) (string, error) {
	if s.listedElsewhere.Load() {
		return s.listedSurfaceDigest(ctx)
	}
	return s.registeredSurfaceDigest()
}

// registeredSurfaceDigest is ToolSurfaceDigest read from s.listed.
func (s *Server) registeredSurfaceDigest() (string, error) {
	var surface []surfaceEntry // nil when empty, as a client lists it
	for _, t := range s.listed {
		in, err := asClientDecodes(t.InputSchema)
		if err != nil {
			return "", fmt.Errorf("tool %s: input schema: %w", t.Name, err)
		}
		var out any
		if t.OutputSchema != nil {
			if out, err = asClientDecodes(t.OutputSchema); err != nil {
				return "", fmt.Errorf("tool %s: output schema: %w", t.Name, err)
			}
		}
		surface = append(surface, surfaceEntry{t.Name, in, out})
	}
	return surfaceDigest(surface)
}

// surfaceEntry is what the digest covers of one tool.
type surfaceEntry struct {
	Name         string `json:"name"`
	InputSchema  any    `json:"inputSchema"`
	OutputSchema any    `json:"outputSchema,omitempty"`
}

// asClientDecodes is v as a client holds it after tools/list: its JSON
// decoded into a generic value (maps, float64 numbers).
func asClientDecodes(v any) (any, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out any
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// surfaceDigest digests the entries in name order.
func surfaceDigest(surface []surfaceEntry) (string, error) {
	slices.SortFunc(surface, func(a, b surfaceEntry) int { return strings.Compare(a.Name, b.Name) })
	raw, err := json.Marshal(surface)
	if err != nil {
		return "", err
	}
	return digest.FromBytes(raw).String(), nil
}

// listedSurfaceDigest is ToolSurfaceDigest as a client lists the tools,
// over in-memory transports.
func (s *Server) listedSurfaceDigest(ctx context.Context) (string, error) {
	st, ct := sdk.NewInMemoryTransports()
	ss, err := s.sdk.Connect(ctx, st, nil)
	if err != nil {
		return "", err
	}
	defer ss.Close()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "kubepact-surface", Version: s.opts.Version}, nil).Connect(ctx, ct, nil)
	if err != nil {
		return "", err
	}
	defer cs.Close()
	var surface []surfaceEntry
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return "", err
		}
		surface = append(surface, surfaceEntry{t.Name, t.InputSchema, t.OutputSchema})
	}
	return surfaceDigest(surface)
}
