package mcp

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/kubepact/kubepact/bundle/authoring"
)

// FuzzDecodeArgs feeds arbitrary bytes to the argument decoders of the
// authoring tools and of a plain tool. Whatever arrives, decoding must not
// panic, and an error must be one the envelope can carry: a code and a
// message, never a Go rendering of a value; what decodes must survive a
// re-encode and decode unchanged (authoring.Metadata keeps key order).
func FuzzDecodeArgs(f *testing.F) {
	for _, seed := range []string{
		``, `null`, `{}`, `[]`, `"x"`, `{"name":"orders"}`,
		`{"name":"orders","interfaces":[{"name":"api","type":"openapi"}]}`,
		`{"name":"orders","interfaces":"[{\"name\":\"api\",\"type\":\"openapi\"}]"}`,
		`{"path":"a","add_interfaces":3}`, `{"path":"a","set_metadata":{"k":"v"}}`,
		`{"Name":"x"}`, `{"dryRun":true}`, `{"name":"a","name":"b"}`, `{"name":null}`,
		`{"workload":"daemon"}`, `{"count":1e400}`, `{"name":"\ud800"}`, `{"a":{"b":[[[[{}]]]]}}`,
		`{"path":"a","remove_interfaces":["a","b"],"remove_metadata":"[\"k\"]"}`,
		`{"path":"a","set_metadata":{"a":{"b":[1,2.5,true,null]}}}`, `{"path":"a","set_metadata":"{\"a\":1}"}`,
		`{"path":"a","set_metadata":{"a":{"b":1,"b":2}}}`, `{"path":"a","add_interfaces":[null]}`,
		`{"path":"a","add_dependencies":[{"ref":"oci://r/x:1"}],"remove_dependencies":["oci://r/y"]}`,
		`{"path":"a","add_config_properties":[{"name":"PORT","type":"integer","required":true}]}`,
		`{"name":"orders","interfaces":[{"name":"x","type":"asyncapi"}],"metadata":{"k":"v","n":1e3}}`,
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
		{"pacto_create", mustDecoder(f, createIn), func() any { return new(authoring.CreateRequest) }},
		{"pacto_edit", mustDecoder(f, editIn), func() any { return new(authoring.EditRequest) }},
		{"echo", mustDecoder(f, echoIn), func() any { return new(echoArgs) }},
	}

	f.Fuzz(func(t *testing.T, raw []byte) {
		for _, d := range decoders {
			dst := d.dst()
			err := d.dec.decode(json.RawMessage(raw), dst)
			if err == nil {
				// What was handed on re-encodes to arguments that decode
				// to the same values.
				first, err := json.Marshal(dst)
				if err != nil {
					t.Fatalf("%s: re-encoding what %q decoded to: %v", d.name, raw, err)
				}
				again := d.dst()
				if err := d.dec.decode(first, again); err != nil {
					t.Fatalf("%s: %q decoded, but its re-encoding %s does not: %v", d.name, raw, first, err)
				}
				if second, _ := json.Marshal(again); string(second) != string(first) {
					t.Fatalf("%s: round trip of %q changed the values:\n%s\n%s", d.name, raw, first, second)
				}
				continue
			}
			te := asToolError(err)
			if te.Code == "" || te.Message == "" {
				t.Errorf("%s: error without code or message for %q: %#v", d.name, raw, te)
			}
			if strings.Contains(te.Message, "map[") || strings.Contains(te.Message, "validating") {
				t.Errorf("%s: %q: the message shows Go or validator text: %s", d.name, raw, te.Message)
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

func mustDecoder(f *testing.F, s *jsonschema.Schema) *argDecoder {
	f.Helper()
	d, err := newArgDecoder(s)
	if err != nil {
		f.Fatal(err)
	}
	return d
}
