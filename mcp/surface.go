package mcp

import (
	"slices"

	"github.com/kubepact/kubepact/internal/openapitools"
)

// GeneratedToolsInfo describes the generated tools in [ServerInfo]: what
// surface is offered, which calls wait for the user's confirmation, and
// the tools lock the surface is held to.
type GeneratedToolsInfo struct {
	Service       string       `json:"service"`
	LockDigest    string       `json:"lockDigest" jsonschema:"digest of the generated tools offered, computed as a tools lock's lockDigest (equal to it when exactly the locked tools are offered)"`
	ConfirmWrites string       `json:"confirmWrites" jsonschema:"delete, always or never: which generated tools ask the user to confirm each request before it is sent"`
	Confirmed     []string     `json:"confirmed" jsonschema:"registered generated tools whose calls ask the user to confirm the request first"`
	Lock          *LockSummary `json:"lock,omitempty" jsonschema:"the tools lock the generated tools are held to (pacto_withheld has the details); absent without one"`
}

// LockSummary is the tools lock in [GeneratedToolsInfo].
type LockSummary struct {
	Source     string        `json:"source"`
	FromBundle bool          `json:"fromBundle"`
	LockDigest string        `json:"lockDigest"`
	Locked     int           `json:"locked" jsonschema:"tools the lock pins"`
	Drifted    []string      `json:"drifted" jsonschema:"tools withheld with reason DRIFT"`
	Missing    []MissingTool `json:"missing" jsonschema:"locked tools the bundle no longer has"`
}

// MissingTool is a locked tool the bundle no longer has: an OpenAPI
// operation (method and path) or a gRPC method (rpc).
type MissingTool struct {
	Name      string `json:"name"`
	Interface string `json:"interface"`
	Method    string `json:"method"`
	Path      string `json:"path"`
	RPC       string `json:"rpc,omitempty" jsonschema:"for a gRPC tool, the full method name /package.Service/Method (method and path are then empty)"`
}

// lockDigest is the lockDigest of every generated tool cb offers, OpenAPI
// and gRPC: the lock's own when exactly the tools it pins are offered.
func (cb *CapabilityBundle) lockDigest() string {
	if cb.GRPC == nil || len(cb.GRPC.Tools) == 0 {
		return cb.Capability.LockDigest
	}
	return openapitools.LockDigestOf(cb.Capability, cb.GRPC.Pins()...)
}

// lockSummary summarises how cb's generated tools, OpenAPI and gRPC, are
// held to a tools lock; nil without a lock.
func (cb *CapabilityBundle) lockSummary() *LockSummary {
	l := cb.Capability.Lock
	if l == nil {
		return nil
	}
	out := &LockSummary{Source: l.Source, FromBundle: l.FromBundle, LockDigest: l.LockDigest, Locked: l.Locked, Drifted: l.Drifted, Missing: []MissingTool{}}
	for _, m := range l.Missing {
		out.Missing = append(out.Missing, MissingTool{Name: m.Name, Interface: m.Operation.Interface, Method: m.Operation.Method, Path: m.Operation.Path})
	}
	held := cb.Capability.HeldLock()
	if held == nil {
		return out
	}
	out.Locked += len(held.GRPC)
	missing := held.GRPC // a bundle without gRPC interfaces has none of them
	if g := cb.GRPC; g != nil && g.Lock != nil {
		if len(g.Lock.Drifted) > 0 {
			out.Drifted = append(slices.Clone(out.Drifted), g.Lock.Drifted...)
		}
		missing = g.Lock.Missing
	}
	for _, m := range missing {
		out.Missing = append(out.Missing, MissingTool{Name: m.Name, Interface: m.RPC.Interface, RPC: m.RPC.Method})
	}
	return out
}

// generatedToolsInfo is nil unless the capability family is on.
func (s *Server) generatedToolsInfo() *GeneratedToolsInfo {
	cb := s.opts.Capability
	if cb == nil || cb.Capability == nil || !s.familyEnabled(FamilyCapability) {
		return nil
	}
	c := cb.Capability
	info := &GeneratedToolsInfo{Service: c.Service, LockDigest: cb.lockDigest(), ConfirmWrites: c.ConfirmWrites, Confirmed: []string{}}
	info.Lock = cb.lockSummary()
	for _, name := range s.ToolNames() {
		if t := s.tools[name]; t.generated {
			if ct := c.Tool(name); ct != nil && ct.NeedsConfirmation() {
				info.Confirmed = append(info.Confirmed, name)
			}
			if cb.GRPC != nil {
				if gt := cb.GRPC.Tool(name); gt != nil && gt.NeedsConfirmation() {
					info.Confirmed = append(info.Confirmed, name)
				}
			}
		}
	}
	return info
}

// familyEnabled reports whether the family name is on.
func (s *Server) familyEnabled(name Family) bool {
	for _, f := range s.families {
		if f.name == name {
			return f.enabled
		}
	}
	return false
}
