package mcp

import (
	"encoding/json"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/kubepact/kubepact/bundle/authoring"
)

// FuzzDecodeArgs feeds arbitrary bytes to the argument decoders of the
// authoring tools (schema check + authoring.DecodeArgs) and of a
// schema-only tool. Whatever arrives, decoding must not panic, and an error
// must be one the envelope can carry: a code, a message, and for argument
// errors the accepted names.
func FuzzDecodeArgs(f *testing.F) {
	for _, seed := range []string{
		``, `null`, `{}`, `[]`, `"x"`, `{"name":"orders"}`,
		`{"name":"orders","interfaces":[{"name":"api","type":"openapi"}]}`,
		`{"name":"orders","interfaces":"[{\"name\":\"api\",\"type\":\"openapi\"}]"}`,
		`{"path":"a","add_interfaces":3}`, `{"path":"a","set_metadata":{"k":"v"}}`,
		`{"Name":"x"}`, `{"dryRun":true}`, `{"name":"a","name":"b"}`, `{"name":null}`,
		`{"workload":"daemon"}`, `{"count":1e400}`, `{"name":"\ud800"}`, `{"a":{"b":[[[[{}]]]]}}`,
	} {
		f.Add([]byte(seed))
	}

	createIn, err := authoringInput[authoring.CreateRequest]()
	if err != nil {
		f.Fatal(err)
	}
	editIn, err := authoringInput[authoring.EditRequest]()
	if err != nil {
		f.Fatal(err)
	}
	echoIn, err := jsonschema.For[echoArgs](nil)
	if err != nil {
		f.Fatal(err)
	}
	decoders := []struct {
		name string
		dec  *argDecoder
		dst  func() any
	}{
		{"pacto_create", mustDecoder(f, createIn, authoring.DecodeArgs), func() any { return new(authoring.CreateRequest) }},
		{"pacto_edit", mustDecoder(f, editIn, authoring.DecodeArgs), func() any { return new(authoring.EditRequest) }},
		{"echo", mustDecoder(f, echoIn, nil), func() any { return new(echoArgs) }},
	}

	f.Fuzz(func(t *testing.T, raw []byte) {
		for _, d := range decoders {
			err := d.dec.decode(json.RawMessage(raw), d.dst())
			if err == nil {
				continue
			}
			te := asToolError(err)
			if te.Code == "" || te.Message == "" {
				t.Errorf("%s: error without code or message for %q: %#v", d.name, raw, te)
			}
			if te.Code == CodeInternal {
				t.Errorf("%s: decoding %q is an INTERNAL error: %v", d.name, raw, te)
			}
			if res := errorResult(err); !res.IsError {
				t.Errorf("%s: errorResult is not an error result", d.name)
			}
		}
	})
}

func mustDecoder(f *testing.F, s *jsonschema.Schema, unmarshal func(json.RawMessage, any) error) *argDecoder {
	f.Helper()
	d, err := newArgDecoder(s, unmarshal)
	if err != nil {
		f.Fatal(err)
	}
	return d
}
