package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kubepact/kubepact/bundle/contract"
	"github.com/kubepact/kubepact/test/pactocompat"
)

// kinModule is the pinned kin-openapi module's directory in the module cache.
func kinModule(t testing.TB) string {
	t.Helper()
	dir, err := kinPatch().locate()
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// checkOnlyAppended holds a patched file to upstream's declarations and
// repl's besides.
func checkOnlyAppended(t *testing.T, file string, src, got, repl []byte) {
	t.Helper()
	want := decls(t, src)
	for _, d := range decls(t, repl) {
		if slices.Contains(want, d) {
			t.Errorf("%s: %s is upstream's already", file, d)
		}
		want = append(want, d)
	}
	slices.Sort(want)
	if got := decls(t, got); !reflect.DeepEqual(got, want) {
		t.Errorf("the patched %s declares %q; want upstream's and the helper's %q", file, got, want)
	}
}

var (
	// kinDeleteLine and kinPatchedLine read the upstream and patched
	// lines line by line, apart from the patch's own parsing.
	kinDeleteLine  = regexp.MustCompile(`^\s*delete\(x\.Extensions, ("[^"]*")\)$`)
	kinPatchedLine = regexp.MustCompile(`unmarshalExtensions\(data, &x\.Extensions((?:, "[^"]*")*)\)`)
	kinQuoted      = regexp.MustCompile(`"[^"]*"`)
)

// checkKinCalls holds one of openapi3's files to its patch: only the
// lines calling unmarshalJSON(data, &x.Extensions) change, each into a
// call of unmarshalExtensions that names exactly the keys deleted after
// it (read here line by line) and the comment marking the patch.
func checkKinCalls(t *testing.T, file string, src, got []byte) {
	t.Helper()
	sl, gl := strings.Split(string(src), "\n"), strings.Split(string(got), "\n")
	if len(sl) != len(gl) {
		t.Fatalf("the patched %s has %d lines; upstream %d", file, len(gl), len(sl))
	}
	changed := 0
	for i := range sl {
		if sl[i] == gl[i] {
			continue
		}
		changed++
		var deleted []string
		for _, l := range sl[i+1:] {
			if strings.Contains(l, "if len(x.Extensions) == 0") {
				break
			}
			if m := kinDeleteLine.FindStringSubmatch(l); m != nil {
				deleted = append(deleted, m[1])
			}
		}
		m := kinPatchedLine.FindStringSubmatch(gl[i])
		if m == nil || strings.Replace(gl[i], m[0], kinExtensionsCall, 1) != sl[i]+kinExtensionsPatched {
			t.Errorf("%s:%d: %q became %q, not a call of unmarshalExtensions", file, i+1, sl[i], gl[i])
			continue
		}
		if keys := kinQuoted.FindAllString(m[1], -1); !slices.Equal(keys, deleted) || len(keys) == 0 {
			t.Errorf("%s:%d: unmarshalExtensions skips %v; the method deletes %v", file, i+1, keys, deleted)
		}
	}
	if want := strings.Count(string(src), kinExtensionsCall); changed != want || want == 0 {
		t.Errorf("the patched %s changes %d lines; it calls %s %d times", file, changed, kinExtensionsCall, want)
	}
}

// kinSkipLists are the key lists the patched methods pass, read from the
// patched files.
func kinSkipLists(t testing.TB) [][]string {
	t.Helper()
	mod := kinModule(t)
	var lists [][]string
	for _, f := range kinFiles {
		src, err := os.ReadFile(filepath.Join(mod, "openapi3", f[0]))
		if err != nil {
			t.Fatal(err)
		}
		got, err := kinExtensions(src)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range kinPatchedLine.FindAllStringSubmatch(string(got), -1) {
			var keys []string
			for _, q := range kinQuoted.FindAllString(m[1], -1) {
				k, _ := strconv.Unquote(q)
				keys = append(keys, k)
			}
			lists = append(lists, keys)
		}
	}
	if len(lists) < 20 {
		t.Fatalf("%d patched calls, want every method's", len(lists))
	}
	return lists
}

// sameExtensions reports how unmarshalExtensions and upstream part on
// data, valid JSON, for a method that then deletes skip: upstream decodes
// data into the Extensions map and the method reads a skipped key's
// presence and nil-ness only, then deletes it. "" when they agree.
func sameExtensions(data []byte, skip []string) string {
	var want, got map[string]any
	wantErr := unmarshalJSON(data, &want)
	gotErr := unmarshalExtensions(data, &got, skip...)
	if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) || reflect.TypeOf(gotErr) != reflect.TypeOf(wantErr) {
		return fmt.Sprintf("error %T %v; upstream %T %v", gotErr, gotErr, wantErr, wantErr)
	}
	if (got == nil) != (want == nil) {
		return fmt.Sprintf("map %#v; upstream %#v", got, want)
	}
	for _, k := range skip {
		gv, gok := got[k]
		wv, wok := want[k]
		if gok != wok || (gv == nil) != (wv == nil) {
			return fmt.Sprintf("skipped %q: present %v nil %v; upstream present %v nil %v", k, gok, gv == nil, wok, wv == nil)
		}
		delete(got, k)
		delete(want, k)
	}
	if !reflect.DeepEqual(got, want) {
		return fmt.Sprintf("kept %#v; upstream %#v", got, want)
	}
	return ""
}

