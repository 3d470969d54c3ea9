package mcp

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kubepact/kubepact/bundle/oci"
)

// TestCheckFollowsPolicyRefsInsideTheWorkspace: pacto_check enforces a
// policy referenced by a local path, from the checked bundle's directory,
// and fails closed on one that leads out of the workspace.
func TestCheckFollowsPolicyRefsInsideTheWorkspace(t *testing.T) {
	ws := t.TempDir()
	write := func(rel, content string) {
		t.Helper()
		p := filepath.Join(ws, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("baseline/pacto.yaml", "pactoVersion: \"2.0\"\nservice:\n  name: baseline\n  version: 1.0.0\npolicies:\n  - name: baseline\n    schema: policy/schema.json\n")
	write("baseline/policy/schema.json", `{"type":"object","required":["state"]}`)
	write("svc/pacto.yaml", "pactoVersion: \"2.0\"\nservice:\n  name: svc\n  version: 1.0.0\npolicies:\n  - name: baseline\n    ref: ../baseline\n")
	write("escape/pacto.yaml", "pactoVersion: \"2.0\"\nservice:\n  name: escape\n  version: 1.0.0\npolicies:\n  - name: outside\n    ref: ../../"+filepath.Base(t.TempDir())+"\n")

	s := newTestServer(t, &Options{Workspace: ws})
	cs := connect(t.Context(), t, s)

	for _, tt := range []struct{ path, code, msg string }{
		{"svc", "POLICY_VIOLATION", "state"},
		{"escape", "POLICY_REF_UNRESOLVED", "may not leave"},
	} {
		res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "pacto_check", Arguments: map[string]any{"path": tt.path}})
		if err != nil {
			t.Fatal(err)
		}
		out := structured(t, res)
		errs, _ := out["errors"].([]any)
		if out["valid"] != false || len(errs) != 1 {
			t.Fatalf("pacto_check %s = %v; want one error", tt.path, out)
		}
		f := errs[0].(map[string]any)
		if f["code"] != tt.code || !strings.Contains(f["message"].(string), tt.msg) {
			t.Errorf("pacto_check %s: finding %v; want %s mentioning %q", tt.path, f, tt.code, tt.msg)
		}
	}
}

// TestAuthoringOpenWorldFollowsRegistryAccess: validating follows refs, so
// the tools that validate are open-world exactly when a registry client is
// configured, and closed otherwise.
func TestAuthoringOpenWorldFollowsRegistryAccess(t *testing.T) {
	client, err := oci.NewClient(&oci.ClientOptions{DockerConfigJSON: []byte(`{"auths":{}}`)})
	if err != nil {
		t.Fatal(err)
	}
	for _, withRegistry := range []bool{false, true} {
		opts := &Options{}
		if withRegistry {
			opts.Registry = client
		}
		cs := connect(t.Context(), t, newTestServer(t, opts))
		res, err := cs.ListTools(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, tl := range res.Tools {
			want := withRegistry && tl.Name != "pacto_schema" && tl.Name != "pacto_server_info"
			got := tl.Annotations != nil && tl.Annotations.OpenWorldHint != nil && *tl.Annotations.OpenWorldHint
			if got != want {
				t.Errorf("registry %v: %s openWorldHint = %v, want %v", withRegistry, tl.Name, got, want)
			}
		}
	}
}

// closedPort returns a loopback address nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	return addr
}

// TestCheckUnreachableRegistryIsCouldNotCheck: a ref whose registry does
// not answer makes pacto_check say "could not check" (REF_UNREACHABLE),
// not "invalid".
func TestCheckUnreachableRegistryIsCouldNotCheck(t *testing.T) {
	ws := t.TempDir()
	addr := closedPort(t)
	if err := os.MkdirAll(filepath.Join(ws, "svc"), 0o755); err != nil {
		t.Fatal(err)
	}
	contract := "pactoVersion: \"2.0\"\nservice:\n  name: svc\n  version: 1.0.0\npolicies:\n  - name: org\n    ref: oci://" + addr + "/policies/org:1.0.0\n"
	if err := os.WriteFile(filepath.Join(ws, "svc", "pacto.yaml"), []byte(contract), 0o644); err != nil {
		t.Fatal(err)
	}
	client, err := oci.NewClient(&oci.ClientOptions{PlainHTTP: true, DockerConfigJSON: []byte(`{"auths":{}}`)})
	if err != nil {
		t.Fatal(err)
	}
	cs := connect(t.Context(), t, newTestServer(t, &Options{Workspace: ws, Registry: client}))
	res := callTool(t, cs, "pacto_check", map[string]any{"path": "svc"})
	out := structured(t, res)
	errs, _ := out["errors"].([]any)
	if res.IsError || out["valid"] != false || out["couldNotCheck"] != true || len(errs) != 1 || errs[0].(map[string]any)["code"] != "REF_UNREACHABLE" {
		t.Fatalf("pacto_check with an unreachable registry: %s", text(res))
	}
	if !strings.Contains(text(res), "could not be checked") || strings.Contains(text(res), "invalid:") {
		t.Errorf("summary: %s", text(res))
	}
}
