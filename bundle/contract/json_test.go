package contract

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDecodeDocumentJSON(t *testing.T) {
	// YAML forbids the escaped surrogate pair every ASCII-only JSON encoder
	// writes for an emoji; as JSON it is one character.
	doc := []byte(`{"info": {"title": "Launch \ud83d\ude80", "n": 3, "f": 1.5, "big": 18446744073709551616, "z": null, "b": [true, {}]}}`)
	for _, name := range []string{"openapi.json", "openapi.yaml", ""} {
		tree, err := DecodeDocument(name, doc, 1<<20)
		if err != nil {
			t.Fatalf("%q: %v", name, err)
		}
		want := map[string]any{"info": map[string]any{"title": "Launch 🚀", "n": int64(3), "f": 1.5, "big": 18446744073709551616.0, "z": nil, "b": []any{true, map[string]any{}}}}
		if diff := cmp.Diff(want, tree); diff != "" {
			t.Errorf("%q (-want +got):\n%s", name, diff)
		}
	}
	if _, err := DecodeGenericLimit(doc, 1<<20); err == nil {
		t.Log("the YAML parser now accepts surrogate pairs too")
	}
	// Key order is kept where asked.
	_, order, err := DecodeJSON([]byte(`{"paths": {"/b": {"post": {}, "get": {}}, "/a~x": {}}, "openapi": "3.0.0"}`), 1<<20, 3)
	if err != nil {
		t.Fatal(err)
	}
	wantOrder := map[string][]string{"": {"paths", "openapi"}, "/paths": {"/b", "/a~x"}, "/paths/~1b": {"post", "get"}, "/paths/~1a~0x": nil}
	if diff := cmp.Diff(wantOrder, order); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
}

func TestDecodeJSONRefusals(t *testing.T) {
	for _, tc := range []struct{ doc, want string }{
		{`{"a": 1, "a": 2}`, `line 1, column 13: key "a" appears twice`},
		{`[1]`, "root must be an object, got an array"},
		{`{"a": 1} {}`, "more content after the JSON object"},
		{`{"a": 1e400}`, "number 1e400 is out of range"},
		{"{\n  \"a\": tru\n}", "line 2"},
		{`{"a": [`, "invalid JSON"},
		{``, "document is empty"},
		{`{"a":` + strings.Repeat(`[`, 100) + strings.Repeat(`]`, 100) + `}`, "deeper than 64 levels"},
	} {
		_, _, err := DecodeJSON([]byte(tc.doc), 1<<20, 0)
		var pe *ParseError
		if !errors.As(err, &pe) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%.40q: got %v; want a ParseError with %q", tc.doc, err, tc.want)
		}
	}
	if _, _, err := DecodeJSON([]byte(`{"a": "xxxxxxxx"}`), 8, 0); err == nil || !strings.Contains(err.Error(), "the limit is 8 bytes") {
		t.Errorf("size limit: %v", err)
	}
}

// FuzzDecodeJSONDifferential: any document encoding/json accepts as an
// object (with no key twice and within the nesting bound) decodes to the
// same tree through DecodeDocument, whatever the file is called.
// Numbers are compared as float64, encoding/json's own type for them.
func FuzzDecodeJSONDifferential(f *testing.F) {
	for _, seed := range []string{
		`{}`, `{"a": "\ud83d\ude80", "b": [1, 2.5, -0, 1e3, null, true]}`,
		`{"openapi": "3.1.0", "paths": {"/x": {"get": {"responses": {"200": {"description": "\u00e9\n"}}}}}}`,
		"{\"a\":\"\xff\"}", `{"a": 9223372036854775808, "b": -9223372036854775808}`, ` {"k": {"k": {"k": []}}} `,
		`{"a": "\udc00"}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var want map[string]any
		if json.Unmarshal(data, &want) != nil || want == nil {
			return
		}
		got, err := DecodeDocument("spec.json", data, len(data)+1)
		if err != nil {
			var pe *ParseError
			if errors.As(err, &pe) && (strings.Contains(pe.Message, "appears twice") || strings.Contains(pe.Message, "deeper than")) {
				return // refused on purpose, with the reason
			}
			t.Fatalf("encoding/json accepts %q; DecodeDocument: %v", data, err)
		}
		if diff := cmp.Diff(want, asFloats(got)); diff != "" {
			t.Fatalf("%q (-encoding/json +DecodeDocument):\n%s", data, diff)
		}
		if !IsJSON("", data) {
			t.Fatalf("%q starts like JSON but IsJSON says no", data)
		}
	})
}

func asFloats(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = asFloats(e)
		}
	case []any:
		for i, e := range x {
			x[i] = asFloats(e)
		}
	case int64:
		return float64(x)
	}
	return v
}

// TestDecodeJSONStream: decoding from a reader gives DecodeJSON's tree,
// key order and errors (their line and column from the bytes read again),
// with a BOM skipped, and refuses more than maxBytes.
func TestDecodeJSONStream(t *testing.T) {
	docs := []string{
		`{"paths": {"/b": {"post": {}, "get": {}}, "/a~x": {}}, "openapi": "3.0.0", "n": 3, "f": 1.5, "s": "Launch \ud83d\ude80"}`,
		"\ufeff{\"a\": [true, null, {}]}",
		`{"a": 1, "a": 2}`, `[1]`, `{"a": 1} {}`, `{"a": 1e400}`, "{\n  \"a\": tru\n}", `{"a": [`, ``,
	}
	for _, doc := range docs {
		wantTree, wantOrder, wantErr := DecodeJSON([]byte(doc), 1<<20, 3)
		reread := 0
		tree, order, err := DecodeJSONStream(strings.NewReader(doc), 1<<20, 3, func() ([]byte, error) { reread++; return []byte(doc), nil })
		if diff := cmp.Diff(wantTree, tree); diff != "" {
			t.Errorf("%.40q: tree (-DecodeJSON +stream):\n%s", doc, diff)
		}
		if diff := cmp.Diff(wantOrder, order); diff != "" {
			t.Errorf("%.40q: order (-DecodeJSON +stream):\n%s", doc, diff)
		}
		if fmt.Sprint(err) != fmt.Sprint(wantErr) {
			t.Errorf("%.40q: error %v; DecodeJSON says %v", doc, err, wantErr)
		}
		if err == nil && reread != 0 {
			t.Errorf("%.40q: the document was read again without an error", doc)
		}
	}
	if _, _, err := DecodeJSONStream(strings.NewReader(`{"a": "xxxxxxxx"}`), 8, 0, nil); err == nil || !strings.Contains(err.Error(), "the limit is 8 bytes") {
		t.Errorf("size limit: %v", err)
	}
}
