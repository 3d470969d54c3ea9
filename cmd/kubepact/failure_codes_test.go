//go:build !sidecaronly

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kubepact/kubepact/test/freeport"
	"github.com/kubepact/kubepact/test/testregistry"
)

// TestFailureCodesAgreeAcrossSurfaces: one failure gets one code whether
// the user meets it in `kubepact check -o json` or in an MCP answer (the
// reason of a pacto://catalog root, read by a real client over stdio):
// the registry's 404 and 401, a registry nothing listens at, and local
// paths that name nothing, a file, or a directory without pacto.yaml.
func TestFailureCodesAgreeAcrossSurfaces(t *testing.T) {
	reg := testregistry.New(t, nil)
	locked := testregistry.New(t, &testregistry.Options{Username: "robot", Password: "s3cret"})
	file := filepath.Join(t.TempDir(), "pacto.yaml")
	if err := os.WriteFile(file, []byte("pactoVersion: \"2.0\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct{ name, root, want string }{
		{"registry 404", "oci://" + reg.Host + "/acme/nothing:1.0.0", "NOT_FOUND"},
		{"registry 401", "oci://" + locked.Host + "/acme/orders:1.0.0", "AUTH_FAILED"},
		{"nothing listens", fmt.Sprintf("oci://127.0.0.1:%d/acme/orders:1.0.0", freeport.Port(t)), "UNAVAILABLE"},
		{"no such directory", filepath.Join(t.TempDir(), "nope"), "NOT_FOUND"},
		{"a file, not a directory", file, "INVALID_REFERENCE"},
		{"no pacto.yaml", t.TempDir(), "BUNDLE_UNREADABLE"},
	}

	args := []string{"mcp", "--plain-http", "--workspace", t.TempDir()}
	for _, c := range cases {
		args = append(args, "--root", c.root)
	}
	stderr := &syncBuffer{}
	cmd := exec.Command(kubepactBin, args...)
	cmd.Stderr = stderr
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "KUBEPACT_CACHE_DIR="+t.TempDir())
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "v0"}, nil).Connect(t.Context(), &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, stderr)
	}
	t.Cleanup(func() { _ = cs.Close() })
	sum := readCatalog(t, cs, stderr, func(s *catalogSummary) bool { return !s.resolving() })
	if len(sum.Roots) != len(cases) {
		t.Fatalf("%d roots, want %d: %+v\n%s", len(sum.Roots), len(cases), sum.Roots, stderr)
	}

	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := sum.Roots[i]
			mcpCode := ""
			if root.Reason != nil {
				mcpCode = root.Reason.Code
			}
			out, stderr, code := runKubepact(t, "check", c.root, "--plain-http", "-o", "json")
			var rep checkReport
			if err := json.Unmarshal([]byte(out), &rep); err != nil || code != 2 || len(rep.Errors) != 1 {
				t.Fatalf("check: exit %d, %q (%v)\n%s", code, out, err, stderr)
			}
			if checkCode := rep.Errors[0].Code; root.Resolved || mcpCode != c.want || checkCode != c.want {
				t.Errorf("catalog root %q, check %q; want both %s", mcpCode, checkCode, c.want)
			}
		})
	}
}
