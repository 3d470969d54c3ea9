package main

import (
	"encoding/json"
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// TestUpstreamUnchanged fails when a patched module in go.mod is not the
// version, or one of its files not the file, the patch was written
// against: an upgrade must look again at what each patch replaces.
func TestUpstreamUnchanged(t *testing.T) {
	for _, m := range patches {
		mod, err := m.locate()
		if err != nil {
			t.Error(err)
			continue
		}
		for _, f := range m.files {
			src, err := os.ReadFile(filepath.Join(mod, filepath.FromSlash(f.file)))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := m.patch(f, src); err != nil {
				t.Error(err)
			}
			if _, err := m.patch(f, append(src, "\n// changed\n"...)); err == nil || !strings.Contains(err.Error(), "upstream changed") {
				t.Errorf("%s %s: a changed upstream file gave %v; want the refusal that says upstream changed", m.module, f.file, err)
			}
		}
	}
}

// TestPatchReplacesOnlyWhatItSays writes the patched workspace and checks
// it: the go.work uses this module and replaces each pinned module with
// its copy; each copy's Go files are upstream's byte for byte but the
// patched ones, each of which parses, declares what upstream's declares
// (and the helpers its replacement brings) and differs only where its
// patch says.
func TestPatchReplacesOnlyWhatItSays(t *testing.T) {
	dir := t.TempDir()
	work, err := write(dir, dir)
	if err != nil {
		t.Fatal(err)
	}
	root, _, _ := mainModule()
	raw, err := os.ReadFile(work)
	if err != nil {
		t.Fatal(err)
	}
	if want := "use " + strconv.Quote(root); !strings.Contains(string(raw), want) {
		t.Errorf("go.work lacks %q:\n%s", want, raw)
	}
	checked := 0
	for _, m := range patches {
		copied := filepath.Join(dir, m.dir)
		if want := "replace " + m.module + " " + m.version + " => ./" + m.dir + "\n"; !strings.Contains(string(raw), want) {
			t.Errorf("go.work lacks %q:\n%s", want, raw)
		}
		mod, _ := m.locate()
		n := 0
		err = filepath.WalkDir(copied, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			n++
			rel, _ := filepath.Rel(copied, path)
			got, _ := os.ReadFile(path)
			src, err := os.ReadFile(filepath.Join(mod, rel))
			if err != nil {
				return err
			}
			i := slices.IndexFunc(m.files, func(f filePatch) bool { return f.file == filepath.ToSlash(rel) })
			if i < 0 {
				if string(got) != string(src) {
					t.Errorf("%s %s differs from upstream's", m.module, rel)
				}
				return nil
			}
			checked++
			checkChange(t, m.files[i].file, src, got)
			return nil
		})
		if err != nil || n < 20 {
			t.Errorf("walking the copy of %s: %v (%d files)", m.module, err, n)
		}
	}
	if want := 4 + len(kinPatch().files); checked != want {
		t.Errorf("checked %d patched files, want %d", checked, want)
	}
}

