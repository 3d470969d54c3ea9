package contract

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// TestAppendJSONIsMarshal: for every kind of value a decoded tree holds,
// and for every document of the repository's test data, AppendJSON writes
// the bytes json.Marshal writes, and fails where Marshal fails.
func TestAppendJSONIsMarshal(t *testing.T) {
	trees := []any{
		nil, true, false, int64(0), int64(-7), int64(math.MaxInt64), int64(math.MinInt64),
		0.0, math.Copysign(0, -1), 0.1, 1.5, -2.25, 1e20, 1e21, 1e-6, 1e-7, 123456789.125, math.MaxFloat64, math.SmallestNonzeroFloat64,
		"", "plain", `q"uote`, `back\slash`, "<b>&amp;</b>", "tab\tnl\nbs\bff\fcr\r\x01\x1f", "caf\u00e9", "\u2028\u2029", "bad \xff utf8", "emoji \U0001F680",
		[]any{}, []any(nil), map[string]any{}, map[string]any(nil),
		map[string]any{"b": int64(1), "a": []any{"x", nil, map[string]any{"z": 0.5, "<": "&"}}, "": true, "B": false, "é": "ü"},
		json.Number("12"), // not a tree type: Marshal's own bytes
	}
	for _, tree := range trees {
		assertMarshalBytes(t, tree)
	}
	for _, bad := range []any{math.Inf(1), math.NaN(), map[string]any{"x": []any{math.Inf(-1)}}} {
		want, wantErr := json.Marshal(bad)
		got, err := AppendJSON(nil, bad)
		if wantErr == nil || err == nil || err.Error() != wantErr.Error() {
			t.Errorf("AppendJSON(%v) = %q, %v; Marshal %q, %v", bad, got, err, want, wantErr)
		}
	}
	n := 0
	for _, dir := range []string{"testdata", "../validate/testdata", "../../examples"} {
		err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			if ext := filepath.Ext(p); ext != ".yaml" && ext != ".yml" && ext != ".json" {
				return nil
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			tree, err := DecodeDocument(p, data, len(data))
			if err != nil {
				return nil // not a document: nothing to write
			}
			n++
			assertMarshalBytes(t, tree)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if n < 20 {
		t.Fatalf("only %d documents of the test data decoded; the comparison needs real ones", n)
	}
}

func assertMarshalBytes(t *testing.T, tree any) {
	t.Helper()
	want, err := json.Marshal(tree)
	if err != nil {
		t.Fatalf("Marshal(%v): %v", tree, err)
	}
	got, err := AppendJSON([]byte("prefix"), tree)
	if err != nil || !bytes.Equal(got, append([]byte("prefix"), want...)) {
		t.Errorf("AppendJSON(%v) = %q, %v\nMarshal writes %q", tree, got, err, want)
	}
}

// FuzzAppendJSON: whatever document decodes, AppendJSON writes Marshal's
// bytes for its tree.
func FuzzAppendJSON(f *testing.F) {
	f.Add([]byte("openapi: 3.0.3\ninfo: {title: \"<x>\", version: 1.0}\npaths: {}\nn: [1, 2.5, -0.0, 1e300, true, null, \"\\u2028\"]\n"))
	f.Add([]byte(`{"a": {"b": [1e-9, "caf\u00e9", "\ud83d\ude80"]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		tree, err := DecodeDocument("", data, 1<<16)
		if err != nil {
			return
		}
		assertMarshalBytes(t, tree)
	})
}
