package mcp

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/tools/txtar"

	"github.com/kubepact/kubepact/bundle/validate"
	"github.com/kubepact/kubepact/fleetgraph"
	"github.com/kubepact/kubepact/fleetgraph/source"
	"github.com/kubepact/kubepact/internal/authoring"
)

// TestTranscripts replays authoring and catalog tool calls from
// testdata/transcripts through the real server: an mcp.Server over the
// workspace, called by the go-sdk client in memory, so a transcript pins
// exactly what an agent receives. Each archive holds:
//
//	ws/<path>        the workspace before the call
//	roots            catalog calls: the catalog roots, one a line (ws/<path> is below the workspace)
//	symlinks         optional lines "ws/<path> -> <target>" ($OUTSIDE = a directory outside the workspace)
//	allow-invalid    optional: the bundle was invalid before and may stay so
//	fleet            optional: serve the fleet family too, its sources the
//	                 workspace (a local source) and ws/targets.yaml when present
//	traces           optional, with fleet: the fleet's --traces files, one a
//	                 line (ws/<path>), read at start for its observed edges
//	call.json        {"tool": "pacto_create|pacto_edit|pacto_check|pacto_catalog_revision|…", "args": {...}}
//	want/result.json structuredContent of a successful call (and for catalog
//	                 and impact calls want/result.txt, its text), or
//	want/error.json  the error of an isError result ({"error": ...} in structuredContent)
//	want/error.txt   and the text content of that result
//	want/files       every file in the workspace after the call
//	want/ws/<path>   the content of every file the call created or changed
//
// After every successful write the bundle on disk must validate. Rewrite
// the want sections with go test ./mcp -run TestTranscripts -update.
func TestTranscripts(t *testing.T) {
	paths, err := filepath.Glob("testdata/transcripts/*.txtar")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no transcripts: %v", err)
	}
	for _, p := range paths {
		t.Run(strings.TrimSuffix(filepath.Base(p), ".txtar"), func(t *testing.T) {
			runTranscript(t, p)
		})
	}
}

type transcriptCall struct {
	Tool string          `json:"tool"`
	Args json.RawMessage `json:"args"`
}

// resultTypes give a successful result its fields' declared order back
// (the client decodes structuredContent into a map).
var resultTypes = map[string]reflect.Type{
	"pacto_create": reflect.TypeFor[authoring.CreateResult](),
	"pacto_edit":   reflect.TypeFor[authoring.EditResult](),
	"pacto_check":  reflect.TypeFor[authoring.CheckResult](),

	"pacto_validate_payload": reflect.TypeFor[validatePayloadOut](),
	"pacto_explain_field":    reflect.TypeFor[explainFieldOut](),
	"pacto_catalog_revision": reflect.TypeFor[CatalogRevisionResult](),
	"pacto_impact":           reflect.TypeFor[impactOut](),
	"pacto_fleet_graph":      reflect.TypeFor[fleetGraphOut](),
	"pacto_fleet_status":     reflect.TypeFor[fleetStatusOut](),
}

