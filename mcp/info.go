package mcp

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
)

// instructions is the text sent in the initialize (or discover) result: what
// this server is, which families are on, what can write, and the limits.
func (s *Server) instructions() string {
	var b strings.Builder
	b.WriteString("kubepact serves Pacto service contracts (pacto.yaml bundles: a service's interfaces, configuration, dependencies, runtime state and policies) to agents.\n\n")
	b.WriteString("Tool families on this server:\n")
	for _, f := range s.families {
		if f.enabled {
			fmt.Fprintf(&b, "- %s.\n", f.summary)
		}
	}
	if off := s.disabledFamilies(); len(off) > 0 {
		fmt.Fprintf(&b, "Families switched off here: %s.\n", strings.Join(off, ", "))
	}
	b.WriteString("\nWrites: ")
	switch writes := s.ownWriteTools(); {
	case s.readOnly():
		b.WriteString("none. This server is read-only: no registered tool can change anything")
		if len(s.withheld) > 0 {
			fmt.Fprintf(&b, " (%s are not offered)", strings.Join(s.withheld, ", "))
		}
		b.WriteString(".\n")
	case len(writes) == 0 && s.writesDescribedBelow():
		b.WriteString("none of kubepact's own tools writes anything; generated tools that call the service may (see below).\n")
	default:
		fmt.Fprintf(&b, "only %s write, and only contract files below the workspace %s. pacto_create never replaces an existing pacto.yaml unless overwrite is true; both accept dry_run to preview the result and diff without writing.\n",
			strings.Join(writes, " and "), s.opts.Workspace)
	}
	b.WriteString("\nBoundaries: every tool carries readOnlyHint/destructiveHint/idempotentHint/openWorldHint annotations. Arguments are checked strictly: an unknown or mistyped argument is an error (structuredContent.error with code, field, the accepted names and a did-you-mean), never silently ignored. Results carry structuredContent and a short text; tool errors are isError results with a stable error.code. ")
	if _, ok := s.tools["pacto_schema"]; ok {
		fmt.Fprintf(&b, "Authoring tools read and write only below the workspace %s; a path outside it is refused, and an edit that would change nothing says so in a warning. Call pacto_schema for the contract schema (or with path to explain one field). ", s.opts.Workspace)
	}
	b.WriteString("Call pacto_server_info for this server's configuration.")
	for _, f := range s.families {
		if f.parts != nil && f.parts.instructions != nil {
			b.WriteString(f.parts.instructions(f.registered))
		}
	}
	return b.String()
}

// readOnly reports whether no registered tool can change anything: the
// server was started read-only, or nothing it offers writes (a sidecar
// without --allow-writes, a fleet server).
func (s *Server) readOnly() bool { return s.opts.ReadOnly || len(s.writeTools()) == 0 }

// writesDescribedBelow reports whether a family's own paragraph says
// what its tools write (the capability family's generated tools).
func (s *Server) writesDescribedBelow() bool {
	for _, f := range s.families {
		if f.parts != nil && f.parts.describesWrites {
			return true
		}
	}
	return false
}

func (s *Server) disabledFamilies() []string {
	var off []string
	for _, f := range s.families {
		if !f.enabled {
			off = append(off, string(f.name))
		}
	}
	return off
}

// ownWriteTools are kubepact's own registered tools that can change
// something; generated tools are described by the capability family.
func (s *Server) ownWriteTools() []string {
	var w []string
	for _, name := range s.writeTools() {
		if !s.tools[name].generated {
			w = append(w, name)
		}
	}
	return w
}

// writeTools are the registered tools that can change something.
func (s *Server) writeTools() []string {
	var w []string
	for _, name := range s.ToolNames() {
		if s.tools[name].writes() {
			w = append(w, name)
		}
	}
	return w
}

// ServerInfo is pacto_server_info's answer.
type ServerInfo struct {
	Name        string        `json:"name" jsonschema:"server implementation name"`
	Version     string        `json:"version" jsonschema:"server version"`
	Mode        string        `json:"mode" jsonschema:"read-write, or read-only when no tool can write anything"`
	Families    []FamilyInfo  `json:"families" jsonschema:"every tool family kubepact knows and whether it is on here"`
	WritePolicy WritePolicy   `json:"writePolicy" jsonschema:"what can write and where"`
	Workspace   string        `json:"workspace" jsonschema:"the directory authoring tools read and write below"`
	Transport   TransportInfo `json:"transport" jsonschema:"how this server is reached"`
	Tools       []string      `json:"tools" jsonschema:"every registered tool"`
	// GeneratedTools is set when the capability family is on.
	GeneratedTools *GeneratedToolsInfo `json:"generatedTools,omitempty" jsonschema:"the bundle's generated tools: their lockDigest, confirmation policy and tools lock (capability family only)"`
}

