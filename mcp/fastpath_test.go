package mcp

import (
	"bytes"
	"encoding/json"
	"testing"
	"unicode/utf8"
)

// tokenMembers counts the top-level members of the JSON object raw with
// encoding/json's tokenizer: what topMembers must agree with.
func tokenMembers(t testing.TB, raw []byte) int {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("%s: not an object", raw)
	}
	n := 0
	for dec.More() {
		if _, err := dec.Token(); err != nil {
			t.Fatal(err)
		}
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
		n++
	}
	return n
}

var memberCases = []string{
	`{}`, ` { } `, `{"a":1}`, `{"a":1,"a":2}`, `{"a,b":"c,d","e":"}"}`,
	`{"a":"\"","b":"\\","c":"\\\""}`, `{"a":[1,2,{"b":3,"c":[4,5]}],"d":{"e":{"f":6}}}`,
	`{"\u0061":1,"a":2,"\"":{"x":"]}"}}`, `{"a":{}} trailing, "b":1`, `{"a":[],"b":[[]],"c":""}`,
	`{"productId":"p-0001"}`, `{"é":"ü","a":null}`,
}

// TestTopMembersCountsAsTokenizer: checkAll skips the duplicate search
// when the decoded map has as many names as topMembers counts, so the
// count must be the tokenizer's on every object, whatever its strings hold.
func TestTopMembersCountsAsTokenizer(t *testing.T) {
	for _, c := range memberCases {
		if got, want := topMembers([]byte(c)), tokenMembers(t, []byte(c)); got != want {
			t.Errorf("topMembers(%s) = %d, the tokenizer counts %d", c, got, want)
		}
	}
}

func FuzzTopMembers(f *testing.F) {
	for _, c := range memberCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		raw = bytes.TrimSpace(raw)
		var v map[string]any
		if len(raw) == 0 || raw[0] != '{' || json.NewDecoder(bytes.NewReader(raw)).Decode(&v) != nil {
			return
		}
		if got, want := topMembers(raw), tokenMembers(t, raw); got != want {
			t.Fatalf("topMembers(%q) = %d, the tokenizer counts %d", raw, got, want)
		}
	})
}

// TestWalkFoldIsFoldBytes: the walk's allocation-free fold of an ASCII
// name is foldBytes's (the Kelvin sign and the long s fold k and s to
// their lower case too), non-ASCII names go to foldBytes, and a folded
// name stays right after the buffer behind it has grown.
func TestWalkFoldIsFoldBytes(t *testing.T) {
	var w envelopeWalk
	var names, folds [][]byte
	for c := range utf8.RuneSelf {
		for _, name := range [][]byte{{byte(c)}, {'x', byte(c), 'Y'}, bytes.Repeat([]byte{byte(c), 'Q'}, 40)} {
			names = append(names, name)
			folds = append(folds, w.fold(name))
		}
	}
	for _, name := range []string{"Kelvin\u212a", "ſtate", "ÉTÉ", "productId"} {
		names = append(names, []byte(name))
		folds = append(folds, w.fold([]byte(name)))
	}
	if len(w.folds) <= 256 {
		t.Fatalf("the fold buffer holds %d bytes; the test needs it to outgrow its first 256", len(w.folds))
	}
	for i, name := range names {
		if want := foldBytes(name); !bytes.Equal(folds[i], want) {
			t.Errorf("fold(%q) = %q, foldBytes says %q", name, folds[i], want)
		}
	}
}

var stringCases = []string{
	``, `"`, `""`, `"tools/call"`, `"getProduct"`, `"a\"b"`, `"a\\b"`, `"\u0041"`, "\"a\x01b\"",
	"\"\xff\"", `"é"`, `null`, `1`, `{}`, `"a" `, ` "a"`, `"a"b"`,
}

// TestJSONStringIsUnmarshal: checkStandardHeaders reads the method, name
// and protocol version with jsonString; it must say what json.Unmarshal
// into a string says, on every input.
func TestJSONStringIsUnmarshal(t *testing.T) {
	for _, c := range stringCases {
		checkJSONString(t, []byte(c))
	}
}

func FuzzJSONString(f *testing.F) {
	for _, c := range stringCases {
		f.Add([]byte(c))
	}
	f.Fuzz(checkJSONString)
}

func checkJSONString(t *testing.T, raw []byte) {
	var want string
	wantOK := json.Unmarshal(raw, &want) == nil
	if got, ok := jsonString(raw); got != want || ok != wantOK {
		t.Errorf("jsonString(%q) = %q, %v; json.Unmarshal gives %q, %v", raw, got, ok, want, wantOK)
	}
}

// TestJSONStringAllocs: a missing value (no _meta.protocolVersion, as in
// every 2025-era request) and a plain string make no decoder: nothing and
// the string alone.
func TestJSONStringAllocs(t *testing.T) {
	for _, c := range []struct {
		raw  []byte
		want float64
	}{{nil, 0}, {[]byte{}, 0}, {[]byte(`"tools/call"`), 1}} {
		if got := testing.AllocsPerRun(100, func() { _, _ = jsonString(c.raw) }); got != c.want {
			t.Errorf("jsonString(%q) allocates %v objects; want %v", c.raw, got, c.want)
		}
	}
}
