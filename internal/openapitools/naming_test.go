package openapitools

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
	"github.com/google/jsonschema-go/jsonschema"
)

func testdataFS(t *testing.T) fstest.MapFS {
	t.Helper()
	fsys := fstest.MapFS{}
	entries, err := os.ReadDir("testdata")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		data, err := os.ReadFile("testdata/" + e.Name())
		if err != nil {
			t.Fatal(err)
		}
		fsys[e.Name()] = &fstest.MapFile{Data: data}
	}
	return fsys
}

// names returns every operation's name in document order, exposed or not.
func names(c *Capability) (exposed, withheld []string) {
	for _, tl := range c.Tools {
		exposed = append(exposed, tl.Name)
	}
	for _, w := range c.Withheld {
		withheld = append(withheld, w.Name+" "+w.Code)
	}
	return exposed, withheld
}

func TestNaming(t *testing.T) {
	long := strings.Repeat("x", 150)
	// Cut to the default cap of 64, ending in 6 hex digits of the
	// full name's SHA-256.
	longGet := long[:57] + "_" + hash8(long)[:6]
	longPost := long[:57] + "_" + hash8(long + "y")[:6]
	ro, err := project(t.Context(), testdataFS(t), []spec{{name: "n", file: "naming.yaml"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	gotExposed, gotWithheld := names(ro)
	if diff := cmp.Diff(gotExposed, []string{"get_health_3", "get_health_4", "get_health_2", longGet, "get_root", "head_root"}); diff != "" {
		t.Errorf("exposed read-only (-got +want):\n%s", diff)
	}
	if diff := cmp.Diff(gotWithheld, []string{
		"post_health WRITES_NOT_ALLOWED", "get_health WRITES_NOT_ALLOWED", "pacto_check RESERVED_NAME", "Pacto_Sneaky RESERVED_NAME",
		longPost + " WRITES_NOT_ALLOWED", "options_root WRITES_NOT_ALLOWED", "trace_root WRITES_NOT_ALLOWED",
	}); diff != "" {
		t.Errorf("withheld read-only (-got +want):\n%s", diff)
	}
	wantWarnings := []string{
		`skipped operation "pacto_check" in interface "n" (that name belongs to a Pacto tool)`,
		`skipped operation "Pacto_Sneaky" in interface "n" (that name belongs to a Pacto tool)`,
		`skipped 5 mutating operation(s) in interface "n" (AllowWrites exposes them)`,
	}
	if diff := cmp.Diff(ro.Warnings, wantWarnings); diff != "" {
		t.Errorf("warnings (-got +want):\n%s", diff)
	}

	rw, err := project(t.Context(), testdataFS(t), []spec{{name: "n", file: "naming.yaml"}}, &Options{AllowWrites: true})
	if err != nil {
		t.Fatal(err)
	}
	// Names do not depend on the exposure policy: every name exposed
	// read-only is the same operation's name with writes allowed.
	byOp := map[string]string{}
	for _, tl := range rw.Tools {
		byOp[tl.Method+" "+tl.Path] = tl.Name
		if len(tl.Name) > DefaultNameCap {
			t.Errorf("name %q is longer than %d", tl.Name, DefaultNameCap)
		}
	}
	for _, tl := range ro.Tools {
		if got := byOp[tl.Method+" "+tl.Path]; got != tl.Name {
			t.Errorf("%s %s is %q with writes allowed and %q without", tl.Method, tl.Path, got, tl.Name)
		}
	}
	if got := len(rw.Tools); got != 11 {
		t.Errorf("with writes allowed, %d tools; want 11 (all but the two reserved)", got)
	}

	// Hints follow the method.
	hints := map[string]Hints{}
	for _, tl := range rw.Tools {
		hints[tl.Method] = tl.Hints
	}
	if diff := cmp.Diff(hints, map[string]Hints{
		"GET":     {ReadOnly: true, Idempotent: true},
		"HEAD":    {ReadOnly: true, Idempotent: true},
		"POST":    {Destructive: true},
		"DELETE":  {Destructive: true, Idempotent: true},
		"OPTIONS": {Idempotent: true},
		"TRACE":   {Idempotent: true},
	}); diff != "" {
		t.Errorf("hints on loopback (-got +want):\n%s", diff)
	}
}

func hash8(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:4])
}

func TestSeveralInterfacesArePrefixed(t *testing.T) {
	c, err := project(t.Context(), testdataFS(t), []spec{{name: "pacto", file: "circular31.yaml"}, {name: "legacy api", file: "swagger2.json"}}, &Options{AllowWrites: true})
	if err != nil {
		t.Fatal(err)
	}
	exposed, withheld := names(c)
	if diff := cmp.Diff(exposed, []string{"legacy_api_listPets", "legacy_api_addPet"}); diff != "" {
		t.Errorf("exposed (-got +want):\n%s", diff)
	}
	// An interface named pacto would put its tools under the reserved prefix.
	if diff := cmp.Diff(withheld, []string{"pacto_createNode RESERVED_NAME", "pacto_createPair RESERVED_NAME", "pacto_getThing RESERVED_NAME"}); diff != "" {
		t.Errorf("withheld (-got +want):\n%s", diff)
	}
}

func TestAllowDeny(t *testing.T) {
	c := projectStyles(t, &Options{AllowWrites: true, AllowOperations: []string{"search", "echoJSON", "redirect"}, DenyOperations: []string{"redirect"}})
	exposed, _ := names(c)
	if diff := cmp.Diff(exposed, []string{"search", "echoJSON"}); diff != "" {
		t.Errorf("exposed (-got +want):\n%s", diff)
	}
	codes := map[string]string{}
	for _, w := range c.Withheld {
		codes[w.Name] = w.Code
	}
	if codes["redirect"] != WithheldDenied || codes["slow"] != WithheldNotAllowed {
		t.Errorf("withheld codes: %v", codes)
	}
	// The allow list does not bypass the write policy.
	c = projectStyles(t, &Options{AllowOperations: []string{"echoJSON"}})
	if len(c.Tools) != 0 || c.Withheld[len(c.Withheld)-1].Code == "" {
		t.Errorf("echoJSON exposed without --allow-writes: %v", c.Tools)
	}
}

// schemaOf returns a tool's input schema as a generic value and checks
// that github.com/google/jsonschema-go resolves it (what the MCP SDK
// validates with).
func schemaOf(t *testing.T, tl *Tool) map[string]any {
	t.Helper()
	var s jsonschema.Schema
	if err := json.Unmarshal(tl.InputSchema, &s); err != nil {
		t.Fatalf("%s: %v", tl.Name, err)
	}
	if _, err := s.Resolve(nil); err != nil {
		t.Fatalf("%s: input schema does not resolve: %v\n%s", tl.Name, err, tl.InputSchema)
	}
	var m map[string]any
	if err := json.Unmarshal(tl.InputSchema, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestSchemas(t *testing.T) {
	fsys := testdataFS(t)
	for _, tc := range []struct {
		file, tool string
		want       string
	}{
		{file: "quirks30.yaml", tool: "quirks", want: `{"$defs":{"A":{"properties":{"a":{"$ref":"#/$defs/A"}},"type":["object","null"]},"R":{"oneOf":[{"$ref":"#/$defs/A"},{"type":"null"}]}},` +
			`"additionalProperties":false,"properties":{"n":{"examples":[5],"exclusiveMinimum":0,"maximum":10,"type":"integer"},"r":{"$ref":"#/$defs/R"},"s":{"enum":["a","b",null],"type":["string","null"]}},"type":"object"}`},
		{file: "circular31.yaml", tool: "createNode", want: `{"$defs":{"Node":{"description":"a tree node","properties":{"children":{"items":{"$ref":"#/$defs/Node"},"type":"array"},"name":{"type":"string"},"parent":{"$ref":"#/$defs/Node","description":"3.1 allows siblings"}},"required":["name"],"type":"object"}},` +
			`"additionalProperties":false,"properties":{"body":{"$ref":"#/$defs/Node","description":"request body, sent as application/json"}},"required":["body"],"type":"object"}`},
		{file: "circular31.yaml", tool: "createPair", want: `{"$defs":{"Leaf":{"type":"string"},"Pair":{"properties":{"left":{"$ref":"#/$defs/Pair"},"right":{"$ref":"#/$defs/Leaf"}},"type":"object"}},` +
			`"additionalProperties":false,"properties":{"body":{"$ref":"#/$defs/Pair","description":"request body, sent as application/json"}},"type":"object"}`},
		{file: "circular31.yaml", tool: "getThing", want: `{"additionalProperties":false,"properties":{"id":{"const":"abc","type":["string","null"]},"n":{"examples":[1],"exclusiveMinimum":0,"type":"integer"}},"required":["id"],"type":"object"}`},
		{file: "swagger2.json", tool: "addPet", want: `{"$defs":{"Pet":{"properties":{"mate":{"$ref":"#/$defs/Pet"},"name":{"maxLength":10,"type":"string"}},"required":["name"],"type":"object"}},` +
			`"additionalProperties":false,"properties":{"body":{"$ref":"#/$defs/Pet","description":"request body, sent as application/json"}},"required":["body"],"type":"object"}`},
		{file: "swagger2.json", tool: "listPets", want: `{"additionalProperties":false,"properties":{"limit":{"maximum":50,"type":"integer"},"tags":{"items":{"type":"string"},"type":"array"}},"type":"object"}`},
	} {
		t.Run(tc.file+"/"+tc.tool, func(t *testing.T) {
			c, err := project(t.Context(), fsys, []spec{{name: "x", file: tc.file}}, &Options{AllowWrites: true})
			if err != nil {
				t.Fatal(err)
			}
			for _, tl := range c.Tools {
				schemaOf(t, tl)
			}
			tl := c.Tool(tc.tool)
			if tl == nil {
				t.Fatalf("no tool %s; withheld: %+v", tc.tool, c.Withheld)
			}
			var got, want any
			_ = json.Unmarshal(tl.InputSchema, &got)
			if err := json.Unmarshal([]byte(tc.want), &want); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(got, want); diff != "" {
				t.Errorf("schema (-got +want):\n%s\ngot: %s", diff, tl.InputSchema)
			}
			if tl.op.route() == nil {
				t.Errorf("%s: no request validation route", tc.file)
			}
		})
	}
}

func TestEveryExampleSchemaResolves(t *testing.T) {
	for _, name := range []string{"catalog", "payments", "orders"} {
		c, err := Project(t.Context(), loadExample(t, name), &Options{AllowWrites: true})
		if err != nil {
			t.Fatal(err)
		}
		for _, tl := range c.Tools {
			schemaOf(t, tl)
			if tl.op.route() == nil {
				t.Errorf("%s: no request validation route", tl.Name)
			}
		}
	}
	for _, w := range projectStyles(t, &Options{AllowWrites: true}).Withheld {
		t.Errorf("styles.yaml withheld %s: %s", w.Name, w.Reason)
	}
}