// kinExtensionSeeds are the edges where the one-pass reading and
// upstream's decoding could part: white space, escaped and non-ASCII keys,
// duplicate keys, numbers a float64 cannot hold (in kept and in skipped
// values, in a first duplicate), explicit nulls, values that are not
// objects.
var kinExtensionSeeds = []string{
	`{}`, ` { } `, `null`, ` null `, `[]`, `[{"x-a":1}]`, `"s"`, `1`, `true`,
	`{"type":"object","x-a":{"b":[1,2,{"c":null}]},"properties":{"a":{"type":"string"}}}`,
	` {"description" : "d" , "x-b" : true ,"Description":"other case"} `,
	"{\n\t\"responses\": null,\r\n\"x-\\u0041\": 1, \"x-\u00e9\": \"\\ud800\", \"\\u0074ype\": 2}",
	`{"x-a":1,"x-a":2}`, `{"x-a":1e400,"x-a":2}`, `{"maximum":1e400}`, `{"example":[1,{"a":-1E400}]}`,
	`{"x-big":1` + strings.Repeat("0", 320) + `}`, `{"default":1` + strings.Repeat("0", 320) + `}`,
	`{"default":1` + strings.Repeat("0", 320) + `,"default":1}`, `{"x-e":"1e400","enum":["1e400"]}`,
	`{"items":{"$ref":"#/x"},"x-s":"a\"b\\\\","required":["a","\"]"]}`, `{"responses":{},"tags":null,"x":null}`,
	`{"x-f":0.1,"x-g":-0,"x-h":12345678901234567890}`, `{"x-u":"\xff"}`,
}

// kinCorpus is every object in every OpenAPI document of the repository,
// the compatibility data (when present) and kin-openapi's testdata, each
// as the JSON kubepact hands kin-openapi.
func kinCorpus(t *testing.T) [][]byte {
	t.Helper()
	roots := []string{filepath.Join("..", ".."), filepath.Join(kinModule(t), "openapi3", "testdata")}
	if dir, skip, err := pactocompat.Lookup(); err != nil {
		t.Fatal(err)
	} else if skip != "" {
		t.Log(skip)
	} else {
		roots = append(roots, dir)
	}
	var out [][]byte
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if raw, err := contract.AppendJSON(nil, v); err == nil {
				out = append(out, raw)
			}
			for _, e := range v {
				walk(e)
			}
		case []any:
			for _, e := range v {
				walk(e)
			}
		}
	}
	for _, root := range roots {
		_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			// as kindiff does, no hidden directory: the repository's .cache
			// holds the GitHub spec and the clients' node_modules, whose
			// millions of nested objects take this test past its timeout
			// under -race, and belong to no document of ours
			if err == nil && d.IsDir() && p != root && strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".yaml") && !strings.HasSuffix(p, ".yml") && !strings.HasSuffix(p, ".json") {
				return err
			}
			raw, err := os.ReadFile(p)
			if err != nil || !bytes.Contains(raw, []byte("openapi")) {
				return err
			}
			if tree, err := contract.DecodeDocument("", raw, len(raw)); err == nil {
				if m, ok := tree.(map[string]any); ok && m["openapi"] != nil {
					walk(m)
				}
			}
			return nil
		})
	}
	if len(out) < 1000 {
		t.Fatalf("%d objects in the OpenAPI corpus, want more", len(out))
	}
	return out
}

// allKeys is every top-level key of data, when it is an object.
func allKeys(data []byte) []string {
	var m map[string]json.RawMessage
	_ = json.Unmarshal(data, &m)
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	return keys
}

