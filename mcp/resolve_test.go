package mcp

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kubepact/kubepact/bundle/oci"
	"github.com/kubepact/kubepact/test/freeport"
)

// writeUnder writes content to rel (a slash path) below base, making the
// directories on the way.
func writeUnder(t *testing.T, base, rel, content string) {
	t.Helper()
	p := filepath.Join(base, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestCheckFollowsPolicyRefsInsideTheWorkspace: pacto_check enforces a
// policy referenced by a local path, from the checked bundle's directory,
// and fails closed on one that leads out of the workspace.
func TestCheckFollowsPolicyRefsInsideTheWorkspace(t *testing.T) {
	ws := t.TempDir()
	write := func(rel, content string) { writeUnder(t, ws, rel, content) }
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

// TestCheckUnreachableRegistryIsCouldNotCheck: a ref whose registry does
// not answer makes pacto_check say "could not check" (REF_UNREACHABLE),
// not "invalid".
func TestCheckUnreachableRegistryIsCouldNotCheck(t *testing.T) {
	ws := t.TempDir()
	addr := freeport.ClosedAddr(t)
	if err := os.MkdirAll(filepath.Join(ws, "svc"), 0o755); err != nil {
		t.Fatal(err)
	}
	contract := "pactoVersion: \"2.0\"\nservice:\n  name: svc\n  version: 1.0.0\npolicies:\n  - name: org\n    ref: oci://" + addr + "/policies/org:1.0.0\n"
	if err := os.WriteFile(filepath.Join(ws, "svc", "pacto.yaml"), []byte(contract), 0o644); err != nil {
		t.Fatal(err)
	}
	client, err := oci.NewClient(&oci.ClientOptions{PlainHTTP: true, DockerConfigJSON: []byte(`{"auths":{}}`), AllowedRegistries: []string{"127.0.0.1"}})
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

// TestCheckPolicyRefSwapRaceNeverReadsOutside: while pacto_check follows a
// local policy ref, another process keeps swapping the policy bundle's
// directory, and one file in it, with symlinks to a policy outside the
// workspace. Confinement is held by open handles from the check to the
// read, so no call ever applies or quotes the outside policy, however the
// swaps interleave with the reads. Runs for ten seconds.
func TestCheckPolicyRefSwapRaceNeverReadsOutside(t *testing.T) {
	const marker = "OUTSIDE_POLICY_MARKER"
	ws, outside := t.TempDir(), t.TempDir()
	writeFile := func(base, rel, content string) { writeUnder(t, base, rel, content) }
	// The policy inside the workspace accepts the contract; the one outside
	// demands a field named by the marker, so applying it shows in a finding.
	writeFile(ws, "baseline/pacto.yaml", "pactoVersion: \"2.0\"\nservice:\n  name: baseline\n  version: 1.0.0\npolicies:\n  - name: baseline\n    schema: policy/schema.json\n")
	writeFile(ws, "baseline/policy/schema.json", `{"type":"object"}`)
	writeFile(ws, "svc/pacto.yaml", "pactoVersion: \"2.0\"\nservice:\n  name: svc\n  version: 1.0.0\npolicies:\n  - name: baseline\n    ref: ../baseline\n")
	writeFile(outside, "pacto.yaml", "pactoVersion: \"2.0\"\nservice:\n  name: "+strings.ToLower(marker)+"\n  version: 1.0.0\npolicies:\n  - name: "+marker+"\n    schema: policy/schema.json\n")
	writeFile(outside, "policy/schema.json", `{"type":"object","required":["`+marker+`"],"title":"`+marker+`"}`)

	s := newTestServer(t, &Options{Workspace: ws})
	cs := connect(t.Context(), t, s)

	dir := filepath.Join(ws, "baseline")
	parked := filepath.Join(ws, "baseline.parked")
	file := filepath.Join(dir, "policy", "schema.json")
	fileParked := filepath.Join(ws, "schema.json.parked")
	stop := make(chan struct{})
	swapped := make(chan int)
	go func() {
		n := 0
		defer func() { swapped <- n }()
		for {
			select {
			case <-stop:
				return
			default:
			}
			// The whole policy directory, then one file in it.
			if os.Rename(dir, parked) == nil {
				_ = os.Symlink(outside, dir)
				n++
				_ = os.Remove(dir)
				_ = os.Rename(parked, dir)
			}
			if os.Rename(file, fileParked) == nil {
				_ = os.Symlink(filepath.Join(outside, "policy", "schema.json"), file)
				n++
				_ = os.Remove(file)
				_ = os.Rename(fileParked, file)
			}
		}
	}()

	calls, refused := 0, 0
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "pacto_check", Arguments: map[string]any{"path": "svc"}})
		if err != nil {
			close(stop)
			<-swapped
			t.Fatal(err)
		}
		calls++
		raw, _ := json.Marshal(res)
		if strings.Contains(string(raw), marker) {
			close(stop)
			<-swapped
			t.Fatalf("call %d read outside the workspace: %s", calls, raw)
		}
		if out := structured(t, res); out["valid"] != true {
			refused++
		}
	}
	close(stop)
	swaps := <-swapped
	t.Logf("%d calls, %d swaps, %d calls failed closed while a swap was in place", calls, swaps, refused)
	if swaps == 0 {
		t.Fatal("no swap happened: the race was not exercised")
	}
}
