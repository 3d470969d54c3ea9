//go:build !sidecaronly

package main

import (
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kubepact/kubepact/test/demoservice"
)

func TestMCPWithBundle(t *testing.T) {
	demo := httptest.NewServer(demoservice.New(nil))
	t.Cleanup(demo.Close)
	stderr := &syncBuffer{}
	cmd := exec.Command(kubepactBin, "mcp", filepath.Join(repoRoot(t), "examples", "bundles", "catalog"), "--base-url", demo.URL, "--workspace", t.TempDir())
	cmd.Stderr = stderr
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "KUBEPACT_CACHE_DIR="+t.TempDir())
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "v0"}, nil).Connect(t.Context(), &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, stderr)
	}
	t.Cleanup(func() { _ = cs.Close() })
	var names []string
	for tl, err := range cs.Tools(t.Context(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, tl.Name)
	}
	for _, want := range []string{"pacto_check", "pacto_skill", "pacto_withheld", "listProducts", "getProduct"} {
		if !slices.Contains(names, want) {
			t.Errorf("tools %v lack %s", names, want)
		}
	}
	res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "getHealth", Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Errorf("getHealth: %v %+v", err, res)
	}
	if !strings.Contains(stderr.String(), `kubepact mcp: skipped 4 mutating operation(s) in interface "http" (--allow-writes exposes them)`) {
		t.Errorf("stderr lacks the withheld count:\n%s", stderr)
	}
}
