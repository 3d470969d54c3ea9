package main

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"regexp"
	"strconv"
	"strings"
)

// kinExtensionsSrc is unmarshalExtensions and its helpers, appended to
// kin-openapi's openapi3/marsh_jsonv1.go (kinext.go says why).
//
//go:embed kinext.go
var kinExtensionsSrc []byte

// kinExtensionsJSONv2 is what marsh_jsonv2.go (built with
// GOEXPERIMENT=jsonv2 from Go 1.27) gets instead: upstream's decoding and
// encoding, as the patch is written and tested against encoding/json's.
const kinExtensionsJSONv2 = `
// unmarshalExtensions is added by kubepact (hack/sdkpatch): with
// encoding/json/v2 it decodes as upstream does.
func unmarshalExtensions(data []byte, ext *map[string]any, skip ...string) error {
	return unmarshalJSON(data, ext)
}

// unmarshalMaplike and maplikeValue are added by kubepact (hack/sdkpatch):
// with encoding/json/v2 they decode and encode as upstream does.
func unmarshalMaplike(data []byte) (map[string]any, map[string][]byte, error) {
	var m map[string]any
	err := unmarshalJSON(data, &m)
	return m, nil, err
}

func maplikeValue(_ map[string][]byte, _ string, v any) ([]byte, error) {
	return json.Marshal(v)
}
`

// kinJSONv2Import is marsh_jsonv2.go's import upstream, and
// kinJSONv2Imports the patched file's: maplikeValue needs encoding/json's
// Marshal, as upstream's maplike.go calls it.
const (
	kinJSONv2Import  = "import jsonv2 \"encoding/json/v2\"\n"
	kinJSONv2Imports = "import (jsonv2 \"encoding/json/v2\"; \"encoding/json\") // patched by kubepact (hack/sdkpatch): maplikeValue needs encoding/json\n"
)

// kinMaplike are maplike.go's lines (in each of Responses', Callback's and
// Paths' UnmarshalJSON) that decode the whole object into a map and
// re-encode each member, and what they become; each line stays a line.
var kinMaplike = [][2]string{
	{"\tif err = unmarshalJSON(data, &m); err != nil {\n",
		"\tvar spans map[string][]byte; if m, spans, err = unmarshalMaplike(data); err != nil { // patched by kubepact (hack/sdkpatch): decodes the x- members, and those that do not re-encode as themselves\n"},
	{"\t\tif data, err = json.Marshal(v); err != nil {\n",
		"\t\tif data, err = maplikeValue(spans, k, v); err != nil { // patched by kubepact (hack/sdkpatch): the member's own bytes where they are json.Marshal's\n"},
}

// kinMaplikeCalls is how many times maplike.go has each of kinMaplike's lines.
const kinMaplikeCalls = 3

// maplikeMembers rewrites maplike.go's kinMaplike lines.
func maplikeMembers(src []byte) ([]byte, error) {
	for _, r := range kinMaplike {
		if n := bytes.Count(src, []byte(r[0])); n != kinMaplikeCalls {
			return nil, fmt.Errorf("%q occurs %d times, want %d", r[0], n, kinMaplikeCalls)
		}
		src = bytes.ReplaceAll(src, []byte(r[0]), []byte(r[1]))
	}
	return src, nil
}

// jsonv2Helpers adds the helpers' jsonv2 versions to marsh_jsonv2.go.
func jsonv2Helpers(src []byte) ([]byte, error) {
	if n := bytes.Count(src, []byte(kinJSONv2Import)); n != 1 {
		return nil, fmt.Errorf("%q occurs %d times, want once", kinJSONv2Import, n)
	}
	return append(bytes.Replace(src, []byte(kinJSONv2Import), []byte(kinJSONv2Imports), 1), kinExtensionsJSONv2...), nil
}

// kinExtensionsCall is how each of openapi3's UnmarshalJSON methods that
// reads its Extensions decodes them upstream.
const kinExtensionsCall = "unmarshalJSON(data, &x.Extensions)"

// kinExtensionsPatched marks a call kinExtensions rewrote.
const kinExtensionsPatched = " // patched by kubepact (hack/sdkpatch): decodes only the extensions kept"