// TestKinExtensionsMatchUpstream holds unmarshalExtensions to upstream's
// decoding on every seed and every object of the corpus, for every key list
// a patched method passes.
func TestKinExtensionsMatchUpstream(t *testing.T) {
	lists := kinSkipLists(t)
	inputs := kinCorpus(t)
	for _, s := range kinExtensionSeeds {
		inputs = append(inputs, []byte(s))
	}
	seen := map[string]bool{}
	n := 0
	for _, data := range inputs {
		if seen[string(data)] {
			continue
		}
		seen[string(data)] = true
		// each object with the next method's keys in turn, and with all of its own
		for _, skip := range [][]string{lists[n%len(lists)], allKeys(data)} {
			if d := sameExtensions(data, skip); d != "" {
				t.Fatalf("%q, skipping %q: %s", data, skip, d)
			}
		}
		n++
	}
	t.Logf("%d distinct objects, %d key lists", n, len(lists))
}

// FuzzKinExtensionsMatchUpstream is TestKinExtensionsMatchUpstream on any
// valid JSON (the methods call unmarshalExtensions once data has decoded
// into their struct, so it is valid).
func FuzzKinExtensionsMatchUpstream(f *testing.F) {
	for _, s := range kinExtensionSeeds {
		f.Add([]byte(s), uint8(0))
	}
	lists := kinSkipLists(f)
	f.Fuzz(func(t *testing.T, data []byte, which uint8) {
		if !json.Valid(data) {
			return
		}
		// a key list of the methods', or one that skips every key data has
		skip := lists[int(which)%len(lists)]
		if which == 255 {
			skip = allKeys(data)
		}
		if d := sameExtensions(data, skip); d != "" {
			t.Errorf("%q, skipping %q: %s", data, skip, d)
		}
	})
}

// TestKinPatchDifferential builds kindiff with upstream kin-openapi and
// with the patched copy, and runs both over every OpenAPI document and
// bundle of the repository, the compatibility data (when present),
// kin-openapi's testdata and the start benchmarks' fleet: each document's
// decoded and resolved openapi3.T (every field), its resolve and validate
// errors and each bundle's findings must be the same, byte for byte.
func TestKinPatchDifferential(t *testing.T) {
	if testing.Short() {
		t.Skip("builds kubepact's validation twice; run without -short")
	}
	dir := t.TempDir()
	work, err := write(dir, dir)
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"run", "./kindiff", "-fleet", "300", filepath.Join("..", ".."), filepath.Join(kinModule(t), "openapi3", "testdata")}
	if compat, skip, err := pactocompat.Lookup(); err != nil {
		t.Fatal(err)
	} else if skip != "" {
		t.Log(skip)
	} else {
		args = append(args, compat)
	}
	out := func(gowork string) string {
		cmd := exec.Command("go", args...)
		cmd.Env = append(os.Environ(), "GOWORK="+gowork)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		raw, err := cmd.Output()
		if err != nil {
			t.Fatalf("GOWORK=%s go %s: %v\n%s", gowork, strings.Join(args, " "), err, stderr.Bytes())
		}
		return string(raw)
	}
	upstream, patched := out("off"), out(work)
	last := upstream[strings.LastIndex(strings.TrimSuffix(upstream, "\n"), "\n")+1:]
	var specs, bundles int
	if _, err := fmt.Sscanf(last, "%d specs, %d bundles", &specs, &bundles); err != nil || specs < 350 || bundles < 320 {
		t.Fatalf("kindiff read too little: %q (%v)", last, err)
	}
	if patched != upstream {
		ul, pl := strings.Split(upstream, "\n"), strings.Split(patched, "\n")
		for i := range min(len(ul), len(pl)) {
			if ul[i] != pl[i] {
				t.Fatalf("the patched kin-openapi parts from upstream at line %d of kindiff's output:\n upstream %s\n patched  %s", i+1, ul[i], pl[i])
			}
		}
		t.Fatalf("kindiff's output: %d lines upstream, %d patched", len(ul), len(pl))
	}
	t.Logf("%s: the same with and without the patch", strings.TrimSpace(last))
}

// sameMaplike reports how unmarshalMaplike and maplikeValue part from
// upstream's Paths, Responses and Callback decoding on data: decoding it
// into a map, then for each member in key order keeping an x- member's
// value and re-encoding any other's with json.Marshal. "" when they agree.
func sameMaplike(data []byte) string {
	var want map[string]any
	wantErr := unmarshalJSON(data, &want)
	got, spans, gotErr := unmarshalMaplike(data)
	if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) || reflect.TypeOf(gotErr) != reflect.TypeOf(wantErr) {
		return fmt.Sprintf("error %T %v; upstream %T %v", gotErr, gotErr, wantErr, wantErr)
	}
	if (got == nil) != (want == nil) || len(got) != len(want) {
		return fmt.Sprintf("map %#v; upstream %#v", got, want)
	}
	for k, wv := range want {
		gv, ok := got[k]
		switch {
		case !ok:
			return fmt.Sprintf("no %q", k)
		case strings.HasPrefix(k, "x-"):
			if !reflect.DeepEqual(gv, wv) {
				return fmt.Sprintf("%q: %#v; upstream %#v", k, gv, wv)
			}
		default:
			wb, werr := json.Marshal(wv)
			gb, gerr := maplikeValue(spans, k, gv)
			if string(gb) != string(wb) || fmt.Sprint(gerr) != fmt.Sprint(werr) {
				return fmt.Sprintf("%q encodes as %s (%v); upstream %s (%v)", k, gb, gerr, wb, werr)
			}
		}
	}
	return ""
}

