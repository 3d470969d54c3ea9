package payload_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/kubepact/kubepact/bundle"
	"github.com/kubepact/kubepact/internal/grpctools"
	"github.com/kubepact/kubepact/internal/openapitools"
	"github.com/kubepact/kubepact/internal/payload"
)

func grpcMessages(ctx context.Context, b *bundle.Bundle) ([]payload.GRPCMessage, error) {
	ms, err := grpctools.MessageSchemas(ctx, b)
	var out []payload.GRPCMessage
	for _, m := range ms {
		out = append(out, payload.GRPCMessage{Name: m.Name, Interface: m.Interface, File: m.File, Schema: m.Schema, Problem: m.Problem})
	}
	return out, err
}

// TestGRPCMessages: a gRPC message is a subject of the payload checks by
// its full name, under the proto3 JSON mapping.
func TestGRPCMessages(t *testing.T) {
	b, err := bundle.LoadDir("../../examples/grpc/inventory", nil)
	if err != nil {
		t.Fatal(err)
	}
	c, err := payload.ReadWithGRPC(t.Context(), b, openapitools.Shapes, grpcMessages)
	if err != nil {
		t.Fatal(err)
	}
	sub := payload.Subject{Message: "inventory.v1.Item"}
	ok, err := c.Validate(t.Context(), sub, json.RawMessage(`{"sku":"a","quantity":"9007199254740993","condition":"CONDITION_NEW","price":{"currency":"EUR","units":"3"}}`))
	if err != nil || !ok.Valid || ok.Subject.Kind != payload.KindMessage || ok.Subject.Interface != "grpc" {
		t.Fatalf("a valid Item: %v %+v", err, ok)
	}
	bad, err := c.Validate(t.Context(), sub, json.RawMessage(`{"quantity":5,"condition":"BROKEN","nope":1}`))
	if err != nil || bad.Valid {
		t.Fatalf("an invalid Item: %v %+v", err, bad)
	}
	fields := map[string]bool{}
	for _, d := range bad.Diagnostics {
		fields[d.Field] = true
	}
	for _, f := range []string{"quantity", "condition", "nope"} {
		if !fields[f] {
			t.Errorf("no diagnostic for %s: %+v", f, bad.Diagnostics)
		}
	}
	if _, err := c.Validate(t.Context(), payload.Subject{Message: "inventory.v1.Itme"}, json.RawMessage(`{}`)); err == nil {
		t.Error("an unknown message name is an error")
	} else if pe, ok := errors.AsType[*payload.Error](err); !ok || pe.DidYouMean != "inventory.v1.Item" {
		t.Errorf("unknown message: %v", err)
	}
	ex, err := c.Explain(t.Context(), payload.FieldQuery{Path: "price.units", Subject: sub})
	if err != nil || !ex.Found || len(ex.Definitions) == 0 {
		t.Fatalf("explain price.units: %v %+v", err, ex)
	}
}