// FamilyInfo is one family in [ServerInfo].
type FamilyInfo struct {
	Name    string   `json:"name"`
	Enabled bool     `json:"enabled"`
	Tools   []string `json:"tools" jsonschema:"the family's tools registered here (empty when off)"`
}

// WritePolicy says what can write in [ServerInfo].
type WritePolicy struct {
	ReadOnly   bool     `json:"readOnly" jsonschema:"true when the server registers no tool that can write"`
	WriteTools []string `json:"writeTools" jsonschema:"registered tools that can write"`
	Withheld   []string `json:"withheld" jsonschema:"write tools left out because the server is read-only"`
	Confined   string   `json:"confinedTo" jsonschema:"the directory every write stays below"`
}

// TransportInfo describes the transport in [ServerInfo].
type TransportInfo struct {
	Kind             string   `json:"kind" jsonschema:"stdio or http"`
	URL              string   `json:"url,omitempty" jsonschema:"the Streamable HTTP endpoint (http only)"`
	Authentication   string   `json:"authentication" jsonschema:"none or bearer"`
	ProtocolVersions []string `json:"protocolVersions" jsonschema:"protocol versions the endpoint negotiates"`
}

type serverInfoArgs struct{}

func (s *Server) serverInfoTool() (*tool, error) {
	return newTool(toolSpec{
		name:        "pacto_server_info",
		title:       "Describe this kubepact server",
		description: "Describe this running server: version, which tool families are on, which tools can write and where (workspace), whether it is read-only, and how it is reached. Takes no arguments; changes nothing.",
		hints:       hints{readOnly: true, idempotent: true},
	}, func(context.Context, serverInfoArgs) (ServerInfo, string, error) {
		info := s.info()
		return info, fmt.Sprintf("kubepact %s, %s, families: %s; writes: %s.", info.Version, info.Mode, strings.Join(enabledNames(info.Families), ", "), orNone(info.WritePolicy.WriteTools)), nil
	})
}

func (s *Server) info() ServerInfo {
	mode := "read-write"
	if s.readOnly() {
		mode = "read-only"
	}
	fams := make([]FamilyInfo, 0, len(s.families))
	for _, f := range s.families {
		fams = append(fams, FamilyInfo{Name: string(f.name), Enabled: f.enabled, Tools: append([]string{}, f.tools...)})
	}
	tr := TransportInfo{Kind: s.opts.Transport, Authentication: "none", ProtocolVersions: protocolEras()}
	if u := s.servedURL.Load(); u != nil {
		tr.Kind, tr.URL = TransportHTTP, *u
	} else if s.opts.Transport == TransportHTTP {
		tr.URL = "http://" + net.JoinHostPort(s.opts.Listen, strconv.Itoa(s.opts.Port)) + Endpoint
	}
	if tr.Kind == TransportHTTP {
		if s.opts.Authenticator != nil {
			tr.Authentication = "bearer"
		}
	} else {
		tr.ProtocolVersions = []string{"2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"}
	}
	return ServerInfo{
		Name:     ServerName,
		Version:  s.opts.Version,
		Mode:     mode,
		Families: fams,
		WritePolicy: WritePolicy{
			ReadOnly:   s.readOnly(),
			WriteTools: append([]string{}, s.writeTools()...),
			Withheld:   append([]string{}, s.withheld...),
			Confined:   s.opts.Workspace,
		},
		Workspace:      s.opts.Workspace,
		Transport:      tr,
		Tools:          s.ToolNames(),
		GeneratedTools: s.generatedToolsInfo(),
	}
}

func enabledNames(fs []FamilyInfo) []string {
	var out []string
	for _, f := range fs {
		if f.Enabled {
			out = append(out, f.Name)
		}
	}
	if len(out) == 0 {
		return []string{"none"}
	}
	return out
}

func orNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(slices.Clone(names), ", ")
}
