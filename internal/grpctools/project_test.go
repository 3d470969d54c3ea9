package grpctools

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubepact/kubepact/bundle"
)

func loadInventory(t testing.TB) *bundle.Bundle {
	t.Helper()
	b, err := bundle.LoadDir("../../examples/grpc/inventory", nil)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestProjectReadOnlyByDefault(t *testing.T) {
	c, err := Project(t.Context(), loadInventory(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	var exposed []string
	for _, tl := range c.Tools {
		exposed = append(exposed, tl.Name)
	}
	if diff := cmp.Diff(exposed, []string{"Inventory_GetItem", "Inventory_ListItems"}); diff != "" {
		t.Errorf("exposed (-got +want):\n%s", diff)
	}
	codes := map[string]string{}
	for _, w := range c.Withheld {
		codes[w.Name] = w.Code
	}
	if diff := cmp.Diff(codes, map[string]string{
		"Inventory_SetStock":   WithheldWritesNotAllowed,
		"Inventory_AddItem":    WithheldWritesNotAllowed,
		"Inventory_DeleteItem": WithheldWritesNotAllowed,
		"Inventory_Upload":     WithheldStreaming,
		"Inventory_Sync":       WithheldStreaming,
		"Inventory_Attach":     WithheldUnsupported,
	}); diff != "" {
		t.Errorf("withheld (-got +want):\n%s", diff)
	}
	if get := c.Tool("Inventory_GetItem"); get.RPC != "/inventory.v1.Inventory/GetItem" || get.ServerStreaming || !strings.HasPrefix(get.Description, "GetItem reads one item.") {
		t.Errorf("GetItem: %+v", get)
	}
	if !c.Tool("Inventory_ListItems").ServerStreaming {
		t.Error("ListItems is server-streaming")
	}
}

func TestProjectHintsFollowIdempotencyLevel(t *testing.T) {
	c, err := Project(t.Context(), loadInventory(t), &Options{AllowWrites: true, Target: "127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Hints{}
	confirm := map[string]bool{}
	for _, tl := range c.Tools {
		got[tl.Name] = tl.Hints
		confirm[tl.Name] = tl.NeedsConfirmation()
	}
	if diff := cmp.Diff(got, map[string]Hints{
		"Inventory_GetItem":    {ReadOnly: true, Idempotent: true},
		"Inventory_ListItems":  {ReadOnly: true, Idempotent: true},
		"Inventory_SetStock":   {Destructive: true, Idempotent: true},
		"Inventory_AddItem":    {Destructive: true},
		"Inventory_DeleteItem": {Destructive: true},
	}); diff != "" {
		t.Errorf("hints (-got +want):\n%s", diff)
	}
	if diff := cmp.Diff(confirm, map[string]bool{
		"Inventory_GetItem": false, "Inventory_ListItems": false, "Inventory_SetStock": false,
		"Inventory_AddItem": false, "Inventory_DeleteItem": true,
	}); diff != "" {
		t.Errorf("confirmation under the default policy (-got +want):\n%s", diff)
	}
	remote, err := Project(t.Context(), loadInventory(t), &Options{Target: "10.0.0.7:9090", AllowPlaintextRemote: true})
	if err != nil {
		t.Fatal(err)
	}
	if !remote.Tools[0].Hints.OpenWorld {
		t.Error("a non-loopback target makes the tools open-world")
	}
}

func TestProjectRefusesBadOptions(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts Options
		want string
	}{
		{"remote plaintext", Options{Target: "example.com:443"}, "not a loopback address"},
		{"not host:port", Options{Target: "127.0.0.1"}, "is not host:port"},
		{"metadata to remote", Options{Target: "10.1.2.3:80", AllowPlaintextRemote: true, Metadata: []string{"authorization=Bearer s3cret"}}, "only to a loopback target"},
		{"metadata without target", Options{Metadata: []string{"authorization=Bearer s3cret"}}, "needs an explicit Target"},
		{"reserved metadata", Options{Target: "127.0.0.1:1", Metadata: []string{"grpc-timeout=1S"}}, "not accepted"},
		{"metadata without =", Options{Target: "127.0.0.1:1", Metadata: []string{"s3cretvalue"}}, "is not name=value"},
		{"unknown deny", Options{DenyMethods: []string{"Inventory_Nope"}}, `no RPC has the tool name or the Service/Method "Inventory_Nope"`},
		{"policy", Options{ConfirmWrites: "sometimes"}, "ConfirmWrites"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Project(t.Context(), loadInventory(t), &tc.opts)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "s3cret") {
				t.Errorf("the error shows a credential: %v", err)
			}
		})
	}
}

func TestInputSchemaMapping(t *testing.T) {
	c, err := Project(t.Context(), loadInventory(t), &Options{AllowWrites: true})
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
		AllOf      []json.RawMessage          `json:"allOf"`
	}
	if err := json.Unmarshal(c.Tool("Inventory_AddItem").InputSchema, &s); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"quantity":         `{"description":"a 64-bit integer as a decimal string","pattern":"^-?[0-9]+$","type":"string"}`,
		"checksum":         `{"description":"an unsigned 64-bit integer as a decimal string","pattern":"^[0-9]+$","type":"string"}`,
		"condition":        `{"enum":["CONDITION_UNSPECIFIED","CONDITION_NEW","CONDITION_USED"],"type":"string"}`,
		"thumbnail":        `{"contentEncoding":"base64","type":"string"}`,
		"perShelf":         `{"additionalProperties":{"maximum":2147483647,"minimum":-2147483648,"type":"integer"},"type":"object"}`,
		"byBatch":          `{"additionalProperties":{"type":"string"},"propertyNames":{"pattern":"^-?[0-9]+$"},"type":"object"}`,
		"updated":          `{"description":"an RFC 3339 timestamp, e.g. 2026-01-02T15:04:05Z","format":"date-time","type":"string"}`,
		"restockAt":        `{"description":"a 64-bit integer as a decimal string","pattern":"^-?[0-9]+$","type":"string"}`,
		"extra":            `{"description":"any JSON value"}`,
		"variants":         `{"items":{"description":"a inventory.v1.Item message (recursive: its fields are as described above)","type":"object"},"type":"array"}`,
		"aisle":            `{"maximum":4294967295,"minimum":0,"type":"integer"}`,
		"tags":             `{"items":{"type":"string"},"type":"array"}`,
		"shelfLife":        `{"description":"a duration in seconds with an s suffix, e.g. 1.5s","pattern":"^-?[0-9]+(\\.[0-9]{1,9})?s$","type":"string"}`,
		"reservedQuantity": `{"description":"a 64-bit integer as a decimal string","pattern":"^-?[0-9]+$","type":"string"}`,
	}
	for name, w := range want {
		if got := string(s.Properties[name]); got != w {
			t.Errorf("%s:\n got %s\nwant %s", name, got, w)
		}
	}
	if got := string(s.AllOf[0]); got != `{"not":{"required":["shelf","warehouse"]}}` {
		t.Errorf("oneof rule: %s", got)
	}
}

