package mcp

import (
	"net"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kubepact/kubepact/bundle"
	"github.com/kubepact/kubepact/internal/grpctools"
	"github.com/kubepact/kubepact/internal/openapitools"
	"github.com/kubepact/kubepact/test/grpcdemo"
)

const grpcBundle = "../examples/grpc/inventory"

// grpcServer serves the gRPC test bundle's tools against a real grpc-go
// service on loopback (test/grpcdemo).
func grpcServer(t testing.TB, gopts grpctools.Options) (*Server, *grpcdemo.Server) {
	t.Helper()
	b, err := bundle.LoadDir(grpcBundle, nil)
	if err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	svc, err := grpcdemo.Serve(t.Context(), lis, b.FS, "interfaces/inventory/v1/inventory.proto")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(svc.Stop)
	c, err := openapitools.Project(t.Context(), b, nil)
	if err != nil {
		t.Fatal(err)
	}
	gopts.Target = svc.Addr
	g, err := grpctools.Project(t.Context(), b, &gopts)
	if err != nil {
		t.Fatal(err)
	}
	return newTestServer(t, &Options{Families: []Family{FamilyCapability}, Capability: &CapabilityBundle{Bundle: b, Capability: c, GRPC: g}}), svc
}

func TestGRPCToolsThroughMCP(t *testing.T) {
	s, svc := grpcServer(t, grpctools.Options{MaxStreamMessages: 4})
	cs := connect(t.Context(), t, s)
	tools := map[string]*sdk.Tool{}
	var names []string
	for tl, err := range cs.Tools(t.Context(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		tools[tl.Name] = tl
		names = append(names, tl.Name)
	}
	slices.Sort(names)
	if diff := cmp.Diff(names, []string{"Inventory_GetItem", "Inventory_ListItems", "pacto_server_info", "pacto_skill", "pacto_withheld"}); diff != "" {
		t.Errorf("tools (-got +want):\n%s", diff)
	}
	if ann := tools["Inventory_GetItem"].Annotations; !ann.ReadOnlyHint || *ann.DestructiveHint || !ann.IdempotentHint || *ann.OpenWorldHint {
		t.Errorf("GetItem annotations: %+v", ann)
	}
	if instr := cs.InitializeResult().Instructions; !strings.Contains(instr, "call gRPC methods of the LIVE service") {
		t.Errorf("instructions say nothing of the gRPC tools:\n%s", instr)
	}

	res := callTool(t, cs, "Inventory_GetItem", map[string]any{"sku": "ab-1"})
	got := structured(t, res)
	if res.IsError || got["code"] != "OK" || got["response"].(map[string]any)["quantity"] != "9007199254740993" {
		t.Fatalf("GetItem: %s", text(res))
	}

	res = callTool(t, cs, "Inventory_ListItems", map[string]any{"shelf": "forever"})
	got = structured(t, res)
	if res.IsError || len(got["messages"].([]any)) != 4 || got["truncated"] != true {
		t.Fatalf("ListItems: %s", text(res))
	}

	res = callTool(t, cs, "Inventory_GetItem", map[string]any{"sku": "missing"})
	got = structured(t, res)
	st, _ := got["status"].(map[string]any)
	if !res.IsError || got["code"] != "NOT_FOUND" || st == nil || len(st["details"].([]any)) != 2 {
		t.Fatalf("GetItem NOT_FOUND: %s", text(res))
	}

	before := svc.Calls("GetItem")
	res = callTool(t, cs, "Inventory_GetItem", map[string]any{"sku": 7, "readMask": "a", "nope": true})
	got = structured(t, res)
	if !res.IsError || got["error"].(map[string]any)["code"] != CodeInvalidArgument || len(got["diagnostics"].([]any)) != 2 {
		t.Fatalf("bad arguments: %s", text(res))
	}
	if svc.Calls("GetItem") != before {
		t.Error("a refused call reached the service")
	}

	res = callTool(t, cs, "pacto_withheld", map[string]any{})
	got = structured(t, res)
	codes := map[string]string{}
	for _, w := range got["grpcWithheld"].([]any) {
		w := w.(map[string]any)
		codes[w["name"].(string)] = w["code"].(string)
	}
	if codes["Inventory_Upload"] != "STREAMING" || codes["Inventory_Sync"] != "STREAMING" || codes["Inventory_AddItem"] != "WRITES_NOT_ALLOWED" {
		t.Errorf("pacto_withheld: %v", codes)
	}
}
