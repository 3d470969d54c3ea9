package grpctools

import (
	"context"
	"encoding/json"
	"fmt"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/kubepact/kubepact/bundle"
)

// MessageSchema is one message type a gRPC interface declares, as the
// payload checks see it: its JSON Schema under the proto3 JSON mapping
// (what a tool's arguments are for a request of that type).
type MessageSchema struct {
	// Name is the message's full name (inventory.v1.Item).
	Name      string
	Interface string
	// File is the bundle path of the interface's .proto file.
	File string
	// Schema is the JSON Schema 2020-12 as JSON; nil when Problem says why
	// the message cannot be described.
	Schema  json.RawMessage
	Problem string
}

// MessageSchemas lists the message types of every grpc interface of b
// (those its .proto declares, nested ones included; not its imports'),
// in declaration order. An interface that does not compile is an error.
func MessageSchemas(ctx context.Context, b *bundle.Bundle) ([]MessageSchema, error) {
	if b.Contract == nil {
		return nil, fmt.Errorf("bundle %s: the contract does not parse: %w", b.Source, b.ParseErr)
	}
	var out []MessageSchema
	for _, in := range b.Contract.Interfaces {
		if in.Type != "grpc" || in.Ref == "" {
			continue
		}
		files, err := Compile(ctx, b.FS, in.Ref, Limits{})
		if err != nil {
			return nil, fmt.Errorf("interface %s: %w", in.Name, err)
		}
		var walk func(ms protoreflect.MessageDescriptors)
		walk = func(ms protoreflect.MessageDescriptors) {
			for i := range ms.Len() {
				md := ms.Get(i)
				if md.IsMapEntry() {
					continue
				}
				m := MessageSchema{Name: string(md.FullName()), Interface: in.Name, File: in.Ref}
				s, err := newSchemaBuilder(inputMode).message(md)
				if err == nil {
					m.Schema, err = marshalSchema(s)
				}
				if err != nil {
					m.Problem = err.Error()
				}
				out = append(out, m)
				walk(md.Messages())
			}
		}
		walk(files[0].Messages())
	}
	return out, nil
}
