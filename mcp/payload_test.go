package mcp

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kubepact/kubepact/bundle"
	"github.com/kubepact/kubepact/bundle/oci"
	"github.com/kubepact/kubepact/fleetgraph"
	"github.com/kubepact/kubepact/fleetgraph/source"
	"github.com/kubepact/kubepact/internal/openapitools"
	"github.com/kubepact/kubepact/test/testregistry"
)

// TestPayloadServices addresses one contract every way the payload tools
// accept, through the MCP server and the go-sdk client: the bundle the
// capability family serves (by name), a fleet revision pulled from a real
// registry on loopback (by name@version, read again by its pinned digest),
// an oci:// reference, and a directory in the workspace; and the refusals:
// a path out of the workspace, a registry reference without a registry.
func TestPayloadServices(t *testing.T) {
	reg := testregistry.New(t, nil)
	client, err := oci.NewClient(&oci.ClientOptions{PlainHTTP: true, DockerConfigJSON: []byte(`{"auths":{}}`), AllowedRegistries: []string{"127.0.0.1"}})
	if err != nil {
		t.Fatal(err)
	}
	b, err := bundle.LoadDir("../examples/bundles/catalog", nil)
	if err != nil {
		t.Fatal(err)
	}
	img, err := b.Image()
	if err != nil {
		t.Fatal(err)
	}
	ref := reg.Host + "/bundles/catalog:1.4.0"
	r, err := oci.ParseReference(ref)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.Push(t.Context(), r, img); err != nil {
		t.Fatal(err)
	}
	fleet := fleetgraph.NewBuilder(nil)
	source.NewFeed(fleet, []source.Source{&source.OCISource{Refs: []string{"oci://" + ref}, Client: client}}).Collect(t.Context(), nil)
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	bad := map[string]any{"sku": "", "name": "Lamp", "price": map[string]any{"currency": "EUR", "amountMinor": 1}}
	call := func(cs *sdk.ClientSession, service string) map[string]any {
		t.Helper()
		res := callTool(t, cs, "pacto_validate_payload", map[string]any{"service": service, "operation": "createProduct", "payload": bad})
		return structured(t, res)
	}

	withFleet := connect(t.Context(), t, newTestServer(t, &Options{Workspace: root, Registry: client, Families: []Family{FamilyPayload, FamilyFleet},
		Fleet: FleetOptions{Enabled: true, Builder: fleet}}))
	for service, from := range map[string]string{"catalog@1.4.0": "fleet", "oci://" + ref: "registry", "examples/bundles/catalog": "workspace"} {
		out := call(withFleet, service)
		svc, _ := out["service"].(map[string]any)
		if out["valid"] != false || svc["from"] != from || svc["digest"] != b.Identity.String() {
			t.Errorf("%s: %v; want the one sku fault, from %s, digest %s", service, out, from, b.Identity)
		}
	}
	served := connect(t.Context(), t, capabilityServer(t, "../examples/bundles/catalog", &openapitools.Options{}, &Options{Families: []Family{FamilyCapability, FamilyPayload}}))
	if out := call(served, "catalog"); out["valid"] != false || out["service"].(map[string]any)["from"] != "served" {
		t.Errorf("served bundle: %v", out)
	}

	noRegistry := connect(t.Context(), t, newTestServer(t, &Options{Workspace: root, Families: []Family{FamilyPayload}}))
	for service, code := range map[string]string{
		"oci://" + ref:         "REGISTRY_DISABLED",
		"../../etc":            "PATH_OUTSIDE_WORKSPACE",
		"catalog":              "NOT_FOUND",
		"examples/bundles/nop": "NOT_FOUND",
	} {
		res := callTool(t, noRegistry, "pacto_validate_payload", map[string]any{"service": service, "operation": "createProduct", "payload": bad})
		e, _ := structured(t, res)["error"].(map[string]any)
		if !res.IsError || e["code"] != code || e["field"] != "service" {
			t.Errorf("%s: %s; want %s on service", service, text(res), code)
		}
	}
}

