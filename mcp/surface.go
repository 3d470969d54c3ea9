package mcp

import "github.com/kubepact/kubepact/internal/openapitools"

// GeneratedToolsInfo describes the generated tools in [ServerInfo]: what
// surface is offered, which calls wait for the user's confirmation, and
// the tools lock the surface is held to.
type GeneratedToolsInfo struct {
	Service       string       `json:"service"`
	SurfaceDigest string       `json:"surfaceDigest" jsonschema:"digest of the generated tools offered, computed as a tools lock's surfaceDigest (equal to it when exactly the locked tools are offered)"`
	ConfirmWrites string       `json:"confirmWrites" jsonschema:"delete, always or never: which generated tools ask the user to confirm each request before it is sent"`
	Confirmed     []string     `json:"confirmed" jsonschema:"registered generated tools whose calls ask the user to confirm the request first"`
	Lock          *LockSummary `json:"lock,omitempty" jsonschema:"the tools lock the generated tools are held to (pacto_withheld has the details); absent without one"`
}

// LockSummary is the tools lock in [GeneratedToolsInfo].
type LockSummary struct {
	Source        string        `json:"source"`
	FromBundle    bool          `json:"fromBundle"`
	SurfaceDigest string        `json:"surfaceDigest"`
	Locked        int           `json:"locked" jsonschema:"tools the lock pins"`
	Drifted       []string      `json:"drifted" jsonschema:"tools withheld with reason DRIFT"`
	Missing       []MissingTool `json:"missing" jsonschema:"locked tools the bundle no longer has"`
}

// MissingTool is a locked tool the bundle no longer has.
type MissingTool struct {
	Name      string `json:"name"`
	Interface string `json:"interface"`
	Method    string `json:"method"`
	Path      string `json:"path"`
}

// lockSummary summarises a projection's lock status; nil without a lock.
func lockSummary(l *openapitools.LockStatus) *LockSummary {
	if l == nil {
		return nil
	}
	out := &LockSummary{Source: l.Source, FromBundle: l.FromBundle, SurfaceDigest: l.SurfaceDigest, Locked: l.Locked, Drifted: l.Drifted, Missing: []MissingTool{}}
	for _, m := range l.Missing {
		out.Missing = append(out.Missing, MissingTool{Name: m.Name, Interface: m.Operation.Interface, Method: m.Operation.Method, Path: m.Operation.Path})
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
	info := &GeneratedToolsInfo{Service: c.Service, SurfaceDigest: c.SurfaceDigest, ConfirmWrites: c.ConfirmWrites, Confirmed: []string{}}
	info.Lock = lockSummary(c.Lock)
	for _, name := range s.ToolNames() {
		if t := s.tools[name]; t.generated {
			if ct := c.Tool(name); ct != nil && ct.NeedsConfirmation() {
				info.Confirmed = append(info.Confirmed, name)
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