func runTranscript(t *testing.T, file string) {
	ar, err := txtar.ParseFile(file)
	if err != nil {
		t.Fatal(err)
	}
	ws := t.TempDir()
	outside := t.TempDir()
	initial := map[string][]byte{}
	var c transcriptCall
	var roots, tracesFiles []string
	allowInvalid, withFleet := false, false
	for _, f := range ar.Files {
		switch {
		case strings.HasPrefix(f.Name, "ws/"):
			rel := strings.TrimPrefix(f.Name, "ws/")
			initial[rel] = f.Data
			writeTestFile(t, filepath.Join(ws, rel), f.Data)
		case f.Name == "outside/secret":
			writeTestFile(t, filepath.Join(outside, "secret"), f.Data)
		case f.Name == "symlinks":
			for _, line := range strings.Split(strings.TrimSpace(string(f.Data)), "\n") {
				name, target, ok := strings.Cut(line, " -> ")
				if !ok {
					t.Fatalf("bad symlink line %q", line)
				}
				target = strings.ReplaceAll(target, "$OUTSIDE", outside)
				link := filepath.Join(ws, strings.TrimPrefix(name, "ws/"))
				if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(target, link); err != nil {
					t.Fatal(err)
				}
			}
		case f.Name == "roots":
			for _, line := range strings.Fields(string(f.Data)) {
				if rel, ok := strings.CutPrefix(line, "ws/"); ok {
					line = filepath.Join(ws, rel)
				}
				roots = append(roots, line)
			}
		case f.Name == "traces":
			for _, line := range strings.Fields(string(f.Data)) {
				tracesFiles = append(tracesFiles, filepath.Join(ws, strings.TrimPrefix(line, "ws/")))
			}
		case f.Name == "allow-invalid":
			allowInvalid = true
		case f.Name == "fleet":
			withFleet = true
		case f.Name == "call.json":
			data := bytes.ReplaceAll(f.Data, []byte("$OUTSIDE"), []byte(outside))
			if err := json.Unmarshal(data, &c); err != nil {
				t.Fatalf("call.json: %v", err)
			}
		}
	}
	if resultTypes[c.Tool] == nil {
		t.Fatalf("call.json: tool %q is not an authoring, payload, catalog, impact, graph or status tool", c.Tool)
	}
	opts := &Options{Workspace: ws, Families: []Family{FamilyAuthoring, FamilyPayload}}
	if strings.HasPrefix(c.Tool, "pacto_catalog") {
		opts.Families, opts.Catalog.Roots = []Family{FamilyCatalog}, roots
	}
	if withFleet {
		// A fixed clock: the answers' asOf and sync times are pinned too.
		b := fleetgraph.NewBuilder(&fleetgraph.BuilderOptions{Clock: func() time.Time { return time.Date(2026, 8, 1, 0, 0, 0, 0, time.UTC) }})
		sources := []source.Source{&source.LocalSource{Dir: ws}}
		if _, err := os.Stat(filepath.Join(ws, "targets.yaml")); err == nil {
			sources = append(sources, &source.TargetStateSource{Path: filepath.Join(ws, "targets.yaml")})
		}
		source.NewFeed(b, sources).Collect(t.Context(), nil)
		opts.Families = append(opts.Families, FamilyFleet)
		opts.Fleet = FleetOptions{Enabled: true, Builder: b, Traces: tracesFiles}
	}
	cs := connect(t.Context(), t, newTestServer(t, opts))
	if strings.HasPrefix(c.Tool, "pacto_catalog") {
		resolvedCatalog(t, cs) // the server answers before its first resolution has ended
	}
	res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: c.Tool, Arguments: c.Args})
	if err != nil {
		t.Fatalf("%s: protocol error: %v", c.Tool, err)
	}

	realWS, _ := filepath.EvalSymlinks(ws)
	realOutside, _ := filepath.EvalSymlinks(outside)
	normalise := func(b []byte) []byte {
		for _, r := range [][2]string{{realWS, "$WORK"}, {ws, "$WORK"}, {realOutside, "$OUTSIDE"}, {outside, "$OUTSIDE"}} {
			b = bytes.ReplaceAll(b, []byte(r[0]), []byte(r[1]))
		}
		return b
	}
	got := map[string][]byte{}
	content := structured(t, res)
	if res.IsError {
		e, ok := content["error"]
		if !ok {
			t.Fatalf("an error result without the error envelope: %s", text(res))
		}
		got["want/error.json"] = normalise(mustJSON(t, e))
		got["want/error.txt"] = normalise([]byte(text(res) + "\n"))
	} else {
		// A diff reads better as its own section than as a JSON string.
		if d, ok := content["diff"].(string); ok {
			got["want/diff"] = normalise([]byte(d))
			content["diff"] = "(see want/diff)"
		}
		// A snapshot id depends on where the workspace is.
		if svc, ok := content["service"].(map[string]any); ok && svc["snapshotId"] != nil {
			svc["snapshotId"] = "$SNAPSHOT"
		}
		for _, k := range []string{"meta", "pin"} {
			if m, ok := content[k].(map[string]any); ok {
				for _, id := range []string{"snapshotId", "current"} {
					if m[id] != nil {
						m[id] = "$SNAPSHOT"
					}
				}
			}
		}
		got["want/result.json"] = normalise(mustJSON(t, orderedAs(t, resultTypes[c.Tool], content)))
		// A catalog answer's text is where a miss says what it means
		// (unknown or absent, the candidates): pin it too.
		if strings.HasPrefix(c.Tool, "pacto_catalog") || c.Tool == "pacto_impact" || strings.HasPrefix(c.Tool, "pacto_fleet") {
			got["want/result.txt"] = normalise([]byte(text(res) + "\n"))
		}
	}
	var all []string
	err = filepath.WalkDir(ws, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(ws, p)
		rel = filepath.ToSlash(rel)
		if d.Type()&fs.ModeSymlink != 0 {
			all = append(all, rel+" (symlink)")
			return nil
		}
		all = append(all, rel)
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if old, ok := initial[rel]; !ok || !bytes.Equal(old, data) {
			got["want/ws/"+rel] = data
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(all)
	if entries, _ := os.ReadDir(outside); len(entries) > 1 || (len(entries) == 1 && entries[0].Name() != "secret") {
		t.Errorf("the call wrote outside the workspace: %v", entries)
	}
	got["want/files"] = []byte(strings.Join(all, "\n") + "\n")

	if !res.IsError && (c.Tool == "pacto_create" || c.Tool == "pacto_edit") && !allowInvalid {
		path, _ := content["path"].(string)
		if dry, _ := content["dryRun"].(bool); !dry {
			r := validate.Validate(t.Context(), os.DirFS(filepath.Join(ws, path)), nil)
			if !r.Valid() {
				t.Errorf("the bundle written to %s does not validate: %+v", path, r.Errors)
			}
		}
	}

	if *update {
		var kept []txtar.File
		for _, f := range ar.Files {
			if !strings.HasPrefix(f.Name, "want/") {
				kept = append(kept, f)
			}
		}
		for _, n := range slices.Sorted(keysOf(got)) {
			kept = append(kept, txtar.File{Name: n, Data: got[n]})
		}
		ar.Files = kept
		if err := os.WriteFile(file, txtar.Format(ar), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want := map[string][]byte{}
	for _, f := range ar.Files {
		if strings.HasPrefix(f.Name, "want/") {
			want[f.Name] = f.Data
		}
	}
	for _, n := range slices.Sorted(keysOf(want)) {
		if _, ok := got[n]; !ok {
			t.Errorf("%s: expected, but the call produced none", n)
		}
	}
	for _, n := range slices.Sorted(keysOf(got)) {
		w, ok := want[n]
		if !ok {
			t.Errorf("%s: unexpected; got:\n%s", n, got[n])
			continue
		}
		if diff := cmp.Diff(string(w), string(got[n])); diff != "" {
			t.Errorf("%s mismatch (-want +got):\n%s", n, diff)
		}
	}
}

// orderedAs re-encodes generic with the field order of type typ by
// decoding it into a value of that type; a field the type lacks fails the
// test, so nothing the server sent is dropped from the transcript.
func orderedAs(t *testing.T, typ reflect.Type, generic map[string]any) any {
	t.Helper()
	b, err := json.Marshal(generic)
	if err != nil {
		t.Fatal(err)
	}
	v := reflect.New(typ)
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v.Interface()); err != nil {
		t.Fatalf("result %s does not decode as %s: %v", b, typ, err)
	}
	return v.Interface()
}

func keysOf[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func writeTestFile(t *testing.T, p string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}