// TestPayloadBounds: a payload nested past the decoder's depth bound is
// refused as an argument before any schema sees it; a wide one within the
// bounds is checked and its diagnostics are capped.
func TestPayloadBounds(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	cs := connect(t.Context(), t, newTestServer(t, &Options{Workspace: root, Families: []Family{FamilyPayload}}))
	var deep any = "x"
	for range openapitools.MaxArgumentDepth + 5 {
		deep = []any{deep}
	}
	res := callTool(t, cs, "pacto_validate_payload", map[string]any{"service": "examples/bundles/orders", "message": "OrderPlaced", "payload": deep})
	if !res.IsError || !strings.Contains(text(res), "deeper") {
		t.Errorf("deep payload: %s", text(res))
	}
	lines := make([]any, 3000)
	for i := range lines {
		lines[i] = map[string]any{"productId": i, "quantity": 0}
	}
	res = callTool(t, cs, "pacto_validate_payload", map[string]any{"service": "examples/bundles/orders", "message": "OrderPlaced",
		"payload": map[string]any{"orderId": "o", "customerId": "c", "lines": lines}})
	out := structured(t, res)
	if res.IsError || out["valid"] != false || out["truncated"] != true || len(out["diagnostics"].([]any)) != 100 {
		t.Errorf("wide payload: valid=%v truncated=%v (%s)", out["valid"], out["truncated"], text(res))
	}
}

// TestExplainConfigurationSetBy: two revisions of payments in the fleet,
// only the older of which sets captureDelaySeconds in its values; the
// answer names that revision and the workload running it, and not the
// staging workload running the newer one.
func TestExplainConfigurationSetBy(t *testing.T) {
	ws := t.TempDir()
	if err := os.CopyFS(filepath.Join(ws, "payments"), os.DirFS("../examples/bundles/payments")); err != nil {
		t.Fatal(err)
	}
	if err := os.CopyFS(filepath.Join(ws, "payments-rc"), os.DirFS("../examples/bundles/payments")); err != nil {
		t.Fatal(err)
	}
	manifest := filepath.Join(ws, "payments-rc", "pacto.yaml")
	raw, err := os.ReadFile(manifest)
	if err != nil {
		t.Fatal(err)
	}
	rc := strings.Replace(strings.Replace(string(raw), "version: 3.0.2", "version: 3.1.0-rc.1", 1), "      captureDelaySeconds: 30\n", "", 1)
	if err := os.WriteFile(manifest, []byte(rc), 0o644); err != nil {
		t.Fatal(err)
	}
	b := fleetgraph.NewBuilder(nil)
	source.NewFeed(b, []source.Source{&source.LocalSource{Dir: ws}, &source.TargetStateSource{Path: "../examples/fleet/targets.yaml"}}).Collect(t.Context(), nil)
	cs := connect(t.Context(), t, newTestServer(t, &Options{Workspace: ws, Families: []Family{FamilyPayload, FamilyFleet}, Fleet: FleetOptions{Enabled: true, Builder: b}}))

	// By name (the newest semantic version, the release candidate) and by
	// the candidate's directory: the answering revision does not set the
	// property, an older one does.
	for _, service := range []string{"payments", "payments-rc"} {
		res := callTool(t, cs, "pacto_explain_field", map[string]any{"service": service, "field": "captureDelaySeconds"})
		out := structured(t, res)
		setBy, _ := out["setBy"].([]any)
		if res.IsError || out["found"] != true || len(setBy) != 1 {
			t.Fatalf("%s: %s", service, text(res))
		}
		got := setBy[0].(map[string]any)
		if got["version"] != "3.0.2" || got["value"] != 30.0 || len(got["targets"].([]any)) != 1 || got["targets"].([]any)[0] != fleetgraph.TargetKey("production", "kubernetes-workload", "shop/payments") {
			t.Errorf("%s: setBy %v", service, setBy)
		}
		def := out["definitions"].([]any)[0].(map[string]any)
		if def["set"] != false || out["service"].(map[string]any)["version"] != "3.1.0-rc.1" {
			t.Errorf("%s: answered by %v, set %v; want 3.1.0-rc.1, which does not set it", service, out["service"], def["set"])
		}
	}
}