// checkChange holds the patched file to the change its patch names.
func checkChange(t *testing.T, file string, src, got []byte) {
	t.Helper()
	switch file {
	case "internal/json/json.go":
		checkSplice(t, file, src, got, "Unmarshal", replacement)
		if from, to, _ := funcSpan(got, "Unmarshal"); !strings.Contains(string(got[from:to]), "json.Parse(") {
			t.Errorf("the patched Unmarshal does not parse in place:\n%s", got[from:to])
		}
	case "mcp/streamable_headers.go":
		mid, err := splice(src, "extractName", extractNameSrc)
		if err != nil {
			t.Fatal(err)
		}
		checkSplice(t, file, src, mid, "extractName", extractNameSrc)
		checkSplice(t, file, mid, got, "extractParamHeaderAnnotations", paramHeadersSrc)
	case "mcp/streamable.go":
		if n := strings.Count(string(got), metaVersionRead); n != 1 {
			t.Errorf("the patched streamable.go reads the protocol version in servePOST %d times, want once", n)
		}
		checkSplice(t, file, src, []byte(strings.Replace(string(got), metaVersionRead, servePOSTMetaVersion, 1)), "protocolVersionFromMessage", protoVersionSrc)
	case "json/decode.go":
		sl, gl := strings.Split(string(src), "\n"), strings.Split(string(got), "\n")
		if len(sl) != len(gl) {
			t.Fatalf("the patched decode.go has %d lines; upstream %d", len(gl), len(sl))
		}
		var changed []string
		for i := range sl {
			if sl[i] != gl[i] {
				changed = append(changed, strings.TrimSpace(sl[i])+" -> "+strings.TrimSpace(gl[i]))
			}
		}
		if len(changed) != len(mapHints) {
			t.Errorf("the patched decode.go changes %d lines, want %d: %q", len(changed), len(mapHints), changed)
		}
	case "openapi3/marsh_jsonv1.go":
		from, to, _ := declsSpan(kinExtensionsSrc)
		if !strings.HasPrefix(string(got), string(src)) || !strings.HasSuffix(string(got), string(kinExtensionsSrc[from:to])+"\n") {
			t.Errorf("the patched %s is not upstream's with unmarshalExtensions appended", file)
		}
		checkOnlyAppended(t, file, src, got, kinExtensionsSrc)
	case "openapi3/marsh_jsonv2.go":
		if string(got) != strings.Replace(string(src), kinJSONv2Import, kinJSONv2Imports, 1)+kinExtensionsJSONv2 {
			t.Errorf("the patched %s is not upstream's with the jsonv2 unmarshalExtensions appended", file)
		}
	case "openapi3/maplike.go":
		sl, gl := strings.Split(string(src), "\n"), strings.Split(string(got), "\n")
		if len(sl) != len(gl) {
			t.Fatalf("the patched %s has %d lines; upstream %d", file, len(gl), len(sl))
		}
		changed := map[string]int{}
		for i := range sl {
			if sl[i] != gl[i] {
				changed[sl[i]+"\n -> "+gl[i]+"\n"]++
			}
		}
		want := map[string]int{}
		for _, r := range kinMaplike {
			want[r[0]+" -> "+r[1]] = kinMaplikeCalls
		}
		if !reflect.DeepEqual(changed, want) {
			t.Errorf("the patched %s changes %v; want %v", file, changed, want)
		}
	default:
		if !strings.HasPrefix(file, "openapi3/") {
			t.Errorf("no check for the patch of %s", file)
			return
		}
		checkKinCalls(t, file, src, got)
	}
}

// checkSplice holds a spliced file to its splice: upstream's text outside
// the function name, which is the replacement's declarations; upstream's
// declarations, and the replacement's besides.
func checkSplice(t *testing.T, file string, src, got []byte, name string, repl []byte) {
	t.Helper()
	from, to, _ := funcSpan(src, name)
	rfrom, rto, _ := declsSpan(repl)
	body := string(repl[rfrom:rto])
	pfrom := from
	pto := len(got) - (len(src) - to)
	if pto < pfrom || string(src[:from]) != string(got[:pfrom]) || string(src[to:]) != string(got[pto:]) {
		t.Fatalf("the patched %s differs from upstream outside %s", file, name)
	}
	if !strings.HasSuffix(string(got[pfrom:pto]), body) {
		t.Errorf("the patched %s's %s is not the replacement's:\n%s", file, name, got[pfrom:pto])
	}
	want := decls(t, src)
	for _, d := range decls(t, repl) {
		if !slices.Contains(want, d) {
			want = append(want, d)
		}
	}
	slices.Sort(want)
	if got := decls(t, got); !reflect.DeepEqual(got, want) {
		t.Errorf("the patched %s declares %q; want upstream's and the replacement's %q", file, got, want)
	}
}

