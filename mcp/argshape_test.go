package mcp

import (
	"bytes"
	"encoding/json"
	"reflect"
	"sort"
	"testing"
)

// argShapeDecoded is argShape as it was before it read members in place:
// the object decoded into a map of raw values. It is the reference the
// scan is held to.
func argShapeDecoded(raw json.RawMessage) any {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return map[string]string{}
	}
	var obj map[string]json.RawMessage
	if raw[0] != '{' || json.Unmarshal(raw, &obj) != nil {
		return jsonType(raw)
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	shape := make(map[string]string, len(obj))
	for _, k := range keys {
		shape[k] = jsonType(bytes.TrimSpace(obj[k]))
	}
	return shape
}

// argShapeSeeds are the edges a scan could part from decoding on: white
// space everywhere, repeated names (the last wins), escaped and non-ASCII
// names, invalid UTF-8, nesting with brackets and quotes inside strings,
// invalid objects, and values that are not objects.
var argShapeSeeds = []string{
	`{"name":"secret","n":3,"ok":true,"l":[1],"o":{"a":1},"z":null}`,
	` { "a" : 1 , "b" :"x" ,"c":[ ] } `, "{\n\t\"a\"\r\n:\tfalse\n}",
	`{"a":1,"a":"x"}`, `{"a":"x","a":{"b":1}}`, `{"\u0061":1,"a":"x"}`, `{"a\"b":[1,"]}"],"c\\":{"}":"{"}}`,
	`{"é":1}`, "{\"\xff\":1}", `{"\ud800":1}`, `{"":-1.5e3}`, `{}`, `{ }`,
	`{"a":1,}`, `{"a":1`, `{"a" 1}`, `{a:1}`, `{"a":1}x`, `{"a":1}{"b":2}`,
	``, ` `, `null`, `[1]`, `"x"`, `12`, `-1`, `true`, `x`,
}

func TestArgShapeMatchesDecoding(t *testing.T) {
	for _, s := range argShapeSeeds {
		if got, want := argShape(json.RawMessage(s)), argShapeDecoded(json.RawMessage(s)); !reflect.DeepEqual(got, want) {
			t.Errorf("argShape(%q) = %#v; decoding gives %#v", s, got, want)
		}
	}
}

func FuzzArgShapeMatchesDecoding(f *testing.F) {
	for _, s := range argShapeSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if got, want := argShape(raw), argShapeDecoded(raw); !reflect.DeepEqual(got, want) {
			t.Errorf("argShape(%q) = %#v; decoding gives %#v", raw, got, want)
		}
	})
}

// TestArgShapeAllocations is what the scan is for: the shape of one
// argument costs the map and its entry, not a decoded copy of the object.
func TestArgShapeAllocations(t *testing.T) {
	raw := json.RawMessage(`{"productId":"p-0001"}`)
	scan := testing.AllocsPerRun(100, func() { _ = argShape(raw) })
	decoded := testing.AllocsPerRun(100, func() { _ = argShapeDecoded(raw) })
	t.Logf("objects per shape: scan %.0f, decoding %.0f", scan, decoded)
	if scan >= decoded {
		t.Errorf("objects per shape: scan %.0f, decoding %.0f; want fewer", scan, decoded)
	}
}
