package diff_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubepact/kubepact/bundle/diff"
)

// protoBase is the gRPC interface the proto rows change: interfaces/shop.proto
// of the base revision, with an import beside it.
const protoBase = `syntax = "proto3";
package shop.v1;
import "common.proto";
service Shop {
  rpc Get(GetRequest) returns (Item);
  rpc Watch(GetRequest) returns (stream Item);
}
message GetRequest { string sku = 1; }
message Item {
  string sku = 1;
  int64 quantity = 2;
  Money price = 3;
  Condition condition = 4;
}
enum Condition { CONDITION_UNSPECIFIED = 0; CONDITION_NEW = 1; }
`

const protoCommon = "syntax = \"proto3\";\npackage shop.v1;\nmessage Money { string currency = 1; int64 units = 2; }\n"

// TestProtoClassificationRules is bundle/diff's specification for gRPC
// interfaces: one row per rule, each an edit of protoBase and the entries
// the diff gives.
func TestProtoClassificationRules(t *testing.T) {
	rpc := "interfaces.rpc."
	for _, tc := range []struct {
		name    string
		edit    func(string) string
		want    []rule
		overall string
	}{
		{"an RPC is removed", cut("  rpc Get(GetRequest) returns (Item);\n"),
			[]rule{unchangedVersion, {rpc + "rpcs.shop.v1.Shop/Get", "removed", diff.Breaking}}, diff.Breaking},
		{"an RPC is added", add("  rpc Watch(", "  rpc Put(Item) returns (Item);\n  rpc Watch("),
			[]rule{{rpc + "rpcs.shop.v1.Shop/Put", "added", diff.NonBreaking}}, diff.NonBreaking},
		{"a service is removed", func(s string) string {
			return strings.Replace(s, "service Shop {\n  rpc Get(GetRequest) returns (Item);\n  rpc Watch(GetRequest) returns (stream Item);\n}\n", "", 1)
		}, []rule{unchangedVersion, {rpc + "services.shop.v1.Shop", "removed", diff.Breaking}}, diff.Breaking},
		{"a server stream becomes unary", swap("returns (stream Item)", "returns (Item)"),
			[]rule{unchangedVersion, {rpc + "rpcs.shop.v1.Shop/Watch.streaming", "changed", diff.Breaking}}, diff.Breaking},
		{"a unary RPC becomes client-streaming", swap("rpc Get(GetRequest)", "rpc Get(stream GetRequest)"),
			[]rule{unchangedVersion, {rpc + "rpcs.shop.v1.Shop/Get.streaming", "changed", diff.Breaking}}, diff.Breaking},
		{"an RPC takes another request", swap("rpc Get(GetRequest)", "rpc Get(Item)"),
			[]rule{unchangedVersion, {rpc + "rpcs.shop.v1.Shop/Get.request", "changed", diff.Breaking}}, diff.Breaking},
		{"a field is removed", cut("  int64 quantity = 2;\n"),
			[]rule{unchangedVersion, {rpc + "messages.shop.v1.Item.fields.quantity", "removed", diff.Breaking}}, diff.Breaking},
		{"a field changes type", swap("int64 quantity = 2", "string quantity = 2"),
			[]rule{unchangedVersion, {rpc + "messages.shop.v1.Item.fields.quantity.type", "changed", diff.Breaking}}, diff.Breaking},
		{"a field becomes repeated", swap("int64 quantity = 2", "repeated int64 quantity = 2"),
			[]rule{unchangedVersion, {rpc + "messages.shop.v1.Item.fields.quantity.type", "changed", diff.Breaking}}, diff.Breaking},
		{"a field changes number", swap("int64 quantity = 2", "int64 quantity = 9"),
			[]rule{unchangedVersion, {rpc + "messages.shop.v1.Item.fields.quantity.number", "changed", diff.Breaking}}, diff.Breaking},
		{"a removed field's number is reused", swap("int64 quantity = 2", "string note = 2"),
			[]rule{unchangedVersion, {rpc + "messages.shop.v1.Item.fields.note", "changed", diff.Breaking}}, diff.Breaking},
		{"a field is renamed", swap("int64 quantity = 2", "int64 stock = 2"),
			[]rule{{rpc + "messages.shop.v1.Item.fields.quantity.name", "changed", diff.PotentiallyBreaking}}, diff.PotentiallyBreaking},
		{"an optional field is added", add("  Condition condition = 4;\n", "  Condition condition = 4;\n  optional string note = 5;\n"),
			[]rule{{rpc + "messages.shop.v1.Item.fields.note", "added", diff.NonBreaking}}, diff.NonBreaking},
		{"a message is added", add("enum Condition", "message Empty {}\nenum Condition"),
			[]rule{{rpc + "messages.shop.v1.Empty", "added", diff.NonBreaking}}, diff.NonBreaking},
		{"an enum value is removed", swap(" CONDITION_NEW = 1;", ""),
			[]rule{unchangedVersion, {rpc + "enums.shop.v1.Condition.CONDITION_NEW", "removed", diff.Breaking}}, diff.Breaking},
		{"an enum value is added", swap(" CONDITION_NEW = 1;", " CONDITION_NEW = 1; CONDITION_USED = 2;"),
			[]rule{{rpc + "enums.shop.v1.Condition.CONDITION_USED", "added", diff.NonBreaking}}, diff.NonBreaking},
		{"only comments change", add("service Shop", "// The shop.\nservice Shop"),
			[]rule{{rpc + "spec", "changed", diff.PotentiallyBreaking}}, diff.PotentiallyBreaking},
		{"the new revision does not compile", swap("int64 quantity = 2;", "int64 quantity = ;"),
			[]rule{{rpc + "spec", "changed", diff.PotentiallyBreaking}}, diff.PotentiallyBreaking},
		{"an import escapes the bundle", swap(`import "common.proto";`, `import "../../etc/common.proto";`),
			[]rule{{rpc + "spec", "changed", diff.PotentiallyBreaking}}, diff.PotentiallyBreaking},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files := func(proto string) map[string]string {
				f := baseFiles()
				f["interfaces/shop.proto"] = proto
				f["interfaces/common.proto"] = protoCommon
				return f
			}
			newer := tc.edit(protoBase)
			if newer == protoBase {
				t.Fatal("the row's edit changes nothing")
			}
			changes, err := diff.Diff(t.Context(), revision(t, baseContract(), files(protoBase)), revision(t, baseContract(), files(newer)))
			if err != nil {
				t.Fatal(err)
			}
			got := []rule{}
			for _, c := range changes {
				got = append(got, rule{c.Path, c.Kind, c.Classification})
				if strings.TrimSpace(c.Message) == "" {
					t.Errorf("%s: no message", c.Path)
				}
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("changes (-want +got):\n%s", d)
			}
			if c := diff.Classification(changes); c != tc.overall {
				t.Errorf("Classification = %s; want %s", c, tc.overall)
			}
		})
	}
}

func swap(old, repl string) func(string) string {
	return func(s string) string { return strings.Replace(s, old, repl, 1) }
}

func cut(old string) func(string) string { return swap(old, "") }

func add(at, repl string) func(string) string { return swap(at, repl) }
