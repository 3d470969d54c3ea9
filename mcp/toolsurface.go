package mcp

import (
	"context"
	"encoding/json"
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
func (s *Server) ToolSurfaceDigest(ctx context.Context) (string, error) {
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
	type entry struct {
		Name         string `json:"name"`
		InputSchema  any    `json:"inputSchema"`
		OutputSchema any    `json:"outputSchema,omitempty"`
	}
	var surface []entry
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return "", err
		}
		surface = append(surface, entry{t.Name, t.InputSchema, t.OutputSchema})
	}
	slices.SortFunc(surface, func(a, b entry) int { return strings.Compare(a.Name, b.Name) })
	raw, err := json.Marshal(surface)
	if err != nil {
		return "", err
	}
	return digest.FromBytes(raw).String(), nil
}
