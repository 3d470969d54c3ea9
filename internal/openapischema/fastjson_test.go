package openapischema

import (
	"bytes"
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/kubepact/kubepact/bundle/contract"
	"github.com/kubepact/kubepact/test/largeapi"
)

// fastJSONCases are documents fastJSON must decode as contract's decoder
// does (accepted: true) or decline, leaving the error to the slow path.
var fastJSONCases = []struct {
	doc      string
	accepted bool
}{
	{`{}`, true},
	{"\ufeff {\"a\": 1}\n", true},
	{`{"paths":{"/a/{b}":{"get":{"x":1},"post":{}},"/c~d":{"put":[]}},"info":{"title":"t"}}`, true},
	{`{"a":[1,-0,0.5,-1.25e3,1E+2,2e-2,12345678901234567890,9223372036854775807,-9223372036854775808],"b":[true,false,null,[],{}]}`, true},
	{`{"s":"plain","e":"q\"b\\s\/b\bf\fn\nr\rt\t","u":"\u00e9\u20ac\ud83d\ude80 and \n after","lone":"\ud800x\udc00","mixed":"é\u0041é"}`, true},
	{"{\"bad utf8\":\"a\xffb\xc3\",\"\xfe\":1}", true},
	{"{\"nested\":[[[[{\"deep\":[{\"x\":[1]}]}]]]],\"servers\":[{\"url\":\"http://x\",\"z\":1}]}", true},
	{"{ \"ws\" :\t[ 1 ,\r\n 2 ] , \"k\" : { } }  \n", true},
	// Declined: the slow path gives the error.
	{``, false},
	{`[]`, false},
	{`{"a":1,}`, false},
	{`{"a":[1,]}`, false},
	{`{"a":1}{}`, false},
	{`{"a":1} x`, false},
	{`{"a":1,"a":2}`, false},
	{`{"a":01}`, false},
	{`{"a":1.}`, false},
	{`{"a":.5}`, false},
	{`{"a":1e}`, false},
	{`{"a":-}`, false},
	{`{"a":1-2}`, false},
	{`{"a":1e400}`, false},
	{`{"a":truex}`, false},
	{`{"a":tru}`, false},
	{`{"a":nul}`, false},
	{`{"a":"x\q"}`, false},
	{`{"a":"x\u12"}`, false},
	{"{\"a\":\"tab\there\"}", false},
	{`{"a":"open`, false},
	{`{"a" 1}`, false},
	{`{a:1}`, false},
	{`{"a":1`, false},
	{strings.Repeat(`{"a":`, contract.MaxDepth+2) + "1" + strings.Repeat("}", contract.MaxDepth+2), false},
	{`{"a":` + strings.Repeat("[", contract.MaxDepth+2) + strings.Repeat("]", contract.MaxDepth+2) + "}", false},
}

// checkFastJSON decodes doc both ways and fails t if fastJSON accepts what
// the slow path refuses or decodes it differently.
func checkFastJSON(t *testing.T, doc []byte, maxBytes int) (accepted bool) {
	t.Helper()
	tree, order, err := fastJSON(bytes.NewReader(doc), maxBytes, 3)
	if err != nil && !errors.Is(err, errFastJSON) {
		t.Fatalf("fastJSON error %v, want errFastJSON", err)
	}
	wantTree, wantOrder, wantErr := contract.DecodeJSONStream(bytes.NewReader(doc), maxBytes, 3, func() ([]byte, error) { return doc, nil })
	if err != nil {
		return false
	}
	if wantErr != nil {
		t.Fatalf("fastJSON accepted %.200q, which the slow path refuses: %v", doc, wantErr)
	}
	if !reflect.DeepEqual(tree, wantTree) {
		t.Fatalf("fastJSON tree of %.200q differs:\n got %#v\nwant %#v", doc, tree, wantTree)
	}
	if !reflect.DeepEqual(order, wantOrder) {
		t.Fatalf("fastJSON key order of %.200q differs:\n got %#v\nwant %#v", doc, order, wantOrder)
	}
	return true
}

func TestFastJSONMatches(t *testing.T) {
	for _, tc := range fastJSONCases {
		if got := checkFastJSON(t, []byte(tc.doc), 1<<20); got != tc.accepted {
			t.Errorf("fastJSON accepted %.80q: %v, want %v", tc.doc, got, tc.accepted)
		}
	}
	t.Run("limit", func(t *testing.T) {
		doc := []byte(`{"a":"0123456789"}`)
		if checkFastJSON(t, doc, len(doc)-1) {
			t.Error("fastJSON accepted a document over the limit")
		}
		if !checkFastJSON(t, doc, len(doc)) {
			t.Error("fastJSON declined a document at the limit")
		}
	})
	t.Run("swagger2.json", func(t *testing.T) {
		doc, err := os.ReadFile("../openapitools/testdata/swagger2.json")
		if err != nil {
			t.Fatal(err)
		}
		if !checkFastJSON(t, doc, 1<<20) {
			t.Error("fastJSON declined swagger2.json")
		}
	})
}

// TestFastJSONGitHub decodes GitHub's REST API description both ways
// (skipped without it).
func TestFastJSONGitHub(t *testing.T) {
	doc := largeapi.GitHubSpec(t)
	if !checkFastJSON(t, doc, 16<<20) {
		t.Error("fastJSON declined GitHub's REST API description")
	}
}

// TestLoadDocumentFallsBack: a document fastJSON declines still gets the
// slow path's error, with its line and column.
func TestLoadDocumentFallsBack(t *testing.T) {
	fsys := fstest.MapFS{"api.json": {Data: []byte("{\"openapi\": \"3.0.0\",\n  \"paths\": {,}}")}}
	_, err := LoadDocument(fsys, "api.json", 1<<20)
	if err == nil || !strings.Contains(err.Error(), "api.json") || !strings.Contains(err.Error(), "line 2") {
		t.Fatalf("error = %v, want the slow path's, at line 2", err)
	}
}

func FuzzFastJSON(f *testing.F) {
	for _, tc := range fastJSONCases {
		f.Add([]byte(tc.doc))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		checkFastJSON(t, doc, 1<<16)
	})
}

// BenchmarkDecodeGitHub compares fastJSON with the slow path on GitHub's
// REST API description (skipped without it).
func BenchmarkDecodeGitHub(b *testing.B) {
	doc := largeapi.GitHubSpec(b)
	b.Run("fast", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, _, err := fastJSON(bytes.NewReader(doc), 16<<20, 3); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("slow", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, _, err := contract.DecodeJSONStream(bytes.NewReader(doc), 16<<20, 3, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
}