func TestABrokenProtoCostsOnlyItsTools(t *testing.T) {
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS("../../examples/grpc/inventory")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "interfaces/inventory/v1/common.proto"), []byte("syntax = \"proto3\";\nmessage Money {\n  Nope x = 1;\n}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	b, err := bundle.LoadDir(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	c, err := Project(t.Context(), b, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Tools) != 0 || len(c.Interfaces) != 1 || !strings.Contains(c.Interfaces[0].Problem, "interfaces/inventory/v1/common.proto:3:3: field Money.x: unknown type Nope") {
		t.Fatalf("tools %d, interfaces %+v", len(c.Tools), c.Interfaces)
	}
	if len(c.Warnings) != 1 || !strings.Contains(c.Warnings[0], "no gRPC tool is served from it") {
		t.Errorf("warnings: %q", c.Warnings)
	}
}

// TestRemoteTargetNeedsTLS: a target that is not loopback is accepted
// over TLS only, and the TLS options are checked at start-up.
func TestRemoteTargetNeedsTLS(t *testing.T) {
	b := loadInventory(t)
	noPEM := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(noPEM, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		opts Options
		want string
	}{
		{"plaintext remote", Options{Target: "10.0.0.7:9090"}, "a remote target is accepted over TLS"},
		{"plaintext remote name", Options{Target: "inventory.example.com:443"}, "not a loopback address"},
		{"CA without TLS", Options{Target: "127.0.0.1:9090", CAFile: noPEM}, "give UseTLS as well"},
		{"server name without TLS", Options{Target: "127.0.0.1:9090", ServerName: "x"}, "give UseTLS as well"},
		{"TLS without target", Options{UseTLS: true}, "UseTLS needs an explicit Target"},
		{"CA file missing", Options{Target: "10.0.0.7:9090", UseTLS: true, CAFile: filepath.Join(t.TempDir(), "nope.pem")}, "CAFile: the file"},
		{"CA file without PEM", Options{Target: "10.0.0.7:9090", UseTLS: true, CAFile: noPEM}, "holds no PEM certificate"},
	} {
		if _, err := Project(t.Context(), b, &tc.opts); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v; want an error saying %q", tc.name, err, tc.want)
		}
	}
	c, err := Project(t.Context(), b, &Options{Target: "10.0.0.7:9090", UseTLS: true, Metadata: []string{"authorization=Bearer x"}})
	if err != nil {
		t.Fatalf("a remote target over TLS, with metadata: %v", err)
	}
	if tl := c.Tool("Inventory_GetItem"); tl == nil || !tl.Hints.OpenWorld || c.TLSConfig() == nil || c.TLSConfig().ServerName != "10.0.0.7" {
		t.Errorf("remote TLS tool %+v, TLS %+v; want openWorld and the target's host as server name", tl, c.TLSConfig())
	}
}