func decls(t *testing.T, src []byte) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "", src, 0)
	if err != nil {
		t.Fatalf("parsing: %v", err)
	}
	var names []string
	for name := range f.Scope.Objects {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// The inputs the differential test and fuzz target start from: the
// messages the SDK decodes, and the edges where the Decoder and a parse in
// place could part (empty input, white space, bytes after the value,
// syntax errors, truncation, wrong types, case-different field names).
var unmarshalSeeds = []string{
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"getProduct","arguments":{"productId":"p-0001"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`,
	`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"}]`,
	`{"name":"x","Name":"y","NAME":"z"}`,
	`{"Name":"only-other-case"}`,
	"", " ", "\n\t ", "null", " null ", "{}", "[]", `"s"`, "12", "1e400", "-0", "true",
	`{"name":"x"} {"name":"y"}`, `{"name":"x"}garbage`, `{"name":"x"}]`, `{"name":`, `{"name":"x"`, `{"name":"\u00e9\ud800"}`,
	`{"name":1}`, `{"arguments":[1,2,x]}`, `{"arguments":{"a":[1,{"b":null}]}}`, `[1,"a",{}]`, `{"id":"7"}`, `{"id":1.5}`,
	"\xff", `{"name":"\xff"}`, `{"a":1,}`, `[1,]`, `{"name":"x" "y":1}`,
}

// target is a shape the SDK decodes into: a struct with exact-case names,
// a raw message, a map, a slice of raw messages, an interface.
type target struct {
	Name      string          `json:"name"`
	ID        any             `json:"id,omitempty"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Meta      map[string]any  `json:"_meta,omitempty"`
}

var newTargets = map[string]func() any{
	"struct": func() any { return new(target) },
	"map":    func() any { return new(map[string]any) },
	"raw":    func() any { return new([]json.RawMessage) },
	"any":    func() any { return new(any) },
	"string": func() any { return new(string) },
	"nilptr": func() any { return (*target)(nil) },
	"nonptr": func() any { return target{} },
}

// sameAsDecoder reports how Unmarshal and upstream's Decoder part on data
// decoded into a new target of each kind, or "".
func sameAsDecoder(data []byte) string {
	for kind, newT := range newTargets {
		got, want := newT(), newT()
		gotErr := Unmarshal(data, got)
		wantErr := NewDecoder(strings.NewReader(string(data))).Decode(want)
		if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) || reflect.TypeOf(gotErr) != reflect.TypeOf(wantErr) {
			return fmt.Sprintf("%s: error %T %v; the Decoder's %T %v", kind, gotErr, gotErr, wantErr, wantErr)
		}
		if !reflect.DeepEqual(got, want) {
			return fmt.Sprintf("%s: decoded %#v; the Decoder %#v", kind, got, want)
		}
	}
	return ""
}

// TestUnmarshalMatchesDecoder holds the patched Unmarshal to upstream's
// (a new Decoder per call) on every seed: same value, same error.
func TestUnmarshalMatchesDecoder(t *testing.T) {
	for _, s := range unmarshalSeeds {
		if d := sameAsDecoder([]byte(s)); d != "" {
			t.Errorf("%q: %s", s, d)
		}
	}
}

// FuzzUnmarshalMatchesDecoder is TestUnmarshalMatchesDecoder on any input.
func FuzzUnmarshalMatchesDecoder(f *testing.F) {
	for _, s := range unmarshalSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if d := sameAsDecoder(data); d != "" {
			t.Errorf("%q: %s", data, d)
		}
	})
}

// TestUnmarshalAllocatesNoDecoderBuffer is what the patch is for: a
// message decodes without the Decoder's 32 KiB buffer.
func TestUnmarshalAllocatesNoDecoderBuffer(t *testing.T) {
	msg := []byte(unmarshalSeeds[0])
	per := func(f func()) float64 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for range 100 {
			f()
		}
		runtime.ReadMemStats(&after)
		return float64(after.TotalAlloc-before.TotalAlloc) / 100
	}
	patched := per(func() { _ = Unmarshal(msg, new(map[string]any)) })
	upstream := per(func() { _ = NewDecoder(strings.NewReader(string(msg))).Decode(new(map[string]any)) })
	t.Logf("bytes allocated per decode: patched %.0f, upstream %.0f", patched, upstream)
	if patched >= 16<<10 || upstream < 32<<10 {
		t.Errorf("bytes per decode: patched %.0f (want < 16 KiB), upstream %.0f (want its 32 KiB buffer)", patched, upstream)
	}
}

// TestEveryBuildPathPatched holds the release builds to the patch: make's
// build, image, test (the tagged builds' tests too) and bench targets,
// the Dockerfile and test/gobuild (the binaries tests run) all run go
// through sdkpatch -exec.
func TestEveryBuildPathPatched(t *testing.T) {
	read := func(name string) string {
		raw, err := os.ReadFile(filepath.Join("..", "..", filepath.FromSlash(name)))
		if err != nil {
			t.Fatal(err)
		}
		return string(raw)
	}
	mk := read("Makefile")
	for _, want := range []string{
		"SDKPATCH = go run ./hack/sdkpatch -exec\n",
		"GO_BUILD = $(SDKPATCH) CGO_ENABLED=0 go build",
		"$(SDKPATCH) GOOS=linux GOARCH=$(IMAGE_ARCH) CGO_ENABLED=0 go build",
		"$(SDKPATCH) go test $(GO_TEST_FLAGS) ./...",
		// ./... compiles neither the slim sidecar build's tests nor the
		// profiling build's: make test runs them in a line of their own.
		"$(SDKPATCH) go test $(GO_TEST_FLAGS) -tags sidecaronly,kubepactpprof ./cmd/kubepact",
		"$(SDKPATCH) go test -run '^$$' -bench .",
	} {
		if !strings.Contains(mk, want) {
			t.Errorf("the Makefile lacks %q", want)
		}
	}
	for i, line := range strings.Split(mk, "\n") {
		if strings.HasPrefix(line, "\t") && strings.Contains(line, "go build") && !strings.Contains(line, "$(SDKPATCH)") && !strings.Contains(line, "hack/") {
			t.Errorf("Makefile:%d builds without the patch: %s", i+1, strings.TrimSpace(line))
		}
	}
	if df := read("Dockerfile"); !strings.Contains(df, "RUN go run ./hack/sdkpatch -exec CGO_ENABLED=0 GOOS=$TARGETOS GOARCH=$TARGETARCH \\\n    go build") {
		t.Error("the Dockerfile's go build does not run through go run ./hack/sdkpatch -exec")
	}
	if gb := read("test/gobuild/gobuild.go"); !strings.Contains(gb, `"github.com/kubepact/kubepact/hack/sdkpatch"`) || !strings.Contains(gb, `"run", sdkpatch, "-exec", "go"`) {
		t.Error("test/gobuild.Command does not build through hack/sdkpatch -exec")
	}
}

// TestOracleIsUpstream holds the differential tests' oracles
// (upstream_names_test.go) to the go-sdk's functions as the pinned files
// have them: the same body, but for the names of the oracles they call.
func TestOracleIsUpstream(t *testing.T) {
	mod, err := patches[0].locate()
	if err != nil {
		t.Fatal(err)
	}
	ours, err := os.ReadFile("upstream_names_test.go")
	if err != nil {
		t.Fatal(err)
	}
	body := func(src []byte, name string) string {
		t.Helper()
		from, to, err := funcSpan(src, name)
		if err != nil {
			t.Fatal(err)
		}
		_, b, _ := strings.Cut(string(src[from:to]), ") {\n")
		return b
	}
	// An oracle calls the other oracles by their upstream names' oracle
	// names; collectParamHeaderAnnotations is a stand-in of its own name.
	unname := strings.NewReplacer("upstreamExtractRequestMeta(", "extractRequestMeta(",
		"upstreamUnmarshalSchemaProperties(", "unmarshalSchemaProperties(", "upstreamRemarshal(", "remarshal(")
	for _, o := range []struct{ file, name, oracle string }{
		{"mcp/streamable_headers.go", "extractName", ""},
		{"mcp/shared.go", "extractRequestMeta", ""},
		{"mcp/streamable.go", "protocolVersionFromMessage", ""},
		{"mcp/streamable_headers.go", "extractParamHeaderAnnotations", ""},
		{"mcp/streamable_headers.go", "unmarshalSchemaProperties", ""},
		{"mcp/util.go", "remarshal", ""},
		{"mcp/streamable_headers.go", "collectParamHeaderAnnotations", "collectParamHeaderAnnotations"},
	} {
		up, err := os.ReadFile(filepath.Join(mod, filepath.FromSlash(o.file)))
		if err != nil {
			t.Fatal(err)
		}
		oracle := o.oracle
		if oracle == "" {
			oracle = "upstream" + strings.ToUpper(o.name[:1]) + o.name[1:]
		}
		got := unname.Replace(body(ours, oracle))
		if want := body(up, o.name); got != want {
			t.Errorf("%s's body is not upstream's %s's:\n%s\nupstream:\n%s", oracle, o.name, got, want)
		}
	}
}

// The params the extractName differential test and fuzz target start
// from: what clients send, and where a decode of the whole CallToolParams
// fails (a _meta that is not an object, numbers out of float64's range,
// wrong types, malformed and truncated JSON, bytes after the value).
var extractNameSeeds = []string{
	`{"name":"getProduct","arguments":{"productId":"p-0001"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"roots":{"listChanged":true}},"io.modelcontextprotocol/clientInfo":{"name":"bench","version":"v0"}}}`,
	`{"name":"x"}`, `{"name":"x","arguments":null,"_meta":null}`, `{"Name":"x"}`, `{"name":"x","name":"y"}`, `{}`, `null`, ``, ` `,
	`{"name":"x","_meta":5}`, `{"name":"x","_meta":"s"}`, `{"name":"x","_meta":[]}`, `{"name":"x","_meta":{},"_meta":7}`, `{"name":"x","_Meta":7}`,
	`{"name":"x","arguments":1e400}`, `{"name":"x","arguments":{"n":-1e400}}`, `{"name":"x","arguments":[1,2e308]}`, `{"name":"x","arguments":{"n":1e-400}}`,
	`{"name":"x","arguments":{"s":"1e400"}}`, `{"name":"x","arguments":{"s":"\"1e400"}}`, `{"name":"x","_meta":{"n":1.8E+308}}`, `{"name":"x","_meta":{"n":1.7E+308}}`,
	`{"name":"x","arguments":5}`, `{"name":"x","arguments":"s"}`, `{"name":"x","arguments":true}`, `{"name":"x","other":1e400}`,
	`{"name":"x","arguments":1` + strings.Repeat("0", 320) + `}`, `{"name":"x","arguments":1` + strings.Repeat("0", 298) + `}`,
	`{"name":5}`, `{"name":null}`, `{"name":"x","requestState":5}`, `{"name":"x","requestState":"s"}`,
	`{"name":"x","inputResponses":5}`, `{"name":"x","inputResponses":{"a":{"action":"accept"}}}`, `{"name":"x","inputResponses":{"a":7}}`,
	`{"name":"x"} {"name":"y"}`, `{"name":"x"}garbage`, `{"name":"x","arguments":{"a":[1,x]}}`, `{"name":"x",`, `{"name":"\xff","arguments":{"\xff":"\ud800"}}`,
	`[{"name":"x"}]`, `{"name":"x","arguments":{"a":{"b":{"c":[[[{}]]]}}}}`,
}

// TestExtractNameMatchesUpstream holds the patched extractName to
// upstream's on every seed and method: the same name, the same verdict.
func TestExtractNameMatchesUpstream(t *testing.T) {
	for _, method := range []string{"tools/call", "prompts/get", "resources/read", "ping"} {
		for _, s := range extractNameSeeds {
			gotName, gotOK := extractName(method, json.RawMessage(s))
			wantName, wantOK := upstreamExtractName(method, json.RawMessage(s))
			if gotName != wantName || gotOK != wantOK {
				t.Errorf("%s %q: extractName %q %v; upstream %q %v", method, s, gotName, gotOK, wantName, wantOK)
			}
		}
	}
}

// FuzzExtractNameMatchesUpstream is TestExtractNameMatchesUpstream on any
// tools/call params.
func FuzzExtractNameMatchesUpstream(f *testing.F) {
	for _, s := range extractNameSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, params []byte) {
		gotName, gotOK := extractName("tools/call", params)
		wantName, wantOK := upstreamExtractName("tools/call", params)
		if gotName != wantName || gotOK != wantOK {
			t.Errorf("%q: extractName %q %v; upstream %q %v", params, gotName, gotOK, wantName, wantOK)
		}
	})
}

// TestExtractNameAllocatesLess is what the patch is for: reading a
// tools/call's name no longer builds its _meta and arguments.
func TestExtractNameAllocatesLess(t *testing.T) {
	params := json.RawMessage(extractNameSeeds[0])
	patched := testing.AllocsPerRun(100, func() { extractName("tools/call", params) })
	upstream := testing.AllocsPerRun(100, func() { upstreamExtractName("tools/call", params) })
	t.Logf("objects per extractName: patched %.0f, upstream %.0f", patched, upstream)
	if patched > upstream/2 {
		t.Errorf("objects per extractName: patched %.0f, upstream %.0f; want at most half", patched, upstream)
	}
}

// The params the protocol version differential test and fuzz target start
// from: what clients send, and where upstream's decode of the whole _meta
// fails or a narrower one could part from it (a _meta that is no object,
// given twice, null; the version absent, null, not a string, escaped;
// numbers out of float64's range; malformed JSON).
var protoVersionSeeds = []string{
	extractNameSeeds[0], ``, `null`, `{}`, `5`, `{"_meta":null}`, `{"_meta":{}}`, `{"_meta":5}`, `{"_meta":[]}`, `{"_meta":"s"}`,
	`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}`,
	`{"_meta":{"io.modelcontextprotocol/protocolVersion":5}}`, `{"_meta":{"io.modelcontextprotocol/protocolVersion":null}}`,
	`{"_meta":{"io.modelcontextprotocol/protocolVersion":["x"]}}`, `{"_meta":{"io.modelcontextprotocol/protocolversion":"x"}}`,
	`{"_meta":{"io.modelcontextprotocol\/protocolVersion":"x"}}`, `{"_meta":{"io.modelcontextprotocol/protocolVersion":"\u0078\ud800"}}`,
	`{"_meta":{"io.modelcontextprotocol/protocolVersion":"a","io.modelcontextprotocol/protocolVersion":"b"}}`,
	`{"_meta":{"io.modelcontextprotocol/protocolVersion":"a"},"_meta":{}}`, `{"_meta":{"io.modelcontextprotocol/protocolVersion":"a"},"_meta":null}`,
	`{"_meta":{"io.modelcontextprotocol/protocolVersion":"a"},"_meta":{"io.modelcontextprotocol/protocolVersion":null}}`,
	`{"_meta":null,"_meta":{"io.modelcontextprotocol/protocolVersion":"a"}}`, `{"_meta":{"io.modelcontextprotocol/protocolVersion":"a"},"_meta":3}`,
	`{"_meta":{"io.modelcontextprotocol/protocolVersion":"a","n":1e400}}`, `{"_meta":{"io.modelcontextprotocol/protocolVersion":"a","n":[1e-400]}}`,
	`{"_meta":{"io.modelcontextprotocol/protocolVersion":"a"},"arguments":1e400}`, `{"_Meta":{"io.modelcontextprotocol/protocolVersion":"a"}}`,
	`{"_meta":{"io.modelcontextprotocol/protocolVersion":"a"}} x`, `{"_meta":{"io.modelcontextprotocol/protocolVersion":"a"}`, `{"_meta":{"io.modelcontextprotocol/protocolVersion":"\xff"}}`,
}

// TestProtocolVersionMatchesUpstream holds metaProtocolVersion and the
// patched protocolVersionFromMessage to upstream's reading of _meta on
// every seed.
func TestProtocolVersionMatchesUpstream(t *testing.T) {
	for _, s := range protoVersionSeeds {
		if d := sameProtocolVersion([]byte(s)); d != "" {
			t.Errorf("%q: %s", s, d)
		}
	}
	for _, msg := range []jsonrpc.Message{nil, (*jsonrpc.Request)(nil), &jsonrpc.Response{}} {
		if got, want := protocolVersionFromMessage(msg), upstreamProtocolVersionFromMessage(msg); got != want {
			t.Errorf("%#v: protocolVersionFromMessage %q; upstream %q", msg, got, want)
		}
	}
}

// FuzzProtocolVersionMatchesUpstream is TestProtocolVersionMatchesUpstream
// on any params.
func FuzzProtocolVersionMatchesUpstream(f *testing.F) {
	for _, s := range protoVersionSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, params []byte) {
		if d := sameProtocolVersion(params); d != "" {
			t.Errorf("%q: %s", params, d)
		}
	})
}

// sameProtocolVersion reports how the patched readings of params' protocol
// version part from upstream's, or "".
func sameProtocolVersion(params []byte) string {
	want, _ := upstreamExtractRequestMeta(params)[MetaKeyProtocolVersion].(string)
	if got := metaProtocolVersion(params); got != want {
		return fmt.Sprintf("metaProtocolVersion %q; upstream %q", got, want)
	}
	req := &jsonrpc.Request{Method: "tools/call", Params: params}
	if got, want := protocolVersionFromMessage(req), upstreamProtocolVersionFromMessage(req); got != want {
		return fmt.Sprintf("protocolVersionFromMessage %q; upstream %q", got, want)
	}
	return ""
}

// TestProtocolVersionAllocatesLess is what the patch is for: reading the
// protocol version no longer builds the whole _meta.
func TestProtocolVersionAllocatesLess(t *testing.T) {
	params := json.RawMessage(extractNameSeeds[0])
	patched := testing.AllocsPerRun(100, func() { metaProtocolVersion(params) })
	upstream := testing.AllocsPerRun(100, func() { _, _ = upstreamExtractRequestMeta(params)[MetaKeyProtocolVersion].(string) })
	t.Logf("objects per reading of the protocol version: patched %.0f, upstream %.0f", patched, upstream)
	if patched > upstream/2 {
		t.Errorf("objects per reading of the protocol version: patched %.0f, upstream %.0f; want at most half", patched, upstream)
	}
}

// The input schemas the x-mcp-header differential test and fuzz target
// start from: none annotated (kubepact's tools), annotated at the top and
// nested, the name spelt with escapes or in another case, annotations that
// are not strings or empty, properties that are not objects, and schemas
// that do not encode (malformed raw JSON) or do not decode.
var paramHeaderSeeds = []string{
	`{"type":"object","properties":{"productId":{"type":"string","description":"the product"}},"required":["productId"]}`,
	`{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}}`,
	`{"type":"object","properties":{"a":{"type":"object","properties":{"b":{"type":"integer","x-mcp-header":"B"}}},"c":{"type":"boolean","x-mcp-header":"C"}}}`,
	`{"properties":{"r":{"x-mcp-head\u0065r":"R"}}}`, `{"properties":{"r":{"\u0078-mcp-header":"R"}}}`, `{"properties":{"r":{"X-MCP-Header":"R"}}}`,
	`{"properties":{"r":{"x-mcp-header":5}}}`, `{"properties":{"r":{"x-mcp-header":""}}}`, `{"properties":{"r":{"x-mcp-header":null}}}`,
	`{"properties":{"r":{"x-mcp-header":"\u0052"}}}`, `{"properties":{"r":{"description":"x-mcp-header"}}}`,
	`{"properties":{"r":5}}`, `{"properties":[]}`, `{"properties":null}`, `{"properties":{}}`, `{"type":5}`, `{"properties":{"r":{"type":7,"x-mcp-header":"R"}}}`,
	`{"properties":{"r":{"x-mcp-header":"A"},"r":{"x-mcp-header":"B"}}}`, `{"properties":{"r":{"properties":{"s":{"x-mcp-header":"S"}}},"t":{"x-mcp-header":"T"}}}`,
	`null`, `{}`, `[]`, `"s"`, `5`, `{"properties":{"r":{"x-mcp-header":"R"}}`, `{"properties":`, ``, `x`, "{\"properties\":{\"\xff\":{\"x-mcp-header\":\"R\"}}}",
}

// paramHeaderSchemas are the InputSchemas a seed stands for, as a tool
// can hold them: the raw JSON, and where it is valid, a map and a
// *jsonschema.Schema decoded from it.
func paramHeaderSchemas(raw []byte) []any {
	schemas := []any{json.RawMessage(raw)}
	var m any
	if json.Unmarshal(raw, &m) == nil {
		schemas = append(schemas, m)
	}
	var js *jsonschema.Schema
	if json.Unmarshal(raw, &js) == nil {
		schemas = append(schemas, js)
	}
	return schemas
}

// sameParamHeaders reports how the patched extractParamHeaderAnnotations
// parts from upstream's on every form of schema raw, or "". Bindings come
// in map order upstream, so they are compared sorted.
func sameParamHeaders(raw []byte) string {
	sorted := func(bs []paramHeaderBinding) []paramHeaderBinding {
		slices.SortFunc(bs, func(a, b paramHeaderBinding) int {
			return strings.Compare(strings.Join(a.Path, "\x00")+"\x01"+a.Header, strings.Join(b.Path, "\x00")+"\x01"+b.Header)
		})
		return bs
	}
	for _, schema := range paramHeaderSchemas(raw) {
		got := sorted(extractParamHeaderAnnotations(&Tool{Name: "t", InputSchema: schema}))
		want := sorted(upstreamExtractParamHeaderAnnotations(&Tool{Name: "t", InputSchema: schema}))
		if !reflect.DeepEqual(got, want) {
			return fmt.Sprintf("%T: extractParamHeaderAnnotations %#v; upstream %#v", schema, got, want)
		}
	}
	return ""
}

// TestParamHeadersMatchUpstream holds the patched
// extractParamHeaderAnnotations to upstream's on every seed.
func TestParamHeadersMatchUpstream(t *testing.T) {
	for _, s := range paramHeaderSeeds {
		if d := sameParamHeaders([]byte(s)); d != "" {
			t.Errorf("%q: %s", s, d)
		}
	}
	if got := extractParamHeaderAnnotations(&Tool{InputSchema: json.RawMessage(paramHeaderSeeds[1])}); len(got) != 1 || got[0].Header != "Region" {
		t.Errorf("an annotated schema gave %#v; want the Region binding", got)
	}
}

// FuzzParamHeadersMatchUpstream is TestParamHeadersMatchUpstream on any
// schema.
func FuzzParamHeadersMatchUpstream(f *testing.F) {
	for _, s := range paramHeaderSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if d := sameParamHeaders(raw); d != "" {
			t.Errorf("%q: %s", raw, d)
		}
	})
}

// TestParamHeadersAllocateLess is what the patch is for: a schema without
// annotations is no longer decoded and walked on every call.
func TestParamHeadersAllocateLess(t *testing.T) {
	tool := &Tool{Name: "getProduct", InputSchema: json.RawMessage(paramHeaderSeeds[0])}
	patched := testing.AllocsPerRun(100, func() { extractParamHeaderAnnotations(tool) })
	upstream := testing.AllocsPerRun(100, func() { upstreamExtractParamHeaderAnnotations(tool) })
	t.Logf("objects per extractParamHeaderAnnotations: patched %.0f, upstream %.0f", patched, upstream)
	if patched > upstream/2 {
		t.Errorf("objects per extractParamHeaderAnnotations: patched %.0f, upstream %.0f; want at most half", patched, upstream)
	}
}