// kinFiles are the openapi3 files whose UnmarshalJSON methods decode their
// Extensions with kinExtensionsCall, by sha256.
var kinFiles = [][2]string{
	{"components.go", "2bb0a0864f74d80210b148b0ce4be4ceb6fd618ab1ab4f459d47378ed9f86c67"},
	{"contact.go", "4731451ce3bfa42dd3a093d44b585c0aabda4b4db5148a1dc4a5b35713e3fcd0"},
	{"discriminator.go", "23a16faea1ce8ff2d216d871db9de75b7402364deebe53b4f3629df20cd2b8a2"},
	{"encoding.go", "c527085f2da8048a7816a6caf886183d59e43b16d7b756f6c29a71da179b54f9"},
	{"example.go", "9c4931add1dc95e8fe938bc73cccb3825600ec8dbfb935a76dd16c96a1ba1ca2"},
	{"external_docs.go", "4005f40c866906855b9cc2f2bca5732aff1e93f521f5c3190940f6f1a67fb463"},
	{"info.go", "154299d0f743ca3fc09c0d1c7766dfe5655b34e0d5af78f30df7f49754b0213a"},
	{"license.go", "f03c4ca07f75350cd046bb70344cf31e9ebff3e22bda9be4be92fcd6491715f8"},
	{"link.go", "c00e1bab302890088ea8ced24005e8f11366b63b88828f278c039c54a234d5b4"},
	{"media_type.go", "6020b7b1c7df825a97b44c3eb0674bf9fcae664a605f0f721ea7912e3d94d808"},
	{"openapi3.go", "d04f43439bb109c3d883bbd546b49d17d37e828cf14a80e3885d29ade411fcd7"},
	{"operation.go", "10e5c3eccaf9a8b37c4885dce8c12d30ebc0f1c2f9aad4138cdd712b46bc5fe9"},
	{"parameter.go", "d93adfbdbceb1a3095e45931f404cec8cb8db24ddcaa6a8f5cd71168ad460240"},
	{"path_item.go", "2c89f22441e80e5d898ecd7191225a58c5a879481d46fecee9635e3a6560f510"},
	{"request_body.go", "a31cc176c093f0ef4c5632d25b15de6a3917030860774b78f9db3140ca098423"},
	{"response.go", "802d054293f2cc803be7d5794fe8f91b243f45a2daa3a10eb13780fb940e298e"},
	{"schema.go", "cd81228f083ffe56a9c4bdf43d5afea73985bbc73881ef72fe435b79856eb97b"},
	{"security_scheme.go", "c4fe54293c2b5379809092ea0684e78c531bd867df04530d3ab2075bcb29c17b"},
	{"server.go", "cd5bb0c8b1f09ca8fe5633160262e0bd11085de7346b956ff4bcd241d4ac2549"},
	{"tag.go", "bb3bea7261df4554a663350f454a7678f23a4f2139d3685deccd560345892167"},
	{"xml.go", "ed62f309d5d0dd7c61ca7ee413dcf543f489e443cac3ab85268bdaf4e4d35afa"},
}

// kinPatch is the kin-openapi module's patch: the helper, and every
// method's call of it.
func kinPatch() modulePatch {
	m := modulePatch{
		module: "github.com/getkin/kin-openapi", version: "v0.153.0", dir: "kin-openapi",
		files: []filePatch{
			{
				file: "openapi3/marsh_jsonv1.go", sha256: "ae4fc97a3dee6c004b1d5f2bc05842c525ee9168893c5441f796e03102551577",
				why:   "whether unmarshalJSON is still encoding/json's Unmarshal",
				apply: func(src []byte) ([]byte, error) { return appendDecls(src, kinExtensionsSrc) },
			},
			{
				file: "openapi3/marsh_jsonv2.go", sha256: "0a94d778dc90ea42798c65254a6582ea35a7018e2a05dcfb76ab24ecddd8da29",
				why:   "whether unmarshalJSON is still encoding/json/v2's Unmarshal",
				apply: jsonv2Helpers,
			},
			{
				file: "openapi3/maplike.go", sha256: "ae6dcd307dc93b5f571b6e701076a254fea2c8f4d4c57c6618d9604f5e5cf733",
				why:   "whether Responses, Callback and Paths still decode the whole object into a map and re-encode each member with json.Marshal",
				apply: maplikeMembers,
			},
		},
	}
	for _, f := range kinFiles {
		m.files = append(m.files, filePatch{
			file: "openapi3/" + f[0], sha256: f[1],
			why:   "whether each UnmarshalJSON still decodes the whole object into its Extensions and then deletes the keys it knows",
			apply: kinExtensions,
		})
	}
	return m
}

// appendDecls appends the declarations of the file repl (all but its
// imports, which src must already have) to src.
func appendDecls(src, repl []byte) ([]byte, error) {
	from, to, err := declsSpan(repl)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.Write(src)
	b.WriteString("\n// What follows is added by kubepact (hack/sdkpatch), applied to a copy of the module that a go.work replaces it with.\n\n")
	b.Write(repl[from:to])
	b.WriteString("\n")
	return b.Bytes(), nil
}

