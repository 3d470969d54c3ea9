//go:build !sidecaronly

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kubepact/kubepact/test/freeport"
)

// TestDemo runs `make demo` — the README's first set-up command — as a
// user does (only the binaries' directory and the ports moved), and uses
// what it serves as an agent would: a service tool, a payload check of
// its answer, a fleet tool, an authoring tool and the catalog of the
// bundles it pushed to its own registry, all on the one server it starts,
// which says every family is on. Before it builds, it says what
// and how long a first build takes; what it builds is a release build.
func TestDemo(t *testing.T) {
	binDir := t.TempDir()
	port, servicePort, registryPort := freeport.Port(t), freeport.Port(t), freeport.Port(t)
	grpcMCPPort, grpcPort := freeport.Port(t), freeport.Port(t)
	cmd := exec.Command("make", "demo", "LOCALBIN="+binDir)
	cmd.Dir = repoRoot(t)
	// As a user's shell runs it: not as a sub-make of `make test`, whose
	// MAKEFLAGS and MAKELEVEL would make it print "Entering directory".
	cmd.Env = append(userEnv(), fmt.Sprintf("DEMO_PORT=%d", port), fmt.Sprintf("SERVICE_PORT=%d", servicePort),
		fmt.Sprintf("REGISTRY_PORT=%d", registryPort), fmt.Sprintf("DEMO_GRPC_PORT=%d", grpcMCPPort), fmt.Sprintf("GRPC_PORT=%d", grpcPort),
		"KUBEPACT_CACHE_DIR="+t.TempDir())
	var out syncBuffer
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
			t.Logf("make demo output:\n%s", out.String())
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
		if i == 6000 {
			t.Fatalf("the demo did not serve %s: %v", url, err)
		}
	}
	defer cs.Close()

	said := out.String()
	if first, _, _ := strings.Cut(said, "\n"); !strings.HasPrefix(first, "== Building bin/kubepact, bin/demoservice, bin/grpcdemo and bin/demoregistry") ||
		!strings.Contains(first, "The first build compiles every dependency: about ") {
		t.Errorf("make demo does not start by saying what it builds and how long a first build takes; its first line: %q", first)
	}
	for _, prog := range []string{"kubepact", "demoservice", "grpcdemo", "demoregistry"} {
		assertReleaseBinary(t, filepath.Join(binDir, prog))
	}
	for _, name := range []string{"catalog", "orders", "payments"} {
		if want := fmt.Sprintf("oci://127.0.0.1:%d/kubepact-examples/%s:", registryPort, name); !strings.Contains(said, want) {
			t.Errorf("make demo did not push %s to its registry (%s…)", name, want)
		}
	}

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
	// The payload family: the service's own answer, checked against its
	// contract, as an agent would before acting on it.
	body, _ := products.StructuredContent.(map[string]any)["body"]
	valid := call("pacto_validate_payload", map[string]any{"service": "catalog", "operation": "listProducts", "kind": "response", "status": "200", "payload": body})
	if sc, _ := valid.StructuredContent.(map[string]any); sc["valid"] != true {
		t.Errorf("pacto_validate_payload of the demo service's listProducts answer: %v", valid.StructuredContent)
	}
	// Every family is on, as README and make help say.
	info := call("pacto_server_info", map[string]any{})
	var served struct {
		Families []struct {
			Name    string `json:"name"`
			Enabled bool   `json:"enabled"`
		} `json:"families"`
	}
	raw, _ := json.Marshal(info.StructuredContent)
	if err := json.Unmarshal(raw, &served); err != nil {
		t.Fatal(err)
	}
	var off []string
	for _, f := range served.Families {
		if !f.Enabled {
			off = append(off, f.Name)
		}
	}
	if len(served.Families) != 5 || len(off) > 0 {
		t.Errorf("the demo serves families %+v; want all five on (off: %v)", served.Families, off)
	}
	status := call("pacto_fleet_status", map[string]any{})
	if !strings.Contains(fmt.Sprint(status.StructuredContent), "shop%2Forders") {
		t.Errorf("pacto_fleet_status does not report the non-compliant orders target: %v", status.StructuredContent)
	}
	check := call("pacto_check", map[string]any{"path": "payments"})
	if sc, _ := check.StructuredContent.(map[string]any); sc["valid"] != true {
		t.Errorf("pacto_check payments in the demo workspace: %v", check.StructuredContent)
	}

	// The catalog: orders and the closure of its dependencies, every one
	// resolved from the demo's own registry.
	res, err := cs.ReadResource(t.Context(), &sdk.ReadResourceParams{URI: "pacto://catalog/closure"})
	if err != nil || len(res.Contents) != 1 {
		t.Fatalf("reading pacto://catalog/closure: %v %v", err, res)
	}
	var closure struct {
		Meta struct {
			Completeness string `json:"completeness"`
		} `json:"meta"`
		Revisions []struct {
			Service struct{ Domain, Name string }   `json:"service"`
			Content struct{ Scheme, Digest string } `json:"content"`
		} `json:"revisions"`
	}
	if err := json.Unmarshal([]byte(res.Contents[0].Text), &closure); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range closure.Revisions {
		names = append(names, r.Service.Name)
		if r.Service.Domain != fmt.Sprintf("127.0.0.1:%d/kubepact-examples", registryPort) || r.Content.Scheme != "oci" {
			t.Errorf("revision %s is %s from %s, want oci from the demo registry", r.Service.Name, r.Content.Scheme, r.Service.Domain)
		}
	}
	slices.Sort(names)
	if closure.Meta.Completeness != "complete" || strings.Join(names, ",") != "catalog,orders,payments" {
		t.Errorf("the demo's catalog: %s with %v; want complete with catalog, orders and payments", closure.Meta.Completeness, names)
	}

	demoGRPC(t, fmt.Sprintf("http://127.0.0.1:%d/mcp", grpcMCPPort), exited)
}

