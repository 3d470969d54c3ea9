package mcp

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kubepact/kubepact/bundle"
	"github.com/kubepact/kubepact/bundle/archive"
	"github.com/kubepact/kubepact/internal/openapitools"
	"github.com/kubepact/kubepact/test/largeapi"
)

func listToolsByName(t testing.TB, cs *sdk.ClientSession) map[string]*sdk.Tool {
	t.Helper()
	out := map[string]*sdk.Tool{}
	for tl, err := range cs.Tools(t.Context(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		out[tl.Name] = tl
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// TestDiscoveryMode drives the discovery tools over the catalog bundle
// with writes allowed: search, describe, the read call, a hostile read
// call naming a write, and the confirmed write call.
func TestDiscoveryMode(t *testing.T) {
	svc := newDemoCounter(t)
	copts := &openapitools.Options{BaseURL: svc.url, AllowWrites: true, ToolMode: openapitools.ToolModeDiscover, ToolPins: []string{"getHealth"}}
	s := capabilityServer(t, "../examples/bundles/catalog", copts, nil)
	answers := []string{}
	cs := elicitingClient(t, s, "2025-11-25", func(*sdk.ElicitRequest) string {
		a := answers[0]
		answers = answers[1:]
		return a
	})

	tools := listToolsByName(t, cs)
	if diff := cmp.Diff(sortedKeys(tools), []string{"getHealth", "pacto_call_read", "pacto_call_write", "pacto_describe_operations", "pacto_search_operations", "pacto_server_info", "pacto_skill", "pacto_withheld"}); diff != "" {
		t.Errorf("tools (-got +want):\n%s", diff)
	}
	if a := tools["pacto_call_read"].Annotations; !a.ReadOnlyHint || *a.DestructiveHint || !a.IdempotentHint || *a.OpenWorldHint {
		t.Errorf("pacto_call_read annotations %+v; want read-only, not destructive, idempotent, closed world (loopback)", a)
	}
	if a := tools["pacto_call_write"].Annotations; a.ReadOnlyHint || !*a.DestructiveHint || a.IdempotentHint {
		t.Errorf("pacto_call_write annotations %+v; want destructive, not read-only, not idempotent", a)
	}
	if d := tools["pacto_search_operations"].Description; !strings.Contains(d, "Catalog") || !strings.Contains(d, "7 operations") {
		t.Errorf("the search tool's description does not name the API and its size: %s", d)
	}
	instr := cs.InitializeResult().Instructions
	for _, want := range []string{"offered through discovery", "--tool-mode discover", "pacto_call_write", "Also offered as tools of their own: getHealth"} {
		if !strings.Contains(instr, want) {
			t.Errorf("instructions lack %q:\n%s", want, instr)
		}
	}

	// Search ranks, filters and says which tool calls each hit.
	found := structured(t, callTool(t, cs, "pacto_search_operations", map[string]any{"query": "list the products", "limit": 3}))
	ops, _ := found["operations"].([]any)
	if len(ops) == 0 || ops[0].(map[string]any)["name"] != "listProducts" || ops[0].(map[string]any)["callWith"] != "pacto_call_read" {
		t.Fatalf("search for products: %v", found)
	}
	writes := structured(t, callTool(t, cs, "pacto_search_operations", map[string]any{"access": "write", "limit": 50}))
	for _, o := range writes["operations"].([]any) {
		if o.(map[string]any)["callWith"] != "pacto_call_write" {
			t.Errorf("access=write found %v", o)
		}
	}
	if got := writes["matched"]; got != float64(4) {
		t.Errorf("access=write matched %v; want the 4 write operations", got)
	}
	if e := toolErr(t, callTool(t, cs, "pacto_search_operations", map[string]any{"limit": 500})); e["field"] != "limit" {
		t.Errorf("limit 500: %v", e)
	}

	// Describe gives exactly the schema the operation's own tool lists.
	desc := structured(t, callTool(t, cs, "pacto_describe_operations", map[string]any{"names": []string{"getProduct"}}))
	all := capabilityServer(t, "../examples/bundles/catalog", &openapitools.Options{BaseURL: svc.url, AllowWrites: true}, nil)
	direct := listToolsByName(t, connect(t.Context(), t, all))["getProduct"]
	wantIn, _ := json.Marshal(direct.InputSchema)
	wantOut, _ := json.Marshal(direct.OutputSchema)
	op := desc["operations"].([]any)[0].(map[string]any)
	gotIn, _ := json.Marshal(op["inputSchema"])
	gotOut, _ := json.Marshal(op["outputSchema"])
	if string(gotIn) != string(wantIn) || string(gotOut) != string(wantOut) {
		t.Errorf("describe getProduct:\ninput  %s\nwant   %s\noutput %s\nwant   %s", gotIn, wantIn, gotOut, wantOut)
	}
	if e := toolErr(t, callTool(t, cs, "pacto_describe_operations", map[string]any{"names": []string{"getProdut"}})); e["code"] != "NOT_FOUND" || e["didYouMean"] != "getProduct" {
		t.Errorf("describe a misspelt name: %v", e)
	}

	// The read call.
	res := callTool(t, cs, "pacto_call_read", map[string]any{"operation": "getProduct", "arguments": map[string]any{"productId": "p-0001"}})
	if res.IsError || structured(t, res)["status"] != float64(200) {
		t.Fatalf("pacto_call_read getProduct: %s", text(res))
	}
	// Its arguments are checked as the direct tool checks them.
	res = callTool(t, cs, "pacto_call_read", map[string]any{"operation": "getProduct", "arguments": map[string]any{"productId": "p-0001", "extra": 1}})
	if e := toolErr(t, res); e["code"] != CodeInvalidArgument || !strings.Contains(text(res), "extra") {
		t.Errorf("an unknown argument through pacto_call_read: %s", text(res))
	}
	// A hostile caller asks the read tool to write: refused, nothing sent.
	for _, name := range []string{"createProduct", "deleteProduct"} {
		res = callTool(t, cs, "pacto_call_read", map[string]any{"operation": name, "arguments": map[string]any{"productId": "p-0001", "body": map[string]any{}}})
		if e := toolErr(t, res); e["code"] != CodeInvalidArgument || e["reason"] != "WRITE_OPERATION" || !strings.Contains(text(res), "pacto_call_write") {
			t.Errorf("pacto_call_read %s: %s", name, text(res))
		}
	}
	if n := svc.count(http.MethodPost) + svc.count(http.MethodDelete); n != 0 {
		t.Fatalf("the service received %d write(s) through the read tool", n)
	}
	// A discovered operation is not a tool of its own.
	if e := toolErr(t, callTool(t, cs, "listProducts", map[string]any{})); e["code"] != CodeToolWithheld || e["reason"] != withheldDiscovery {
		t.Errorf("listProducts called directly: %v", e)
	}

	// The write call asks the user, as deleteProduct's own tool does.
	answers = []string{"decline", "accept"}
	res = callTool(t, cs, "pacto_call_write", map[string]any{"operation": "deleteProduct", "arguments": map[string]any{"productId": "p-0001"}})
	if e := toolErr(t, res); e["code"] != CodeNotConfirmed || svc.count(http.MethodDelete) != 0 {
		t.Fatalf("a declined delete: %s (deletes sent: %d)", text(res), svc.count(http.MethodDelete))
	}
	res = callTool(t, cs, "pacto_call_write", map[string]any{"operation": "deleteProduct", "arguments": map[string]any{"productId": "p-0001"}})
	if res.IsError || svc.count(http.MethodDelete) != 1 {
		t.Fatalf("an accepted delete: %s (deletes sent: %d)", text(res), svc.count(http.MethodDelete))
	}
	if e := toolErr(t, callTool(t, cs, "pacto_call_write", map[string]any{"operation": "listProducts"})); e["reason"] != "READ_OPERATION" {
		t.Errorf("pacto_call_write listProducts: %v", e)
	}
}

// TestDiscoveryConfirmStateless: on protocol 2026-07-28 the write call's
// confirmation is the input-required retry, which carries everything it
// needs (no session state).
func TestDiscoveryConfirmStateless(t *testing.T) {
	svc := newDemoCounter(t)
	s := capabilityServer(t, "../examples/bundles/catalog", &openapitools.Options{BaseURL: svc.url, AllowWrites: true, ToolMode: openapitools.ToolModeDiscover}, nil)
	cs := elicitingClient(t, s, "2026-07-28", func(*sdk.ElicitRequest) string { return "accept" })
	res := callTool(t, cs, "pacto_call_write", map[string]any{"operation": "deleteProduct", "arguments": map[string]any{"productId": "p-0002"}})
	if res.IsError || svc.count(http.MethodDelete) != 1 {
		t.Fatalf("a confirmed delete on 2026-07-28: %s (deletes sent: %d)", text(res), svc.count(http.MethodDelete))
	}
}

// TestDiscoveryWritesOff: without --allow-writes there is no write call
// tool, and search still finds the write operations with why they are
// withheld.
func TestDiscoveryWritesOff(t *testing.T) {
	svc := newDemoCounter(t)
	s := capabilityServer(t, "../examples/bundles/catalog", &openapitools.Options{BaseURL: svc.url, ToolMode: openapitools.ToolModeDiscover}, nil)
	cs := connect(t.Context(), t, s)
	if tools := listToolsByName(t, cs); tools["pacto_call_write"] != nil {
		t.Error("pacto_call_write is offered without --allow-writes")
	}
	found := structured(t, callTool(t, cs, "pacto_search_operations", map[string]any{"query": "delete a product"}))
	first := found["operations"].([]any)[0].(map[string]any)
	if first["name"] != "deleteProduct" || first["withheld"].(map[string]any)["code"] != openapitools.WithheldWritesNotAllowed || first["callWith"] != nil {
		t.Errorf("search for a withheld write: %v", first)
	}
	res := callTool(t, cs, "pacto_call_read", map[string]any{"operation": "deleteProduct", "arguments": map[string]any{"productId": "p-0001"}})
	if e := toolErr(t, res); e["code"] != CodeToolWithheld || e["reason"] != openapitools.WithheldWritesNotAllowed || !strings.Contains(text(res), "--allow-writes") {
		t.Errorf("a withheld write through pacto_call_read: %s", text(res))
	}
	// A read-only server with writes allowed offers no write either.
	ro := capabilityServer(t, "../examples/bundles/catalog", &openapitools.Options{BaseURL: svc.url, AllowWrites: true, ToolMode: openapitools.ToolModeDiscover}, &Options{ReadOnly: true})
	rcs := connect(t.Context(), t, ro)
	if tools := listToolsByName(t, rcs); tools["pacto_call_write"] != nil {
		t.Error("a read-only server offers pacto_call_write")
	}
	if e := toolErr(t, callTool(t, rcs, "pacto_call_read", map[string]any{"operation": "deleteProduct", "arguments": map[string]any{"productId": "p-0001"}})); e["reason"] != withheldReadOnly {
		t.Errorf("a write on a read-only server: %v", e)
	}
	if svc.count(http.MethodDelete) != 0 {
		t.Error("a delete reached the service")
	}
}

// TestDiscoveryAuto: auto lists a small API's tools one by one and says
// so; it switches to discovery above the threshold.
func TestDiscoveryAuto(t *testing.T) {
	s := capabilityServer(t, "../examples/bundles/catalog", &openapitools.Options{BaseURL: "http://127.0.0.1:1", ToolMode: openapitools.ToolModeAuto}, nil)
	tools := listToolsByName(t, connect(t.Context(), t, s))
	if tools["listProducts"] == nil || tools["pacto_search_operations"] != nil {
		t.Errorf("auto on 3 operations: %v", sortedKeys(tools))
	}
}

// githubServer serves GitHub's spec in discovery mode, writes allowed.
func githubServer(t testing.TB, mode string) *Server {
	t.Helper()
	dir := largeapi.GitHubBundleDir(t)
	b, err := bundle.LoadDir(dir, &bundle.LoadOptions{Limits: archive.Limits{MaxFileBytes: 32 << 20, MaxTotalBytes: 64 << 20}})
	if err != nil {
		t.Fatal(err)
	}
	c, err := openapitools.Project(t.Context(), b, &openapitools.Options{AllowWrites: true, ToolMode: mode, MaxSpecBytes: 32 << 20})
	if err != nil {
		t.Fatal(err)
	}
	return newTestServer(t, &Options{Families: []Family{FamilyCapability}, Capability: &CapabilityBundle{Bundle: b, Capability: c}})
}

// TestGitHubDiscoveryListSize: in discovery mode GitHub's 1,223
// operations cost at most 1,500 cl100k tokens of tools/list, and auto
// chooses discovery for it. It also reports what the output schemas,
// which discovery mode leaves out of tools/list, would add.
func TestGitHubDiscoveryListSize(t *testing.T) {
	s := githubServer(t, openapitools.ToolModeAuto)
	cs := connect(t.Context(), t, s)
	res, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(res)
	listed := tokens(t, string(raw))
	var names []string
	withOutputs := listed
	for _, tl := range res.Tools {
		one, _ := json.Marshal(tl)
		in, _ := json.Marshal(tl.InputSchema)
		names = append(names, fmt.Sprintf("%s %d tokens (description %d, input %d)", tl.Name, tokens(t, string(one)), tokens(t, tl.Description), tokens(t, string(in))))
		if st := s.tools[tl.Name].sdkTool(); st.OutputSchema != nil {
			out, _ := json.Marshal(st.OutputSchema)
			withOutputs += tokens(t, `,"outputSchema":`+string(out))
		}
	}
	t.Logf("discovery mode on GitHub's spec: %d tools (%s); tools/list %d bytes, %d cl100k tokens (bytes/4: %d); with the output schemas %d tokens",
		len(res.Tools), strings.Join(names, ", "), len(raw), listed, len(raw)/4, withOutputs)
	if listed > 1500 {
		t.Errorf("tools/list is %d tokens; the budget is 1,500", listed)
	}
	if !strings.Contains(cs.InitializeResult().Instructions, "--tool-mode auto") {
		t.Errorf("the instructions do not say auto chose discovery:\n%s", cs.InitializeResult().Instructions)
	}
	found := structured(t, callTool(t, cs, "pacto_search_operations", map[string]any{"query": "list the pull requests of a repository", "limit": 3}))
	t.Logf("search: %v", found["operations"])
}

// TestDiscoveryHostileInputs: sizes meant to burn CPU or memory are
// refused in words; the same query on two servers (replicas) gives the
// same answer.
func TestDiscoveryHostileInputs(t *testing.T) {
	copts := &openapitools.Options{BaseURL: "http://127.0.0.1:1", ToolMode: openapitools.ToolModeDiscover}
	a := connect(t.Context(), t, capabilityServer(t, "../examples/bundles/catalog", copts, nil))
	b := connect(t.Context(), t, capabilityServer(t, "../examples/bundles/catalog", copts, nil))
	huge := strings.Repeat("products ", 200_000)
	if e := toolErr(t, callTool(t, a, "pacto_search_operations", map[string]any{"query": huge})); e["field"] != "query" || !strings.Contains(e["message"].(string), "at most 1024") {
		t.Errorf("a 1.8 MB query: %v", e)
	}
	many := make([]string, 1000)
	for i := range many {
		many[i] = "getProduct"
	}
	if e := toolErr(t, callTool(t, a, "pacto_describe_operations", map[string]any{"names": many})); e["field"] != "names" {
		t.Errorf("1,000 names to describe: %v", e)
	}
	if e := toolErr(t, callTool(t, a, "pacto_call_read", map[string]any{"operation": strings.Repeat("x", 100_000)})); e["code"] != "NOT_FOUND" || len(e["message"].(string)) > 300 {
		t.Errorf("a 100 kB operation name: %v", e)
	}
	if e := toolErr(t, callTool(t, a, "pacto_search_operations", map[string]any{"tag": "nope"})); e["code"] != "NOT_FOUND" {
		t.Errorf("an unknown tag: %v", e)
	}
	args := map[string]any{"query": "get a product by its id", "limit": 5}
	ra, _ := json.Marshal(structured(t, callTool(t, a, "pacto_search_operations", args)))
	rb, _ := json.Marshal(structured(t, callTool(t, b, "pacto_search_operations", args)))
	if string(ra) != string(rb) {
		t.Errorf("two servers answer the same search differently:\n%s\n%s", ra, rb)
	}
}
