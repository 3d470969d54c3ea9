package grpctools

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kubepact/kubepact/bundle"
	"github.com/kubepact/kubepact/internal/openapitools"
)

// lockOf pins every tool of c, writes the lock out and reads it back as
// a server would.
func lockOf(t *testing.T, c *Capability) *openapitools.Lock {
	t.Helper()
	var pins []openapitools.LockedRPC
	for _, tl := range c.Tools {
		pins = append(pins, tl.Pin())
	}
	raw, err := openapitools.NewLock(&openapitools.Capability{Service: c.Service}, pins...).Marshal()
	if err != nil {
		t.Fatal(err)
	}
	l, err := openapitools.ParseLock(raw, "test.lock.json")
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func codesOf(c *Capability) map[string]string {
	m := map[string]string{}
	for _, w := range c.Withheld {
		m[w.Name] = w.Code
	}
	return m
}

func TestUnderALockLockedToolsAreServed(t *testing.T) {
	b := loadInventory(t)
	all, err := Project(t.Context(), b, &Options{AllowWrites: true})
	if err != nil {
		t.Fatal(err)
	}
	l := lockOf(t, all)
	if len(l.GRPC) != len(all.Tools) || len(all.Tools) < 4 {
		t.Fatalf("lock pins %d of %d tools", len(l.GRPC), len(all.Tools))
	}
	held, err := Project(t.Context(), b, &Options{AllowWrites: true, Lock: l})
	if err != nil {
		t.Fatal(err)
	}
	if len(held.Tools) != len(all.Tools) {
		t.Fatalf("under its own lock %d of %d tools are served; withheld %v", len(held.Tools), len(all.Tools), held.Withheld)
	}
	// Without --allow-writes the lock grants nothing more: writes stay
	// withheld as writes.
	ro, err := Project(t.Context(), b, &Options{Lock: l})
	if err != nil {
		t.Fatal(err)
	}
	if got := codesOf(ro)["Inventory_SetStock"]; got != WithheldWritesNotAllowed {
		t.Errorf("SetStock without writes: %s", got)
	}
}

func TestUnderALockUnpinnedAndChangedToolsAreDrift(t *testing.T) {
	b := loadInventory(t)
	all, err := Project(t.Context(), b, &Options{AllowWrites: true})
	if err != nil {
		t.Fatal(err)
	}
	// A lock pinning only GetItem: every other tool is DRIFT.
	only := &Capability{Service: all.Service, Tools: []*Tool{all.Tool("Inventory_GetItem")}}
	c, err := Project(t.Context(), b, &Options{AllowWrites: true, Lock: lockOf(t, only)})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Tools) != 1 || c.Tools[0].Name != "Inventory_GetItem" {
		t.Fatalf("served %d tools", len(c.Tools))
	}
	for _, w := range c.Withheld {
		if w.Name == "Inventory_SetStock" && (w.Code != WithheldDrift || !strings.Contains(w.Reason, "not in the tools lock test.lock.json")) {
			t.Errorf("SetStock: %s %s", w.Code, w.Reason)
		}
	}
	if !slices.ContainsFunc(c.Warnings, func(s string) bool { return strings.Contains(s, "gRPC tool(s) that do not match the tools lock") }) {
		t.Errorf("no DRIFT warning: %q", c.Warnings)
	}

	// The bundle changes GetItem's description and SetStock's request:
	// both are withheld, saying what changed; the rest is served.
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS("../../examples/grpc/inventory")); err != nil {
		t.Fatal(err)
	}
	proto := filepath.Join(dir, "interfaces/inventory/v1/inventory.proto")
	src, err := os.ReadFile(proto)
	if err != nil {
		t.Fatal(err)
	}
	changed := strings.Replace(string(src), "// GetItem reads one item.", "// GetItem reads one item, and now says something else.", 1)
	changed = strings.Replace(changed, "message SetStockRequest {", "message SetStockRequest {\n  string reason = 99;", 1)
	if changed == string(src) || strings.Count(changed, "reason = 99") != 1 {
		t.Fatal("the test's edits did not apply to the example proto")
	}
	if err := os.WriteFile(proto, []byte(changed), 0o600); err != nil {
		t.Fatal(err)
	}
	b2, err := bundle.LoadDir(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	c2, err := Project(t.Context(), b2, &Options{AllowWrites: true, Lock: lockOf(t, all)})
	if err != nil {
		t.Fatal(err)
	}
	reasons := map[string]string{}
	for _, w := range c2.Withheld {
		if w.Code == WithheldDrift {
			reasons[w.Name] = w.Reason
		}
	}
	if len(reasons) != 2 || !strings.Contains(reasons["Inventory_GetItem"], "title or description") || !strings.Contains(reasons["Inventory_SetStock"], "input schema") {
		t.Errorf("DRIFT: %q", reasons)
	}
	if len(c2.Tools) != len(all.Tools)-2 {
		t.Errorf("served %d, want %d", len(c2.Tools), len(all.Tools)-2)
	}
}

func TestALockWithoutGRPCEntriesWithholdsEveryRPC(t *testing.T) {
	// A lock written before gRPC tools were pinned: no "grpc" key. It
	// still parses, and pins no gRPC tool.
	b := loadInventory(t)
	old := openapitools.NewLock(&openapitools.Capability{Service: "inventory"})
	raw, err := old.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(raw), `"grpc"`) {
		t.Fatalf("a lock without gRPC tools writes a grpc key:\n%s", raw)
	}
	l, err := openapitools.ParseLock(raw, "old.lock.json")
	if err != nil {
		t.Fatal(err)
	}
	c, err := Project(t.Context(), b, &Options{AllowWrites: true, Lock: l})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Tools) != 0 {
		t.Fatalf("%d gRPC tools served under a lock that pins none", len(c.Tools))
	}
	for _, w := range c.Withheld {
		if w.Code != WithheldDrift && w.Code != WithheldStreaming && w.Code != WithheldUnsupported {
			t.Errorf("%s: %s", w.Name, w.Code)
		}
	}
}

func TestAllowAndDenyByToolNameOrServiceMethod(t *testing.T) {
	b := loadInventory(t)
	for _, tc := range []struct {
		name string
		opts Options
		want []string
	}{
		{"allow by Service/Method and name", Options{AllowWrites: true, AllowMethods: []string{"Inventory/SetStock", "Inventory_GetItem"}}, []string{"Inventory_GetItem", "Inventory_SetStock"}},
		{"allow by package.Service/Method", Options{AllowWrites: true, AllowMethods: []string{"inventory.v1.Inventory/ListItems"}}, []string{"Inventory_ListItems"}},
		{"deny wins", Options{AllowMethods: []string{"Inventory_GetItem", "Inventory_ListItems"}, DenyMethods: []string{"Inventory/GetItem"}}, []string{"Inventory_ListItems"}},
		{"allow list of other kinds only", Options{AllowWrites: true, AllowListSet: true}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Project(t.Context(), b, &tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, tl := range c.Tools {
				got = append(got, tl.Name)
			}
			slices.Sort(got)
			if !slices.Equal(got, tc.want) {
				t.Errorf("tools %v, want %v", got, tc.want)
			}
		})
	}
	// A partial name is no name: "Item" or "GetItem" alone names nothing.
	for _, bad := range []string{"GetItem", "ventory/GetItem", "/inventory.v1.Inventory/GetItem/"} {
		if _, err := Project(t.Context(), b, &Options{DenyMethods: []string{bad}}); err == nil || !strings.Contains(err.Error(), "no RPC has the tool name or the Service/Method") {
			t.Errorf("deny %q: %v", bad, err)
		}
	}
}
