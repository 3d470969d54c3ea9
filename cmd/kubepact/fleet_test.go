//go:build !sidecaronly

package main

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kubepact/kubepact/test/testregistry"
)

// TestFleetOCISourceUsesRegistryFlags: an --oci fleet source on a
// plain-HTTP registry behind credentials is reached with the same
// --plain-http and --registry-secret-file that every other consumer uses
// (they used to hold only for the authoring tools, and the source showed
// as unavailable with 0 services).
func TestFleetOCISourceUsesRegistryFlags(t *testing.T) {
	reg := testregistry.New(t, &testregistry.Options{Username: "ci", Password: "s3cret"})
	secret := filepath.Join(t.TempDir(), ".dockerconfigjson")
	auth := base64.StdEncoding.EncodeToString([]byte("ci:s3cret"))
	if err := os.WriteFile(secret, fmt.Appendf(nil, `{"auths":{%q:{"auth":%q}}}`, reg.Host, auth), 0o600); err != nil {
		t.Fatal(err)
	}
	ref := "oci://" + reg.Host + "/examples/payments:3.0.2"
	if _, stderr, code := runKubepact(t, "push", filepath.Join(repoRoot(t), "examples", "bundles", "payments"), ref, "--plain-http", "--registry-secret-file", secret); code != 0 {
		t.Fatalf("push: exit %d: %s", code, stderr)
	}
	stderr := &syncBuffer{}
	cmd := exec.Command(kubepactBin, "mcp", "--families", "", "--fleet", "--oci", ref, "--plain-http", "--registry-secret-file", secret, "--workspace", t.TempDir())
	cmd.Stderr = stderr
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "KUBEPACT_CACHE_DIR="+t.TempDir())
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "v0"}, nil).Connect(t.Context(), &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, stderr)
	}
	t.Cleanup(func() { _ = cs.Close() })
	res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "pacto_fleet_search", Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	out, _ := res.StructuredContent.(map[string]any)
	if out == nil || out["total"] != float64(1) {
		t.Fatalf("pacto_fleet_search over the --oci source: %v\n%s", res.StructuredContent, stderr)
	}
	meta := out["meta"].(map[string]any)
	src := meta["sources"].([]any)[0].(map[string]any)
	if src["id"] != "oci" || src["status"] != "available" || meta["completeness"] != "complete" {
		t.Errorf("the oci source is %v, completeness %v; want available and complete", src, meta["completeness"])
	}
}

// startFleet runs `kubepact mcp --fleet ARGS…` over stdio and returns the
// client session and the server's stderr.
func startFleet(t *testing.T, args ...string) (*sdk.ClientSession, *syncBuffer) {
	t.Helper()
	stderr := &syncBuffer{}
	cmd := exec.Command(kubepactBin, append([]string{"mcp", "--families", "", "--fleet", "--workspace", t.TempDir()}, args...)...)
	cmd.Stderr = stderr
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "KUBEPACT_CACHE_DIR="+t.TempDir())
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	t.Cleanup(cancel)
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "v0"}, nil).Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, stderr)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs, stderr
}

func fleetMeta(t *testing.T, cs *sdk.ClientSession) map[string]any {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "pacto_fleet_status", Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	out, _ := res.StructuredContent.(map[string]any)
	if out == nil {
		t.Fatalf("pacto_fleet_status: %s", res.Content)
	}
	return out["meta"].(map[string]any)
}

// TestFleetTargetStateSizedForTheFleet: a target-state file of 6,000
// targets (over the old 5,000 bound, which refused it whole and logged
// only "targets: 0") is read.
func TestFleetTargetStateSizedForTheFleet(t *testing.T) {
	var b strings.Builder
	b.WriteString("schemaVersion: pacto.dev/fleet-targets/v1\ntargets:\n")
	for i := range 6000 {
		fmt.Fprintf(&b, "  - {scope: c%d, kind: kubernetes-workload, name: ns/svc-%d, service: svc-%d, compliance: Compliant}\n", i%5, i, i%500)
	}
	file := filepath.Join(t.TempDir(), "targets.yaml")
	if err := os.WriteFile(file, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	cs, stderr := startFleet(t, "--target-state", file)
	meta := fleetMeta(t, cs)
	src := meta["sources"].([]any)[0].(map[string]any)
	if src["status"] != "available" || src["targetCount"] != float64(6000) {
		t.Errorf("6,000 targets: source %v\n%s", src, stderr)
	}
}

// TestOptionErrorsNameFlags: the mcp library's errors name option fields
// (an operator fills them from a resource); the CLI prints its flags.
func TestOptionErrorsNameFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"mcp", "--fleet"}, []string{"--fleet needs at least one source", "--local", "--oci", "--target-state"}},
		{[]string{"mcp", "--local", "."}, []string{"--local, --oci and --target-state are fleet sources", "--fleet"}},
		{[]string{"mcp", "-t", "sse"}, []string{`--transport "sse"`}},
		{[]string{"mcp", "--registry-secret-file", "/nonexistent/secret"}, []string{"--registry-secret-file"}},
	} {
		_, stderr, code := runKubepact(t, tc.args...)
		if code != 2 {
			t.Errorf("%v: exit %d, want 2", tc.args, code)
		}
		for _, w := range tc.want {
			if !strings.Contains(stderr, w) {
				t.Errorf("%v: stderr %q lacks %q", tc.args, stderr, w)
			}
		}
		for _, field := range []string{"Fleet.", "Transport", "SecretFile"} {
			if strings.Contains(stderr, field) {
				t.Errorf("%v: stderr %q names the option field %s, not the flag", tc.args, stderr, field)
			}
		}
	}
}

// TestCapabilityErrorsNameFlags: openapitools.Project names option fields;
// each command prints its own flag (--base-url for mcp).
func TestCapabilityErrorsNameFlags(t *testing.T) {
	catalog := filepath.Join(repoRoot(t), "examples", "bundles", "catalog")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"mcp", catalog, "--base-url", "/v1"}, "--base-url"},
		{[]string{"mcp", catalog, "--auth", "bearer=x"}, "credentials (--auth, --auth-file) need an explicit base URL (--base-url)"},
		{[]string{"mcp", catalog, "--allow-operations", "nope"}, `--allow-operations: no operation is named "nope"`},
	} {
		_, stderr, code := runKubepact(t, append(tc.args, "--workspace", t.TempDir())...)
		if code != 2 || !strings.Contains(stderr, tc.want) || strings.Contains(stderr, "BaseURL") {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
}
