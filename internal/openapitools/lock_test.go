package openapitools

import (
	"encoding/json"
	"errors"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/kubepact/kubepact/bundle"
	"github.com/kubepact/kubepact/internal/openapischema"
	"github.com/kubepact/kubepact/test/demoservice"
)

// catalogCopy copies the catalog example into a temporary directory and
// applies edits (old → new) to its OpenAPI document.
func catalogCopy(t *testing.T, edits ...[2]string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS("../../examples/bundles/catalog")); err != nil {
		t.Fatal(err)
	}
	specPath := filepath.Join(dir, "interfaces", "openapi.yaml")
	spec, err := os.ReadFile(specPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range edits {
		if !strings.Contains(string(spec), e[0]) {
			t.Fatalf("the catalog spec has no %q", e[0])
		}
		spec = []byte(strings.Replace(string(spec), e[0], e[1], 1))
	}
	if err := os.WriteFile(specPath, spec, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func projectDir(t *testing.T, dir string, opts *Options) *Capability {
	t.Helper()
	b, err := bundle.LoadDir(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	c, err := Project(t.Context(), b, opts)
	if err != nil {
		t.Fatalf("Project: %v", err)
	}
	return c
}

func toolNames(c *Capability) []string {
	var out []string
	for _, tl := range c.Tools {
		out = append(out, tl.Name)
	}
	return out
}

func withheldBy(c *Capability, code string) map[string]string {
	out := map[string]string{}
	for _, w := range c.Withheld {
		if w.Code == code {
			out[w.Name] = w.Reason
		}
	}
	return out
}

// writeLock writes a lock of dir's tools (writes allowed) and reads it
// back through the file.
func writeLock(t *testing.T, dir string) (*Lock, string) {
	t.Helper()
	c := projectDir(t, dir, &Options{AllowWrites: true, IgnoreBundleLock: true})
	path := filepath.Join(t.TempDir(), "tools.lock.json")
	if err := WriteLockFile(path, NewLock(c)); err != nil {
		t.Fatal(err)
	}
	l, err := ReadLock(path)
	if err != nil {
		t.Fatalf("reading back the lock just written: %v", err)
	}
	return l, path
}

func TestLockMatchesItsOwnBundle(t *testing.T) {
	dir := catalogCopy(t)
	l, _ := writeLock(t, dir)
	if got := len(l.Tools); got != 7 {
		t.Fatalf("the lock pins %d tools; want the catalog's 7", got)
	}
	c := projectDir(t, dir, &Options{AllowWrites: true, Lock: l})
	if diff := cmp.Diff(toolNames(c), []string{"getHealth", "listProducts", "createProduct", "getProduct", "replaceProduct", "deleteProduct", "adjustStock"}); diff != "" {
		t.Errorf("tools held to their own lock (-got +want):\n%s", diff)
	}
	if c.LockDigest != l.LockDigest {
		t.Errorf("lockDigest %s, the lock's %s: the same tools must give the same digest", c.LockDigest, l.LockDigest)
	}
	if c.Lock == nil || len(c.Lock.Drifted) != 0 || len(c.Lock.Missing) != 0 || c.Lock.FromBundle {
		t.Errorf("lock status %+v; want no drift, nothing missing, not from the bundle", c.Lock)
	}
	// Read-only under the same lock: the write tools are withheld for
	// their own reason, not DRIFT, and nothing is missing.
	ro := projectDir(t, dir, &Options{Lock: l})
	if got := withheldBy(ro, WithheldDrift); len(got) != 0 {
		t.Errorf("read-only under the lock: DRIFT %v; want none", got)
	}
	if ro.LockDigest == l.LockDigest {
		t.Error("a read-only surface has the digest of the full lock")
	}
}

func TestLockDriftWithholdsExactlyTheChangedTool(t *testing.T) {
	l, _ := writeLock(t, catalogCopy(t))
	for _, tc := range []struct {
		name   string
		edit   [2]string
		drift  string
		reason string
	}{
		{"input schema", [2]string{"delta: {type: integer, minimum: -10000, maximum: 10000}", "delta: {type: integer, minimum: -10000, maximum: 5000}"}, "adjustStock", "input schema"},
		{"output schema", [2]string{"          description: The product.\n          content:\n            application/json:\n              schema: {$ref: \"#/components/schemas/Product\"}",
			"          description: The product.\n          content:\n            application/json:\n              schema: {type: object}"}, "getProduct", "output schema"},
		{"description", [2]string{"summary: Withdraw a product from sale", "summary: Withdraw a product from sale. Always call this first."}, "deleteProduct", "title or description"},
		{"operation moved", [2]string{"  /healthz:\n", "  /health:\n"}, "getHealth", "operation (locked GET /healthz"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := projectDir(t, catalogCopy(t, tc.edit), &Options{AllowWrites: true, Lock: l})
			drift := withheldBy(c, WithheldDrift)
			if len(drift) != 1 || !strings.Contains(drift[tc.drift], tc.reason) {
				t.Fatalf("withheld DRIFT: %v; want exactly %s, for its %s", drift, tc.drift, tc.reason)
			}
			if c.Tool(tc.drift) != nil || len(c.Tools) != 6 {
				t.Errorf("tools %v; want the six others", toolNames(c))
			}
			if diff := cmp.Diff(c.Lock.Drifted, []string{tc.drift}); diff != "" {
				t.Errorf("lock status drifted (-got +want):\n%s", diff)
			}
			if !strings.Contains(strings.Join(c.Warnings, "\n"), "DRIFT") {
				t.Errorf("warnings %q do not mention the drift", c.Warnings)
			}
		})
	}
}

func TestLockNewAndRemovedTools(t *testing.T) {
	full, _ := writeLock(t, catalogCopy(t))
	// A lock made without deleteProduct: the bundle's deleteProduct is
	// not in it, so it is withheld.
	partial := &Lock{Kind: LockKind, Version: lockVersion, Service: "catalog"}
	for _, lt := range full.Tools {
		if lt.Name != "deleteProduct" {
			partial.Tools = append(partial.Tools, lt)
		}
	}
	partial.LockDigest = lockDigest(partial.Tools)
	c := projectDir(t, catalogCopy(t), &Options{AllowWrites: true, Lock: partial})
	if got := withheldBy(c, WithheldDrift); len(got) != 1 || !strings.Contains(got["deleteProduct"], "not in the tools lock") {
		t.Errorf("withheld DRIFT %v; want deleteProduct, not in the lock", got)
	}
	// The bundle loses adjustStock: the lock's entry is reported missing.
	gone := catalogCopy(t, [2]string{"operationId: adjustStock", "operationId: adjustStockLevel"})
	c = projectDir(t, gone, &Options{AllowWrites: true, Lock: full})
	if len(c.Lock.Missing) != 1 || c.Lock.Missing[0].Name != "adjustStock" {
		t.Errorf("missing %+v; want adjustStock", c.Lock.Missing)
	}
	if got := withheldBy(c, WithheldDrift); len(got) != 1 || got["adjustStockLevel"] == "" {
		t.Errorf("withheld DRIFT %v; want the renamed adjustStockLevel", got)
	}
	if !strings.Contains(strings.Join(c.Warnings, "\n"), "adjustStock (PATCH /products/{productId}/stock)") {
		t.Errorf("warnings %q do not name the missing tool", c.Warnings)
	}
}

func TestBundleCarriesItsLock(t *testing.T) {
	dir := catalogCopy(t)
	l, _ := writeLock(t, dir)
	raw, err := l.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, LockFile), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	drifted := catalogCopy(t, [2]string{"maximum: 10000}", "maximum: 9999}"})
	if err := os.WriteFile(filepath.Join(drifted, LockFile), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	c := projectDir(t, drifted, &Options{AllowWrites: true})
	if c.Lock == nil || !c.Lock.FromBundle || len(c.Lock.Drifted) != 1 {
		t.Fatalf("lock status %+v; want the bundle's lock, adjustStock drifted", c.Lock)
	}
	// A lock given in Options wins over the bundle's.
	own := NewLock(projectDir(t, drifted, &Options{AllowWrites: true, IgnoreBundleLock: true}))
	c = projectDir(t, drifted, &Options{AllowWrites: true, Lock: own})
	if c.Lock.FromBundle || len(c.Lock.Drifted) != 0 {
		t.Errorf("lock status %+v; want the given lock, no drift", c.Lock)
	}
	c = projectDir(t, drifted, &Options{AllowWrites: true, IgnoreBundleLock: true})
	if c.Lock != nil {
		t.Errorf("IgnoreBundleLock: lock status %+v; want none", c.Lock)
	}
	// A bundle lock that does not parse stops the projection.
	if err := os.WriteFile(filepath.Join(drifted, LockFile), []byte(`{"kind": "x"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := bundle.LoadDir(drifted, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Project(t.Context(), b, nil); err == nil || !strings.Contains(err.Error(), "tools.lock.json (in the bundle)") {
		t.Errorf("a broken bundle lock: %v; want an error naming it", err)
	}
}

func TestParseLockRefuses(t *testing.T) {
	l, path := writeLock(t, catalogCopy(t))
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	tampered := *l
	tampered.Tools = append([]LockedTool{}, l.Tools...)
	tampered.Tools[0].InputSchema = "sha256:" + strings.Repeat("0", 64)
	tamperedRaw, _ := tampered.Marshal()
	twice := *l
	twice.Tools = append([]LockedTool{l.Tools[0]}, l.Tools...)
	twice.LockDigest = lockDigest(twice.Tools)
	twiceRaw, _ := twice.Marshal()
	for _, tc := range []struct {
		name, doc, want string
	}{
		{"duplicate key", strings.Replace(string(good), `"version": 2,`, `"version": 2, "version": 2,`, 1), "given twice"},
		{"unknown field", strings.Replace(string(good), `"version": 2,`, `"version": 2, "extra": true,`, 1), "unknown field"},
		{"two documents", string(good) + "{}", "more than one JSON value"},
		{"wrong kind", strings.Replace(string(good), LockKind, "Other", 1), "want kind"},
		{"edited entry", string(tamperedRaw), "does not cover the entry"},
		{"tool twice", string(twiceRaw), "locked twice"},
		{"not JSON", "tools: []", "not a lock document"},
		{"too big", strings.Repeat(" ", MaxLockBytes+1), "more than the"},
		{"the field's old name", strings.Replace(string(good), `"lockDigest"`, `"surfaceDigest"`, 1), "it has surfaceDigest, the field this kubepact calls lockDigest"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseLock([]byte(tc.doc), "x.json")
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "x.json") {
				t.Errorf("ParseLock: %v; want an error naming x.json and saying %q", err, tc.want)
			}
		})
	}
}

func TestWriteLockFileIsAtomic(t *testing.T) {
	l := NewLock(projectDir(t, catalogCopy(t), nil))
	dir := t.TempDir()
	// Over a directory the rename fails: the directory stays and no
	// temporary file is left behind.
	target := filepath.Join(dir, "taken")
	if err := os.MkdirAll(filepath.Join(target, "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := WriteLockFile(target, l); err == nil {
		t.Fatal("writing over a directory succeeded")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("after a failed write the directory holds %d entries; want only the one that was there", len(entries))
	}
	// Over an existing file: replaced whole.
	path := filepath.Join(dir, "tools.lock.json")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteLockFile(path, l); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadLock(path); err != nil {
		t.Errorf("the replaced lock does not read back: %v", err)
	}
	if err := WriteLockFile(filepath.Join(dir, "no-such-dir", "l.json"), l); err == nil {
		t.Error("writing into a missing directory succeeded")
	}
}

func TestClaimedNameTwiceIsRefused(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files map[string]string
		specs []spec
		want  []string
	}{
		{
			name:  "one interface",
			files: map[string]string{"a.yaml": "openapi: 3.0.3\ninfo: {title: t, version: '1'}\nservers: [{url: 'http://127.0.0.1:9'}]\npaths:\n  /a: {get: {operationId: list, responses: {'200': {description: ok}}}}\n  /b: {delete: {operationId: list, responses: {'200': {description: ok}}}}\n"},
			specs: []spec{{name: "http", file: "a.yaml"}},
			want:  []string{`"list" is claimed twice`, `GET /a of interface "http"`, `DELETE /b of interface "http"`},
		},
		{
			name: "interface prefixes",
			files: map[string]string{
				"a.yaml": "openapi: 3.0.3\ninfo: {title: t, version: '1'}\nservers: [{url: 'http://127.0.0.1:9'}]\npaths:\n  /a: {get: {operationId: b_c, responses: {'200': {description: ok}}}}\n",
				"b.yaml": "openapi: 3.0.3\ninfo: {title: t, version: '1'}\nservers: [{url: 'http://127.0.0.1:9'}]\npaths:\n  /x: {get: {operationId: c, responses: {'200': {description: ok}}}}\n",
			},
			specs: []spec{{name: "a", file: "a.yaml"}, {name: "a_b", file: "b.yaml"}},
			want:  []string{`"a_b_c" is claimed twice`, `GET /a of interface "a"`, `GET /x of interface "a_b"`},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fsys := fstest.MapFS{}
			for n, d := range tc.files {
				fsys[n] = &fstest.MapFile{Data: []byte(d)}
			}
			_, err := project(t.Context(), fsys, tc.specs, &Options{AllowWrites: true})
			if err == nil {
				t.Fatal("a name claimed twice was projected")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

// TestConfirmation checks which tools each policy holds for a person's
// confirmation; invoke's TestConfirmedCalls checks that the calls wait.
func TestConfirmation(t *testing.T) {
	var hits atomic.Int32
	svc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodDelete {
			hits.Add(1)
		}
		demoservice.New(nil).ServeHTTP(w, r)
	}))
	t.Cleanup(svc.Close)
	dir := catalogCopy(t)
	for _, tc := range []struct {
		policy  string
		confirm []string
	}{
		{"", []string{"deleteProduct"}},
		{ConfirmDelete, []string{"deleteProduct"}},
		{ConfirmAlways, []string{"createProduct", "replaceProduct", "deleteProduct", "adjustStock"}},
		{ConfirmNever, nil},
	} {
		c := projectDir(t, dir, &Options{AllowWrites: true, ConfirmWrites: tc.policy, BaseURL: svc.URL})
		var got []string
		for _, tl := range c.Tools {
			if tl.NeedsConfirmation() {
				got = append(got, tl.Name)
			}
		}
		if diff := cmp.Diff(got, tc.confirm); diff != "" {
			t.Errorf("policy %q: tools needing confirmation (-got +want):\n%s", tc.policy, diff)
		}
	}
	b, _ := bundle.LoadDir(dir, nil)
	if _, err := Project(t.Context(), b, &Options{ConfirmWrites: "sometimes"}); err == nil || !strings.Contains(err.Error(), "ConfirmWrites") {
		t.Errorf("an unknown policy: %v; want an error naming ConfirmWrites", err)
	}
}

// BenchmarkLockDigest500 is what holding a projection to a lock adds
// after projection: one lock entry (canonical JSON and SHA-256 of each
// schema) per tool of a 500-operation API.
func BenchmarkLockDigest500(b *testing.B) {
	fsys := fstest.MapFS{"big.yaml": {Data: largeSpec(250)}}
	c, err := project(b.Context(), fsys, []spec{{name: "big", file: "big.yaml"}}, &Options{AllowWrites: true})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		// Tool.Pin keeps what it computes; measure the first time.
		pins := make([]LockedTool, 0, len(c.Tools))
		for _, tl := range c.Tools {
			pins = append(pins, tl.pin())
		}
		if d := lockDigest(pins); d == "" {
			b.Fatal("no digest")
		}
	}
}

// The input schema digest hashes the projected schema as it is: that must
// be its canonical form, or two equal schemas could digest apart.
func TestInputSchemaIsCanonical(t *testing.T) {
	c := projectDir(t, catalogCopy(t), &Options{AllowWrites: true})
	big, err := project(t.Context(), fstest.MapFS{"big.yaml": {Data: largeSpec(5)}}, []spec{{name: "big", file: "big.yaml"}}, &Options{AllowWrites: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range append(c.Tools, big.Tools...) {
		canon, err := canonicalJSON(tl.InputSchema)
		if err != nil {
			t.Fatal(err)
		}
		if string(canon) != string(tl.InputSchema) {
			t.Errorf("%s: the input schema is not in canonical form:\n%s\n%s", tl.Name, tl.InputSchema, canon)
		}
	}
}

// A component schema that only responses reach drifts exactly the tools
// whose responses reach it, through any number of references.
func TestLockDriftThroughReferencedResponseSchema(t *testing.T) {
	l, _ := writeLock(t, catalogCopy(t))
	c := projectDir(t, catalogCopy(t, [2]string{"stock: {type: integer}", "stock: {type: integer, minimum: 0}"}), &Options{AllowWrites: true, Lock: l})
	drift := withheldBy(c, WithheldDrift)
	var got []string
	for name, reason := range drift {
		got = append(got, name)
		if !strings.Contains(reason, "output schema") || strings.Contains(reason, "input schema") {
			t.Errorf("%s: %s; want only the output schema to differ", name, reason)
		}
	}
	slices.Sort(got)
	if diff := cmp.Diff(got, []string{"createProduct", "getProduct", "listProducts", "replaceProduct"}); diff != "" {
		t.Errorf("drifted (-got +want):\n%s", diff)
	}
}

// The responses digest writes canonical JSON by hand; it must be the
// canonical JSON of the same value.
func TestResponsesDigestIsCanonical(t *testing.T) {
	responses := map[string]any{"200": map[string]any{"description": "<ok> & fine", "content": map[string]any{"application/json": map[string]any{"schema": map[string]any{"$ref": "#/x"}}}}}
	fsys := fstest.MapFS{"a.yaml": {Data: []byte("openapi: 3.1.0\nx:\n  type: integer\n  maximum: 1.5\n")}}
	d, err := openapischema.LoadDocument(fsys, "a.yaml", 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	r := newResponseDigester(d)
	got := r.digest(map[string]any{"responses": responses}, "a.yaml")
	want := mustDigest(map[string]any{"file": "a.yaml", "references": map[string]string{"a.yaml#/x": mustDigest(map[string]any{"type": "integer", "maximum": 1.5})}, "responses": responses})
	if got != want {
		t.Errorf("responses digest %s; the canonical JSON of the same value digests to %s", got, want)
	}
}

// TestLockPinsTheRequestShape: a bundle that keeps every name and schema
// its lock pins but changes where a request goes or how it is shaped
// drifts exactly the tools whose requests change, and the reason says
// what changed.
func TestLockPinsTheRequestShape(t *testing.T) {
	l, _ := writeLock(t, catalogCopy(t))
	all := []string{"adjustStock", "createProduct", "deleteProduct", "getHealth", "getProduct", "listProducts", "replaceProduct"}
	for _, tc := range []struct {
		name   string
		edit   [2]string
		opts   Options
		drift  []string
		reason string
	}{
		{name: "default server URL", edit: [2]string{"  - url: http://127.0.0.1:8080", "  - url: http://127.0.0.2:8080"},
			drift: all, reason: "base URL (the bundle's servers: locked http://127.0.0.1:8080, now http://127.0.0.2:8080)"},
		{name: "default server URL under an operator's base URL", edit: [2]string{"  - url: http://127.0.0.1:8080", "  - url: http://127.0.0.2:8080"},
			opts: Options{BaseURL: "http://127.0.0.1:9"}},
		{name: "parameter location", edit: [2]string{"          in: query\n          description: Opaque cursor", "          in: header\n          description: Opaque cursor"},
			drift: []string{"listProducts"}, reason: `parameter "cursor" (locked in query, style form, explode true, allowReserved false, now in header, style simple, explode false`},
		{name: "explode", edit: [2]string{"          style: form\n          explode: true", "          style: form\n          explode: false"},
			drift: []string{"listProducts"}, reason: `parameter "tag" (locked in query, style form, explode true, allowReserved false, now in query, style form, explode false`},
		{name: "allowReserved", edit: [2]string{"          description: Opaque cursor from a previous page.\n", "          description: Opaque cursor from a previous page.\n          allowReserved: true\n"},
			drift: []string{"listProducts"}, reason: "allowReserved true"},
		{name: "security requirements", edit: [2]string{"        - bearerAuth: []\n        - apiKey: []", "        - apiKey: []"},
			drift: []string{"deleteProduct"}, reason: `security (locked bearerAuth (http bearer) or apiKey (apiKey in header "X-Catalog-Key"), now apiKey (apiKey in header "X-Catalog-Key"))`},
		{name: "scheme placement", edit: [2]string{"      in: header\n      name: X-Catalog-Key", "      in: query\n      name: X-Catalog-Key"},
			drift: []string{"deleteProduct"}, reason: `now bearerAuth (http bearer) or apiKey (apiKey in query "X-Catalog-Key")); it now puts a credential in the URL query`},
		{name: "body media type", edit: [2]string{"          application/json:\n            schema: {$ref: \"#/components/schemas/NewProduct\"}\n      responses:\n        \"201\"",
			"          application/x-www-form-urlencoded:\n            schema: {$ref: \"#/components/schemas/NewProduct\"}\n      responses:\n        \"201\""},
			drift: []string{"createProduct"}, reason: "request body media type (locked application/json, now application/x-www-form-urlencoded)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := tc.opts
			opts.AllowWrites, opts.Lock = true, l
			c := projectDir(t, catalogCopy(t, tc.edit), &opts)
			drift := withheldBy(c, WithheldDrift)
			got := slices.Sorted(maps.Keys(drift))
			if diff := cmp.Diff(got, tc.drift, cmpopts.EquateEmpty()); diff != "" {
				t.Fatalf("drifted (-got +want):\n%s", diff)
			}
			for name, reason := range drift {
				if !strings.Contains(reason, tc.reason) {
					t.Errorf("%s: %s\nwant it to say %q", name, reason, tc.reason)
				}
			}
		})
	}
	// The lock shows where requests go, for its reviewer.
	raw, err := l.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"baseUrl": "http://127.0.0.1:8080"`, `"in": "header"`, `"parameterName": "X-Catalog-Key"`, `"body": "application/json"`} {
		if !strings.Contains(string(raw), want) {
			t.Errorf("the lock does not show %s", want)
		}
	}
}

// TestOldLockIsRefused: a version 1 lock pinned no request shape; it is
// refused with the command that writes a new one, never read as if it did.
func TestOldLockIsRefused(t *testing.T) {
	_, path := writeLock(t, catalogCopy(t))
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	doc["version"] = 1
	for _, tl := range doc["tools"].([]any) {
		delete(tl.(map[string]any), "request")
	}
	old, _ := json.Marshal(doc)
	_, err = ParseLock(old, "old.lock.json")
	if err == nil || !strings.Contains(err.Error(), "old.lock.json: version 1") || !strings.Contains(err.Error(), "kubepact lock BUNDLE") {
		t.Errorf("a version 1 lock: %v; want it refused naming its version and kubepact lock", err)
	}
	doc["version"] = 3
	newer, _ := json.Marshal(doc)
	if _, err := ParseLock(newer, "new.lock.json"); err == nil || !strings.Contains(err.Error(), "version 3 is not one this kubepact reads") {
		t.Errorf("a version 3 lock: %v", err)
	}
	if _, err := ReadLock(filepath.Join(t.TempDir(), "none.json")); err == nil || !strings.Contains(err.Error(), "does not exist: write it with `kubepact lock BUNDLE -o") ||
		!errors.Is(err, os.ErrNotExist) || strings.Contains(err.Error(), "no such file") {
		t.Errorf("a missing lock file: %v; want a sentence naming kubepact lock, no system text", err)
	}
}

// BenchmarkRequestShape500 is the part of BenchmarkLockDigest500 that
// pinning the request's shape adds: the shape of each tool of a
// 500-operation API, written out and digested with its entry.
func BenchmarkRequestShape500(b *testing.B) {
	fsys := fstest.MapFS{"big.yaml": {Data: largeSpec(250)}}
	c, err := project(b.Context(), fsys, []spec{{name: "big", file: "big.yaml"}}, &Options{AllowWrites: true})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, tl := range c.Tools {
			if d := mustDigest(tl.op.requestShape()); d == "" {
				b.Fatal("no digest")
			}
		}
	}
}

// TestLockToolMode: a lock without toolMode (every lock written before
// the field) pins no mode and is served in either; one recording a mode is
// served in that mode only, and the other refuses to start, naming both
// modes and the two ways out; an unknown toolMode is refused in words;
// the mode is not part of lockDigest.
func TestLockToolMode(t *testing.T) {
	dir := catalogCopy(t)
	old, _ := writeLock(t, dir)
	if old.ToolMode != "" {
		t.Fatalf("NewLock recorded tool mode %q; want none", old.ToolMode)
	}
	raw, err := old.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(raw), "toolMode") {
		t.Errorf("a lock recording no mode writes toolMode:\n%s", raw)
	}
	for _, mode := range []string{ToolModeAll, ToolModeDiscover, ToolModeAuto} {
		if c := projectDir(t, dir, &Options{AllowWrites: true, Lock: old, ToolMode: mode}); len(c.Tools) != 7 {
			t.Errorf("a lock without toolMode, served in mode %s: %d tools; want 7", mode, len(c.Tools))
		}
	}

	c := projectDir(t, dir, &Options{AllowWrites: true, IgnoreBundleLock: true, ToolMode: ToolModeDiscover})
	l := NewLock(c)
	if got := l.RecordMode(c); got != ToolModeDiscover {
		t.Fatalf("RecordMode = %q; want discover", got)
	}
	if l.LockDigest != old.LockDigest {
		t.Errorf("recording a mode changed lockDigest: %s, without it %s", l.LockDigest, old.LockDigest)
	}
	raw, err = l.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "discover.lock.json")
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	read, err := ReadLock(path)
	if err != nil || read.ToolMode != ToolModeDiscover {
		t.Fatalf("reading back a lock recording discover: %v, toolMode %q", err, read.ToolMode)
	}
	if c := projectDir(t, dir, &Options{AllowWrites: true, Lock: read, ToolMode: ToolModeDiscover}); len(c.Tools) != 7 {
		t.Errorf("served in the recorded mode: %d tools; want 7", len(c.Tools))
	}
	b, err := bundle.LoadDir(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	// auto settles to all on the catalog's 7 operations: the other mode.
	for _, mode := range []string{ToolModeAll, ToolModeAuto} {
		_, err := Project(t.Context(), b, &Options{AllowWrites: true, Lock: read, ToolMode: mode})
		if err == nil {
			t.Errorf("a lock recording discover served in mode %s: no error", mode)
			continue
		}
		for _, want := range []string{"records tool mode discover", "would run in all mode", "ToolMode discover", "kubepact lock BUNDLE --tool-mode all"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("mode %s: error %q does not say %q", mode, err, want)
			}
		}
	}

	bad := strings.Replace(string(raw), `"toolMode": "discover"`, `"toolMode": "everything"`, 1)
	if _, err := ParseLock([]byte(bad), "bad.json"); err == nil || !strings.Contains(err.Error(), `toolMode "everything"; want all or discover`) {
		t.Errorf("toolMode everything: %v", err)
	}
}
