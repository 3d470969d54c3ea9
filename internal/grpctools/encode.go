package grpctools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/dynamicpb"

	// The google.rpc error details a service puts in a status are decoded
	// by name: link their types in.
	_ "google.golang.org/genproto/googleapis/rpc/errdetails"
)

// Resolver finds message and extension types by name and by Any URL: the
// bundle's own first, then those linked into the binary.
type Resolver interface {
	protoregistry.MessageTypeResolver
	protoregistry.ExtensionTypeResolver
}

type resolver struct{ own *protoregistry.Types }

func (r resolver) FindMessageByName(n protoreflect.FullName) (protoreflect.MessageType, error) {
	if t, err := r.own.FindMessageByName(n); err == nil {
		return t, nil
	}
	return protoregistry.GlobalTypes.FindMessageByName(n)
}

func (r resolver) FindMessageByURL(u string) (protoreflect.MessageType, error) {
	if t, err := r.own.FindMessageByURL(u); err == nil {
		return t, nil
	}
	return protoregistry.GlobalTypes.FindMessageByURL(u)
}

func (r resolver) FindExtensionByName(n protoreflect.FullName) (protoreflect.ExtensionType, error) {
	if t, err := r.own.FindExtensionByName(n); err == nil {
		return t, nil
	}
	return protoregistry.GlobalTypes.FindExtensionByName(n)
}

func (r resolver) FindExtensionByNumber(m protoreflect.FullName, n protoreflect.FieldNumber) (protoreflect.ExtensionType, error) {
	if t, err := r.own.FindExtensionByNumber(m, n); err == nil {
		return t, nil
	}
	return protoregistry.GlobalTypes.FindExtensionByNumber(m, n)
}

// MaxJSONDepth bounds the nesting of a JSON request decoded into a
// message: deeper input is refused before it is parsed.
const MaxJSONDepth = 64

// RequestError is a request that does not decode into the RPC's message:
// it says what was wrong in words, never the library's text.
type RequestError struct {
	Message string // full name of the request message
	Problem string
}

func (e *RequestError) Error() string {
	return fmt.Sprintf("the arguments are not a %s message under the proto3 JSON mapping: %s", e.Message, e.Problem)
}

// Encode decodes the tool's JSON arguments into its request message under
// the proto3 JSON mapping; unknown fields are errors.
func (t *Tool) Encode(args json.RawMessage) (*dynamicpb.Message, error) {
	return DecodeMessage(t.method.Input(), t.Types(), args)
}

// DecodeMessage decodes data (JSON) into a new message of type md, with
// the proto3 JSON mapping's rules: field names as JSON names or as
// written, 64-bit integers as strings or numbers, enums by name, Any
// resolved by r.
func DecodeMessage(md protoreflect.MessageDescriptor, r Resolver, data []byte) (*dynamicpb.Message, error) {
	msg := dynamicpb.NewMessage(md)
	if len(strings.TrimSpace(string(data))) == 0 {
		return msg, nil
	}
	if jsonDepth(data) > MaxJSONDepth {
		return nil, &RequestError{Message: string(md.FullName()), Problem: fmt.Sprintf("it nests deeper than %d levels", MaxJSONDepth)}
	}
	if err := (protojson.UnmarshalOptions{Resolver: r, RecursionLimit: MaxJSONDepth + 1}).Unmarshal(data, msg); err != nil {
		return nil, &RequestError{Message: string(md.FullName()), Problem: cleanProtoError(err)}
	}
	return msg, nil
}

// EncodeJSON prints m under the proto3 JSON mapping (JSON names,
// unpopulated fields left out).
func EncodeJSON(m proto.Message, r Resolver) (json.RawMessage, error) {
	data, err := protojson.MarshalOptions{Resolver: r}.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("the message %s cannot be printed as JSON: %s", m.ProtoReflect().Descriptor().FullName(), cleanProtoError(err))
	}
	// protojson's output is deliberately unstable in spacing; compact it.
	return compact(data), nil
}

func compact(data []byte) json.RawMessage {
	var b bytes.Buffer
	if err := json.Compact(&b, data); err != nil {
		return data
	}
	return b.Bytes()
}

// cleanProtoError is protojson's message without its package prefix.
func cleanProtoError(err error) string {
	var s string
	for e := err; e != nil; e = errors.Unwrap(e) {
		s = e.Error()
	}
	s = strings.TrimPrefix(s, "proto: ")
	s = strings.TrimPrefix(s, "(line ")
	s = strings.ReplaceAll(s, "proto:\u00a0", "")
	s = strings.ReplaceAll(s, "proto: ", "")
	return s
}

// jsonDepth is the deepest nesting of arrays and objects in data (strings
// skipped).
func jsonDepth(data []byte) int {
	depth, maxDepth := 0, 0
	inStr, esc := false, false
	for _, c := range data {
		switch {
		case inStr:
			if esc {
				esc = false
			} else if c == '\\' {
				esc = true
			} else if c == '"' {
				inStr = false
			}
		case c == '"':
			inStr = true
		case c == '{' || c == '[':
			depth++
			maxDepth = max(maxDepth, depth)
		case c == '}' || c == ']':
			depth--
		}
	}
	return maxDepth
}
