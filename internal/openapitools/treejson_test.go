package openapitools

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"testing"

	"github.com/kubepact/kubepact/bundle/contract"
	"github.com/kubepact/kubepact/test/largeapi"
)

// checkMarshalTree fails t unless marshalTree writes v as json.Marshal does.
func checkMarshalTree(t *testing.T, v any) {
	t.Helper()
	want, wantErr := json.Marshal(v)
	got, err := marshalTree(v)
	if (err != nil) != (wantErr != nil) {
		t.Fatalf("marshalTree(%#v) error %v, json.Marshal's %v", v, err, wantErr)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("marshalTree(%#v):\n got %.300s\nwant %.300s", v, got, want)
	}
}

func TestMarshalTreeMatches(t *testing.T) {
	for _, v := range []any{
		nil, true, false, int64(-12), 7, 0.5, 1e21, math.Copysign(0, -1), float64(1 << 60), "",
		"plain", "q\"b\\s/", "nl\nret\rtab\t", "bell\a back\b ff\f nul\x00", "<a href=\"x\">&amp;</a>",
		"é € 🚀", "bad\xffutf8\xc3", "sep\u2028par\u2029", "\x7f del",
		map[string]any{}, map[string]any(nil), []any{}, []any(nil),
		map[string]any{"b": 1, "a": []any{"x", nil, map[string]any{"<": ">", "é": true}}, "B": "", "\xff": 1},
		[]any{[]string{"typed"}, map[string]string{"z": "y", "a": "b"}, json.RawMessage(`{"raw" : 1}`), uint8(3)},
		map[string]any{"bad": math.NaN()},
		[]any{func() {}},
		map[string]any{"n": json.Number("1.50"), "m": []any{json.Number("-7")}},
	} {
		checkMarshalTree(t, v)
	}
	t.Run("swagger2.json", func(t *testing.T) {
		doc, err := os.ReadFile("testdata/swagger2.json")
		if err != nil {
			t.Fatal(err)
		}
		tree, err := contract.DecodeDocument("swagger2.json", doc, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		checkMarshalTree(t, tree)
	})
}

// TestMarshalTreeGitHub writes GitHub's REST API description both ways
// (skipped without it).
func TestMarshalTreeGitHub(t *testing.T) {
	doc := largeapi.GitHubSpec(t)
	tree, err := contract.DecodeDocument("api.json", doc, 16<<20)
	if err != nil {
		t.Fatal(err)
	}
	checkMarshalTree(t, tree)
}
