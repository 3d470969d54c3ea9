package grpctools

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/dynamicpb"
)

// FuzzEncode drives the JSON → message path with arbitrary bytes as the
// arguments of the richest tool (an Item, with every field kind, maps,
// oneof, recursion and well-known types). It must never panic; what it
// accepts protojson accepts with the same encoding; and what it accepts
// prints back to JSON that decodes to the same message. No arguments at
// all (empty or blank input) are the empty request.
//
//	go test ./internal/grpctools -run '^$' -fuzz FuzzEncode -fuzztime 5m
func FuzzEncode(f *testing.F) {
	c, err := Project(f.Context(), loadInventory(f), &Options{AllowWrites: true})
	if err != nil {
		f.Fatal(err)
	}
	tl := c.Tool("Inventory_AddItem")
	r := rand.New(rand.NewPCG(1, 2))
	for range 20 {
		js, err := protojson.MarshalOptions{Resolver: tl.Types()}.Marshal(randomMessage(r, tl.Method().Input(), 2))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(js)
	}
	f.Add([]byte(`{"quantity":12,"weight":"NaN","byBatch":{"-1":"x"},"variants":[{"variants":[{}]}]}`))
	f.Add([]byte(`{"shelf":"a","warehouse":"b"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := tl.Encode(json.RawMessage(data))
		if err != nil {
			return
		}
		if len(bytes.TrimSpace(data)) == 0 { // no arguments: the empty request
			if len(wire(t, got)) != 0 {
				t.Fatalf("no arguments gave a non-empty request")
			}
			return
		}
		want := dynamicpb.NewMessage(tl.Method().Input())
		if err := (protojson.UnmarshalOptions{Resolver: tl.Types()}).Unmarshal(data, want); err != nil {
			t.Fatalf("Encode accepted what protojson refuses (%v): %q", err, data)
		}
		if string(wire(t, got)) != string(wire(t, want)) {
			t.Fatalf("encodings differ for %q", data)
		}
		printed, err := EncodeJSON(got, tl.Types())
		if err != nil {
			t.Fatalf("an accepted message does not print: %v", err)
		}
		again, err := tl.Encode(printed)
		if err != nil {
			t.Fatalf("the printed form %s does not decode: %v", printed, err)
		}
		if string(wire(t, again)) != string(wire(t, got)) {
			t.Fatalf("round trip changed the message: %q → %s", data, printed)
		}
	})
}
