package payload

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/kubepact/kubepact/bundle"
)

// GRPCMessage is one message type of a gRPC interface, described by its
// JSON Schema under the proto3 JSON mapping.
type GRPCMessage struct {
	Name, Interface, File string
	Schema                json.RawMessage // nil when Problem says why not
	Problem               string
}

// GRPCMessages returns the message types of a bundle's gRPC interfaces
// (internal/grpctools' MessageSchemas, adapted, is the one the product
// uses). A parameter for the same reason Shapes is: no tool projection is
// imported here.
type GRPCMessages func(ctx context.Context, b *bundle.Bundle) ([]GRPCMessage, error)

// ReadWithGRPC is Read plus the message types of b's gRPC interfaces:
// each is a message (Kind message) named by its full name
// (inventory.v1.Item), checked and explained like an AsyncAPI message.
// An interface whose .proto does not compile is kept as a problem.
func ReadWithGRPC(ctx context.Context, b *bundle.Bundle, shapes Shapes, grpc GRPCMessages) (*Contract, error) {
	c, err := Read(ctx, b, shapes)
	if err != nil || grpc == nil {
		return c, err
	}
	msgs, err := grpc(ctx, b)
	if err != nil {
		c.problems = append(c.problems, "a gRPC interface could not be read: "+firstLine(err.Error()))
		return c, nil
	}
	for _, m := range msgs {
		pointer := "/$defs/" + escapePointer(m.Name)
		msg := &message{name: m.Name, iface: m.Interface, file: m.File, pointer: pointer, problem: m.Problem}
		if m.Schema != nil {
			tree, err := normaliseJSON(m.Schema)
			if err != nil {
				msg.problem = fmt.Sprintf("its schema could not be read: %s", firstLine(err.Error()))
			} else {
				msg.payload = tree
				msg.doc = map[string]any{"$defs": map[string]any{m.Name: tree}}
			}
		}
		c.messages = append(c.messages, msg)
	}
	return c, nil
}

func normaliseJSON(raw json.RawMessage) (any, error) {
	var tree any
	if err := json.Unmarshal(raw, &tree); err != nil {
		return nil, err
	}
	return normalise(tree)
}

// escapePointer escapes one JSON pointer token.
func escapePointer(s string) string {
	out := make([]byte, 0, len(s))
	for i := range len(s) {
		switch s[i] {
		case '~':
			out = append(out, '~', '0')
		case '/':
			out = append(out, '~', '1')
		default:
			out = append(out, s[i])
		}
	}
	return string(out)
}
