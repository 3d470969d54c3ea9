package main

import (
	"slices"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestSidecarDescribesItsWritePolicy: the sidecar process, as an agent
// reaches it, says it is read-only when no tool it offers can change
// anything (the default: only GET and HEAD operations), in
// pacto_server_info and in the instructions, and read-write, naming the
// tools that write, with --allow-writes.
func TestSidecarDescribesItsWritePolicy(t *testing.T) {
	for _, tc := range []struct {
		name       string
		extra      []string
		mode       string
		writeTools []string
		writes     string // in the instructions' Writes line
	}{
		{name: "reads only", mode: "read-only", writeTools: []string{},
			writes: "Writes: none. This server is read-only: no registered tool can change anything."},
		{name: "allow-writes", extra: []string{"--allow-writes", "--confirm-writes", "never"}, mode: "read-write",
			writeTools: []string{"adjustStock", "createProduct", "deleteProduct", "replaceProduct"},
			writes:     "Writes: none of kubepact's own tools writes anything; generated tools that call the service may (see below)."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := startSidecar(t, slowUpstream(t), tc.extra...)
			cs := p.connect(t)
			if got := cs.InitializeResult().Instructions; !strings.Contains(got, tc.writes) {
				t.Errorf("instructions lack %q:\n%s", tc.writes, got)
			}
			res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "pacto_server_info", Arguments: map[string]any{}})
			if err != nil || res.IsError {
				t.Fatalf("pacto_server_info: %v %+v", err, res)
			}
			sc := res.StructuredContent.(map[string]any)
			wp := sc["writePolicy"].(map[string]any)
			var tools []string
			for _, n := range wp["writeTools"].([]any) {
				tools = append(tools, n.(string))
			}
			if tools == nil {
				tools = []string{}
			}
			if sc["mode"] != tc.mode || wp["readOnly"] != (tc.mode == "read-only") || !slices.Equal(tools, tc.writeTools) {
				t.Errorf("mode %v, writePolicy %v; want %s writing with %v", sc["mode"], wp, tc.mode, tc.writeTools)
			}
			if txt := res.Content[0].(*sdk.TextContent).Text; !strings.Contains(txt, ", "+tc.mode+", ") {
				t.Errorf("pacto_server_info's text %q does not say %s", txt, tc.mode)
			}
		})
	}
}