// canonicalIsMarshal reports where canonicalJSON is wrong about raw:
// saying a value is json.Marshal's encoding of its decoding when not.
func canonicalIsMarshal(raw []byte) string {
	if !json.Valid(raw) || !canonicalJSON(raw) {
		return ""
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return fmt.Sprintf("canonical, but does not decode: %v", err)
	}
	if re, err := json.Marshal(v); err != nil || string(re) != string(raw) {
		return fmt.Sprintf("canonical, but re-encodes as %s (%v)", re, err)
	}
	return ""
}

// kinMaplikeSeeds are the edges of canonicalJSON and the one-pass reading:
// key order (and keys a quote sorts differently), duplicates, white space,
// escapes and the characters json.Marshal escapes, non-ASCII, numbers
// json.Marshal writes otherwise (fractions, exponents, -0, 16 digits and
// more, leading zeros), and values that are not objects.
var kinMaplikeSeeds = []string{
	`{}`, ` {} `, `null`, `[]`, `"s"`, `{"/a":{"get":{}}}`, `{"/a":{},"/b":{"x-c":1}}`, `{"/b":{},"/a":{}}`,
	`{"/a":{"a":1,"a!":2}}`, `{"/a":{"a!":1,"a":2}}`, `{"/a":{"a":1,"a":2}}`, `{"/a":{},"/a":{"x":1}}`, `{"/a":{},"/a":{"x":1.5}}`,
	`{"/a":{"x":1},"/a":1e400}`, `{"/a":{"x":1e400}}`, `{"x-a":1e400}`, `{"x-a":{"b":[1,2]},"200":{"description":"ok"}}`,
	`{"/a": {"get":{}}}`, `{"/a":{"d":"a<b"}}`, `{"/a":{"d":"a\u003cb"}}`, `{"/a":{"d":"\u00e9"}}`, "{\"/a\":{\"d\":\"\u00e9\"}}",
	`{"/a":{"n":1.5}}`, `{"/a":{"n":1.0}}`, `{"/a":{"n":1e2}}`, `{"/a":{"n":-0}}`, `{"/a":{"n":0}}`, `{"/a":{"n":-12}}`,
	`{"/a":{"n":123456789012345}}`, `{"/a":{"n":1234567890123456}}`, `{"/a":{"n":12345678901234567890}}`,
	`{"/a":[true,false,null,[],{}]}`, `{"/a":"x","x-b":null,"/c":null}`, "{\"/a\":\"\xff\"}",
}

// TestMaplikeMatchesUpstream holds unmarshalMaplike and maplikeValue to
// upstream's decoding and re-encoding on every seed and corpus object, and
// canonicalJSON to json.Marshal; and checks the patch does its work: the
// corpus's objects are mostly canonical.
func TestMaplikeMatchesUpstream(t *testing.T) {
	inputs := kinCorpus(t)
	canonical := 0
	for _, data := range inputs {
		if canonicalJSON(data) {
			canonical++
		}
	}
	if canonical < len(inputs)/2 {
		t.Errorf("%d of %d corpus objects are canonical: the patch would save little", canonical, len(inputs))
	}
	for _, s := range kinMaplikeSeeds {
		inputs = append(inputs, []byte(s))
	}
	for _, data := range inputs {
		if d := sameMaplike(data); d != "" {
			t.Fatalf("%q: %s", data, d)
		}
		if d := canonicalIsMarshal(data); d != "" {
			t.Fatalf("%q: %s", data, d)
		}
	}
	t.Logf("%d objects, %d canonical", len(inputs), canonical)
}

// FuzzMaplikeMatchesUpstream is TestMaplikeMatchesUpstream on any input.
func FuzzMaplikeMatchesUpstream(f *testing.F) {
	for _, s := range kinMaplikeSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if d := sameMaplike(data); d != "" {
			t.Errorf("%q: %s", data, d)
		}
		if d := canonicalIsMarshal(data); d != "" {
			t.Errorf("%q: %s", data, d)
		}
	})
}
