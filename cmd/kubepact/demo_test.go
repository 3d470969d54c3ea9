package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestDemo runs hack/demo.sh — what `make demo`, the README's first set-up
// command, runs — and uses it as an agent would: a service tool, a fleet
// tool and an authoring tool on the one server it starts.
func TestDemo(t *testing.T) {
	binDir := filepath.Dir(kubepactBin)
	build := exec.CommandContext(t.Context(), "go", "build", "-o", filepath.Join(binDir, "demoservice"), "../../hack/demoservice")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the demo service: %v\n%s", err, out)
	}
	port, servicePort := freePort(t), freePort(t)
	cmd := exec.Command("bash", filepath.Join(repoRoot(t), "hack", "demo.sh"))
	cmd.Env = append(os.Environ(), "BIN="+binDir, fmt.Sprintf("DEMO_PORT=%d", port), fmt.Sprintf("SERVICE_PORT=%d", servicePort),
		"KUBEPACT_CACHE_DIR="+t.TempDir())
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGINT)
		select {
		case <-exited:
		case <-time.After(15 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
		}
		if t.Failed() {
			t.Logf("demo output:\n%s", out.String())
		}
	})

	url := fmt.Sprintf("http://127.0.0.1:%d/mcp", port)
	var cs *sdk.ClientSession
	for i := 0; ; i++ {
		var err error
		cs, err = sdk.NewClient(&sdk.Implementation{Name: "demo-test", Version: "v0"}, nil).Connect(t.Context(),
			&sdk.StreamableClientTransport{Endpoint: url, MaxRetries: -1}, nil)
		if err == nil {
			break
		}
		select {
		case <-exited:
			t.Fatalf("the demo exited before serving %s", url)
		case <-time.After(100 * time.Millisecond):
		}
		if i == 600 {
			t.Fatalf("the demo did not serve %s: %v", url, err)
		}
	}
	defer cs.Close()

	call := func(name string, args map[string]any) *sdk.CallToolResult {
		t.Helper()
		res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if res.IsError {
			t.Fatalf("%s: tool error %v", name, res.StructuredContent)
		}
		return res
	}
	products := call("listProducts", map[string]any{"limit": 2})
	if sc, _ := products.StructuredContent.(map[string]any); sc["status"] != float64(200) {
		t.Errorf("listProducts through the demo: %v", products.StructuredContent)
	}
	status := call("pacto_fleet_status", map[string]any{})
	if !strings.Contains(fmt.Sprint(status.StructuredContent), "shop%2Forders") {
		t.Errorf("pacto_fleet_status does not report the non-compliant orders target: %v", status.StructuredContent)
	}
	check := call("pacto_check", map[string]any{"path": "payments"})
	if sc, _ := check.StructuredContent.(map[string]any); sc["valid"] != true {
		t.Errorf("pacto_check payments in the demo workspace: %v", check.StructuredContent)
	}
}
