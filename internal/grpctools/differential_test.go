package grpctools

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/dynamicpb"
)

// resolvedInput compiles a tool's input schema with jsonschema-go, the
// validator the MCP SDK checks arguments with.
func resolvedInput(t testing.TB, tl *Tool) *jsonschema.Resolved {
	t.Helper()
	var s jsonschema.Schema
	if err := json.Unmarshal(tl.InputSchema, &s); err != nil {
		t.Fatal(err)
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		t.Fatalf("%s: the input schema does not resolve: %v", tl.Name, err)
	}
	return rs
}

// wire is m in deterministic binary form.
func wire(t testing.TB, m proto.Message) []byte {
	t.Helper()
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestDifferentialAgainstProtojson: for a corpus of requests — random
// messages of every field kind as protojson prints them, and hand-written
// edge cases — the tool's input schema accepts what protojson prints, and
// the tool's JSON → proto encoding equals protojson.Unmarshal's, byte for
// byte.
func TestDifferentialAgainstProtojson(t *testing.T) {
	c, err := Project(t.Context(), loadInventory(t), &Options{AllowWrites: true})
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(24, 2026))
	for _, name := range []string{"Inventory_AddItem", "Inventory_SetStock", "Inventory_GetItem", "Inventory_ListItems"} {
		tl := c.Tool(name)
		rs := resolvedInput(t, tl)
		md := tl.Method().Input()
		var corpus []string
		for range 400 {
			m := randomMessage(r, md, 3)
			js, err := protojson.MarshalOptions{Resolver: tl.Types()}.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			corpus = append(corpus, string(js))
		}
		for _, js := range corpus {
			var v any
			if err := json.Unmarshal([]byte(js), &v); err != nil {
				t.Fatal(err)
			}
			if err := rs.Validate(v); err != nil {
				t.Fatalf("%s: the schema refuses what protojson prints:\n%s\n%v", name, js, err)
			}
			diffEncode(t, tl, js)
		}
	}
	// Hand-written inputs protojson accepts in other spellings than it
	// prints: the encoding still agrees (the schema asks for the printed
	// spelling, so a client is steered to it).
	add := c.Tool("Inventory_AddItem")
	for _, js := range []string{
		`{"quantity":12,"checksum":"18446744073709551615","weight":"NaN","rating":"-Infinity"}`,
		`{"display_name":"by proto name","per_shelf":{"a":1}}`,
		`{"byBatch":{"-9223372036854775808":"min"},"thumbnail":"_-8="}`,
		`{"condition":2,"updated":"2026-01-02T15:04:05.123456789+02:00","shelfLife":"-0.5s"}`,
		`{"restockAt":null,"supplier":"","extra":null,"attributes":{}}`,
		`{"variants":[{"variants":[{"sku":"deep"}]}],"minStock":0}`,
	} {
		diffEncode(t, add, js)
	}
}

func diffEncode(t *testing.T, tl *Tool, js string) {
	t.Helper()
	got, err := tl.Encode(json.RawMessage(js))
	if err != nil {
		t.Fatalf("%s: Encode refused protojson-valid input %s: %v", tl.Name, js, err)
	}
	want := dynamicpb.NewMessage(tl.Method().Input())
	if err := (protojson.UnmarshalOptions{Resolver: tl.Types()}).Unmarshal([]byte(js), want); err != nil {
		t.Fatalf("protojson refuses %s: %v", js, err)
	}
	if g, w := wire(t, got), wire(t, want); string(g) != string(w) {
		t.Fatalf("%s: encodings differ for %s:\n got %x\nwant %x", tl.Name, js, g, w)
	}
}

// TestEncodeRefusesInWords: what protojson refuses, Encode refuses too,
// with the message named and protojson's package prefix gone.
func TestEncodeRefusesInWords(t *testing.T) {
	c, err := Project(t.Context(), loadInventory(t), &Options{AllowWrites: true})
	if err != nil {
		t.Fatal(err)
	}
	add := c.Tool("Inventory_AddItem")
	for _, js := range []string{`{"nope":1}`, `{"shelf":"a","warehouse":"b"}`, `{"quantity":"1.5"}`, `{"condition":"CONDITION_BROKEN"}`, `[`} {
		_, err := add.Encode(json.RawMessage(js))
		if err == nil || !strings.HasPrefix(err.Error(), "the arguments are not a inventory.v1.Item message under the proto3 JSON mapping: ") || strings.Contains(err.Error(), "proto:") {
			t.Errorf("%s: %v", js, err)
		}
	}
}