// kinExtensionsRead is the one read of a key that is deleted after
// (Operation's explicitly null responses): it asks only whether the value
// is nil, which unmarshalExtensions keeps.
var kinExtensionsRead = regexp.MustCompile(`^if value, present := x\.Extensions\["[^"]+"\]; present && value == nil \{`)

// kinStructDecoded is the statement before each kinExtensionsCall: the
// method's decoding of data into its struct, returning on an error.
var kinStructDecoded = regexp.MustCompile(`^if err := unmarshalJSON\(data, &x\); err != nil \{\s*return unmarshalError\(err\)\s*\}$`)

// kinExtensions rewrites each kinExtensionsCall in src into a call of
// unmarshalExtensions naming the keys the method deletes right after. It
// refuses a method whose statements after the call are not, as pinned,
// only those deletes (and kinExtensionsRead) up to its
// "if len(x.Extensions) == 0".
func kinExtensions(src []byte) ([]byte, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", src, parser.ParseComments)
	if err != nil {
		return nil, err
	}
	text := func(n ast.Node) string {
		return string(src[fset.Position(n.Pos()).Offset:fset.Position(n.End()).Offset])
	}
	type edit struct {
		from, to int
		keys     []string
	}
	var edits []edit
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Body == nil {
			continue
		}
		for i, st := range fn.Body.List {
			is, ok := st.(*ast.IfStmt)
			if !ok || is.Init == nil {
				continue
			}
			as, ok := is.Init.(*ast.AssignStmt)
			if !ok || len(as.Rhs) != 1 || text(as.Rhs[0]) != kinExtensionsCall {
				continue
			}
			// unmarshalExtensions reads data as valid JSON: it is, once
			// the method's struct has been decoded from it.
			if i == 0 || !kinStructDecoded.MatchString(text(fn.Body.List[i-1])) {
				return nil, fmt.Errorf("%s: the extensions are not decoded right after the struct", fn.Name.Name)
			}
			var keys []string
			ended := false
			for _, next := range fn.Body.List[i+1:] {
				t := text(next)
				if strings.HasPrefix(t, "if len(x.Extensions) == 0 {") {
					ended = true
					break
				}
				if k, ok := deletedKey(next, text); ok {
					keys = append(keys, k)
					continue
				}
				if !kinExtensionsRead.MatchString(t) {
					return nil, fmt.Errorf("%s: after decoding the extensions, %q is neither a delete nor a nil check", fn.Name.Name, t)
				}
			}
			if !ended || len(keys) == 0 {
				return nil, fmt.Errorf("%s: no deletes up to an \"if len(x.Extensions) == 0\" after decoding the extensions", fn.Name.Name)
			}
			edits = append(edits, edit{fset.Position(as.Rhs[0].Pos()).Offset, fset.Position(as.Rhs[0].End()).Offset, keys})
		}
	}
	if n := bytes.Count(src, []byte(kinExtensionsCall)); n == 0 || n != len(edits) {
		return nil, fmt.Errorf("%d calls of %s, %d of them in the shape the patch rewrites", n, kinExtensionsCall, len(edits))
	}
	out := bytes.Clone(src)
	for i := len(edits) - 1; i >= 0; i-- {
		e := edits[i]
		call := "unmarshalExtensions(data, &x.Extensions"
		for _, k := range e.keys {
			call += ", " + strconv.Quote(k)
		}
		call += ")"
		// the comment goes at the end of the line the call is on
		eol := e.to + bytes.IndexByte(out[e.to:], '\n')
		if eol < e.to || bytes.Contains(out[e.to:eol], []byte("//")) {
			return nil, errors.New("the call's line has a comment, or no end")
		}
		var b []byte
		b = append(b, out[:e.from]...)
		b = append(b, call...)
		b = append(b, out[e.to:eol]...)
		b = append(b, kinExtensionsPatched...)
		out = append(b, out[eol:]...)
	}
	return out, nil
}

// deletedKey is k when st is delete(x.Extensions, "k").
func deletedKey(st ast.Stmt, text func(ast.Node) string) (string, bool) {
	es, ok := st.(*ast.ExprStmt)
	if !ok {
		return "", false
	}
	call, ok := es.X.(*ast.CallExpr)
	if !ok || text(call.Fun) != "delete" || len(call.Args) != 2 || text(call.Args[0]) != "x.Extensions" {
		return "", false
	}
	lit, ok := call.Args[1].(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return "", false
	}
	k, err := strconv.Unquote(lit.Value)
	return k, err == nil
}
