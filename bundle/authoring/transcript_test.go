package authoring

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/tools/txtar"

	"github.com/kubepact/kubepact/bundle/validate"
)

var update = flag.Bool("update", false, "rewrite the want sections of testdata/transcripts/*.txtar from the current behaviour")

// TestTranscripts replays tool calls from testdata/transcripts. Each archive
// holds:
//
//	ws/<path>        the workspace before the call
//	symlinks         optional lines "ws/<path> -> <target>" ($OUTSIDE = a directory outside the workspace)
//	allow-invalid    optional: the bundle was invalid before and may stay so
//	call.json        {"tool": "pacto_create|pacto_edit|pacto_check", "args": {...}}
//	want/result.json the result, or want/error.json the error
//	want/files       every file in the workspace after the call
//	want/ws/<path>   the content of every file the call created or changed
//
// Arguments go through DecodeArgs exactly as the mcp layer passes them.
// After every successful write the bundle on disk must validate.
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

type call struct {
	Tool string          `json:"tool"`
	Args json.RawMessage `json:"args"`
}

func runTranscript(t *testing.T, file string) {
	ar, err := txtar.ParseFile(file)
	if err != nil {
		t.Fatal(err)
	}
	ws := t.TempDir()
	outside := t.TempDir()
	initial := map[string][]byte{}
	var c call
	allowInvalid := false
	for _, f := range ar.Files {
		switch {
		case strings.HasPrefix(f.Name, "ws/"):
			rel := strings.TrimPrefix(f.Name, "ws/")
			initial[rel] = f.Data
			writeFile(t, filepath.Join(ws, rel), f.Data)
		case f.Name == "outside/secret":
			writeFile(t, filepath.Join(outside, "secret"), f.Data)
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
		case f.Name == "allow-invalid":
			allowInvalid = true
		case f.Name == "call.json":
			data := bytes.ReplaceAll(f.Data, []byte("$OUTSIDE"), []byte(outside))
			if err := json.Unmarshal(data, &c); err != nil {
				t.Fatalf("call.json: %v", err)
			}
		}
	}
	a, err := New(&Options{Workspace: ws})
	if err != nil {
		t.Fatal(err)
	}
	result, callErr := invoke(t, a, c)

	got := map[string][]byte{}
	normalise := func(b []byte) []byte {
		b = bytes.ReplaceAll(b, []byte(a.Workspace().Root), []byte("$WORK"))
		return bytes.ReplaceAll(b, []byte(outside), []byte("$OUTSIDE"))
	}
	if callErr != nil {
		var ae *Error
		if !errors.As(callErr, &ae) {
			t.Fatalf("error is %T, not *Error: %v", callErr, callErr)
		}
		got["want/error.json"] = normalise(mustJSON(t, ae))
	} else {
		// A diff reads better as its own section than as a JSON string.
		var generic map[string]any
		_ = json.Unmarshal(mustJSON(t, result), &generic)
		if d, ok := generic["diff"].(string); ok {
			got["want/diff"] = normalise([]byte(d))
			generic["diff"] = "(see want/diff)"
		}
		got["want/result.json"] = normalise(mustJSON(t, orderedLike(result, generic)))
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

	if callErr == nil && c.Tool != "pacto_check" && !allowInvalid {
		var dry struct {
			Path   string `json:"path"`
			DryRun bool   `json:"dryRun"`
		}
		_ = json.Unmarshal(mustJSON(t, result), &dry)
		if !dry.DryRun {
			r := validate.Validate(t.Context(), os.DirFS(filepath.Join(ws, dry.Path)), nil)
			if !r.Valid() {
				t.Errorf("the bundle written to %s does not validate: %+v", dry.Path, r.Errors)
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
		names := slices.Sorted(mapsKeys(got))
		for _, n := range names {
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
	for _, n := range slices.Sorted(mapsKeys(want)) {
		if _, ok := got[n]; !ok {
			t.Errorf("%s: expected, but the call produced none", n)
		}
	}
	for _, n := range slices.Sorted(mapsKeys(got)) {
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

// orderedLike re-encodes generic with the field order of result's type by
// decoding it back into a value of that type.
func orderedLike(result any, generic map[string]any) any {
	b, _ := json.Marshal(generic)
	v := reflect.New(reflect.TypeOf(result).Elem())
	_ = json.Unmarshal(b, v.Interface())
	return v.Interface()
}

func mapsKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func invoke(t *testing.T, a *Authoring, c call) (any, error) {
	t.Helper()
	switch c.Tool {
	case "pacto_create":
		var req CreateRequest
		if err := DecodeArgs(c.Args, &req); err != nil {
			return nil, err
		}
		return a.Create(t.Context(), req)
	case "pacto_edit":
		var req EditRequest
		if err := DecodeArgs(c.Args, &req); err != nil {
			return nil, err
		}
		return a.Edit(t.Context(), req)
	case "pacto_check":
		var req CheckRequest
		if err := DecodeArgs(c.Args, &req); err != nil {
			return nil, err
		}
		return a.Check(t.Context(), req)
	}
	t.Fatalf("unknown tool %q", c.Tool)
	return nil, nil
}

func writeFile(t *testing.T, p string, data []byte) {
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