// demoGRPC uses the demo's second server as an agent would: the gRPC
// example's tools are listed (reads only: the writes need --allow-writes)
// and a call reaches the demo Inventory service over h2c, its 64-bit
// quantity a string as the proto3 JSON mapping has it.
func demoGRPC(t *testing.T, url string, exited <-chan struct{}) {
	t.Helper()
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
			t.Fatalf("the demo's gRPC server did not serve %s: %v", url, err)
		}
	}
	defer cs.Close()
	tools, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
		if tl.Name == "Inventory_GetItem" && (tl.Annotations == nil || !tl.Annotations.ReadOnlyHint) {
			t.Errorf("Inventory_GetItem is not read-only: %+v", tl.Annotations)
		}
	}
	slices.Sort(names)
	if !slices.Contains(names, "Inventory_GetItem") || !slices.Contains(names, "Inventory_ListItems") || slices.Contains(names, "Inventory_DeleteItem") {
		t.Errorf("the demo's gRPC server lists %v; want Inventory_GetItem and Inventory_ListItems, and no write", names)
	}
	res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "Inventory_GetItem", Arguments: map[string]any{"sku": "LMP-3"}})
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(res.StructuredContent)
	if res.IsError || !strings.Contains(string(raw), `"sku":"LMP-3"`) || !strings.Contains(string(raw), `"quantity":"9007199254740993"`) {
		t.Errorf("Inventory_GetItem through the demo: isError %v, %s; want the demo service's item LMP-3", res.IsError, raw)
	}
}

// userEnv is this process's environment without what a parent make
// passes to the commands it runs.
func userEnv() []string {
	return slices.DeleteFunc(os.Environ(), func(kv string) bool {
		name, _, _ := strings.Cut(kv, "=")
		return name == "MAKEFLAGS" || name == "MAKELEVEL" || name == "MFLAGS" || name == "MAKEOVERRIDES"
	})
}
