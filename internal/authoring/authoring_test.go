package authoring

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const minimalContract = `pactoVersion: "2.0"
service:
  name: tiny
  version: 0.1.0
`

func newTestAuthoring(t *testing.T, files map[string]string) (*Authoring, string) {
	t.Helper()
	ws := t.TempDir()
	for name, data := range files {
		writeFile(t, filepath.Join(ws, name), []byte(data))
	}
	a, err := New(&Options{Workspace: ws})
	if err != nil {
		t.Fatal(err)
	}
	return a, ws
}

// TestSuggestionsReplay replays every suggested toolCall verbatim: its
// params go through the same strict decoder pacto_edit's arguments do, the
// edit must change something, and afterwards the suggestion is gone.
func TestSuggestionsReplay(t *testing.T) {
	a, _ := newTestAuthoring(t, map[string]string{"tiny/pacto.yaml": minimalContract})
	ctx := t.Context()
	res, err := a.Check(ctx, CheckRequest{Path: "tiny"})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Valid {
		t.Fatalf("contract invalid: %+v", res.Errors)
	}
	replayed := 0
	for _, s := range res.Suggestions {
		if s.ToolCall == nil {
			continue
		}
		if s.ToolCall.Tool != "pacto_edit" {
			t.Fatalf("toolCall for tool %q, want pacto_edit", s.ToolCall.Tool)
		}
		// Over the wire the params are JSON: encode them as a client would.
		wire, err := json.Marshal(s.ToolCall.Params)
		if err != nil {
			t.Fatal(err)
		}
		var req EditRequest
		dec := json.NewDecoder(bytes.NewReader(wire))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&req); err != nil {
			t.Fatalf("suggested params %s do not decode as pacto_edit arguments: %v", wire, err)
		}
		edit, err := a.Edit(ctx, req)
		if err != nil {
			t.Fatalf("replaying %s: %v", wire, err)
		}
		if len(edit.Changes) == 0 {
			t.Errorf("replaying %s changed nothing; warnings: %v", wire, edit.Warnings)
		}
		replayed++
	}
	if replayed != 2 {
		t.Errorf("replayed %d suggestions, want 2 (interfaces, state)", replayed)
	}
	after, err := a.Check(ctx, CheckRequest{Path: "tiny"})
	if err != nil {
		t.Fatal(err)
	}
	if !after.Valid {
		t.Fatalf("contract invalid after the replays: %+v", after.Errors)
	}
	for _, s := range after.Suggestions {
		if s.ToolCall != nil {
			t.Errorf("suggestion still offered after it was applied: %s", s.Message)
		}
	}
}

// failingWriter writes the first n bytes, then fails, like a full disk.
type failingWriter struct {
	w io.Writer
	n int
}

func (f *failingWriter) Write(p []byte) (int, error) {
	if len(p) > f.n {
		written, _ := f.w.Write(p[:f.n])
		return written, errors.New("no space left on device")
	}
	return f.w.Write(p)
}

// TestWriteFailureKeepsOldFile fails the write of pacto.yaml half-way: the
// old file must be intact, the stub scaffolded in the same call removed again
// and no temporary file left behind.
func TestWriteFailureKeepsOldFile(t *testing.T) {
	original := minimalContract + "# keep me\n"
	a, ws := newTestAuthoring(t, map[string]string{"tiny/pacto.yaml": original})
	a.wrapWriter = func(rel string, w io.Writer) io.Writer {
		if strings.HasSuffix(rel, "pacto.yaml") {
			return &failingWriter{w: w, n: 20}
		}
		return w
	}
	_, err := a.Edit(t.Context(), EditRequest{Path: "tiny", AddInterfaces: []InterfaceSpec{{Name: "api", Type: "openapi"}}})
	var ae *Error
	if !errors.As(err, &ae) || ae.Code != CodeInternal {
		t.Fatalf("Edit with a failing write = %v, want an INTERNAL error", err)
	}
	got, err := os.ReadFile(filepath.Join(ws, "tiny/pacto.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(original, string(got)); diff != "" {
		t.Errorf("pacto.yaml changed by a failed write (-want +got):\n%s", diff)
	}
	var left []string
	_ = filepath.WalkDir(ws, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(ws, p)
			left = append(left, filepath.ToSlash(rel))
		}
		return nil
	})
	if diff := cmp.Diff([]string{"tiny/pacto.yaml"}, left); diff != "" {
		t.Errorf("files after the failed write (-want +got):\n%s", diff)
	}
}

func TestCreateNeverReplacesScaffoldTarget(t *testing.T) {
	// A spec file that appears between planning and writing is not replaced.
	a, ws := newTestAuthoring(t, nil)
	root, err := a.openRoot()
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	writeFile(t, filepath.Join(ws, "x/interfaces/api.yaml"), []byte("mine\n"))
	err = a.writeAll(t.Context(), root, []fileChange{
		{rel: "x/interfaces/api.yaml", data: []byte("stub\n"), create: true},
		{rel: "x/pacto.yaml", data: []byte(minimalContract)},
	})
	var ae *Error
	if !errors.As(err, &ae) || ae.Code != CodeAlreadyExists {
		t.Fatalf("writeAll over an existing file = %v, want ALREADY_EXISTS", err)
	}
	if got, _ := os.ReadFile(filepath.Join(ws, "x/interfaces/api.yaml")); string(got) != "mine\n" {
		t.Errorf("existing file replaced: %q", got)
	}
	if _, err := os.Stat(filepath.Join(ws, "x/pacto.yaml")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("pacto.yaml written after a failed scaffold: %v", err)
	}
}

func TestWorkspaceRel(t *testing.T) {
	ws := t.TempDir()
	outside := t.TempDir()
	writeFile(t, filepath.Join(ws, "real/pacto.yaml"), []byte(minimalContract))
	if err := os.Symlink(filepath.Join(ws, "real"), filepath.Join(ws, "inside-link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(ws, "outside-link")); err != nil {
		t.Fatal(err)
	}
	w, err := NewWorkspace(ws)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		in, want string
		outside  bool
	}{
		{in: "", want: "."},
		{in: ".", want: "."},
		{in: "a/b/../c", want: "a/c"},
		{in: filepath.Join(ws, "new/dir"), want: "new/dir"},
		{in: "inside-link/x", want: "inside-link/x"},
		{in: "..", outside: true},
		{in: "a/../../b", outside: true},
		{in: outside, outside: true},
		{in: "/", outside: true},
		{in: "outside-link", outside: true},
		{in: "outside-link/deeper/still", outside: true},
	}
	for _, tt := range tests {
		got, err := w.Rel("path", tt.in)
		if tt.outside {
			var ae *Error
			if !errors.As(err, &ae) || ae.Code != CodePathOutsideWorkspace {
				t.Errorf("Rel(%q) = %q, %v; want PATH_OUTSIDE_WORKSPACE", tt.in, got, err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("Rel(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

func TestExplainField(t *testing.T) {
	tests := []struct {
		path string
		want func(*FieldHelp) string // "" when fine
	}{
		{"state.persistence.durability", func(h *FieldHelp) string {
			if h.Type != "string" || !cmp.Equal(h.AllowedValues, []any{"ephemeral", "persistent"}) || !h.Required ||
				h.Description == "" || h.Example == nil {
				return "want a required string enum ephemeral|persistent with a description and example"
			}
			return ""
		}},
		{"interfaces[0].type", func(h *FieldHelp) string {
			if h.Path != "interfaces.type" || len(h.AllowedValues) != 3 {
				return "want interfaces.type with three allowed values"
			}
			return ""
		}},
		{"interfaces[].visibility", func(h *FieldHelp) string {
			if h.Default != "internal" || h.Required {
				return "want optional, default internal"
			}
			return ""
		}},
		{"readiness.expires", func(h *FieldHelp) string {
			if h.Format != "date" || h.Example == nil {
				return "want a date with an example"
			}
			return ""
		}},
		{"interfaces", func(h *FieldHelp) string {
			if h.Type != "array of object" || !cmp.Equal(h.Fields, []string{"name", "ref", "type", "visibility"}) {
				return "want an array of objects with the interface fields"
			}
			return ""
		}},
		{"", func(h *FieldHelp) string {
			if h.Type != "object" || len(h.Fields) < 10 {
				return "want the top-level object and its sections"
			}
			return ""
		}},
	}
	for _, tt := range tests {
		h, err := ExplainField(tt.path)
		if err != nil {
			t.Errorf("ExplainField(%q): %v", tt.path, err)
			continue
		}
		if msg := tt.want(h); msg != "" {
			t.Errorf("ExplainField(%q) = %+v: %s", tt.path, h, msg)
		}
	}
}

func TestExplainFieldUnknown(t *testing.T) {
	tests := []struct {
		path, didYouMean string
		accepted         []string
	}{
		{"state.persistance.durability", "persistence", []string{"dataCriticality", "persistence", "type"}},
		{"interfaces.typ", "type", []string{"name", "ref", "type", "visibility"}},
		{"servce", "service", nil},
		{"state.type.x", "", nil},
	}
	for _, tt := range tests {
		_, err := ExplainField(tt.path)
		var ae *Error
		if !errors.As(err, &ae) || ae.Code != CodeInvalidArgument || ae.Field != "path" {
			t.Errorf("ExplainField(%q) = %v, want INVALID_ARGUMENT on path", tt.path, err)
			continue
		}
		if ae.DidYouMean != tt.didYouMean {
			t.Errorf("ExplainField(%q) did-you-mean %q, want %q (%s)", tt.path, ae.DidYouMean, tt.didYouMean, ae.Message)
		}
		if tt.accepted != nil && !cmp.Equal(ae.Accepted, tt.accepted) {
			t.Errorf("ExplainField(%q) accepted %v, want %v", tt.path, ae.Accepted, tt.accepted)
		}
	}
}

func TestUnifiedDiff(t *testing.T) {
	old := "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\n"
	new := "a\nb\nC\nd\ne\nf\ng\nh\ni\nj\nk\n"
	want := `--- a/f.txt
+++ b/f.txt
@@ -1,6 +1,6 @@
 a
 b
-c
+C
 d
 e
 f
@@ -8,3 +8,4 @@
 h
 i
 j
+k
`
	if diff := cmp.Diff(want, unifiedDiff("f.txt", []byte(old), []byte(new))); diff != "" {
		t.Errorf("unifiedDiff mismatch (-want +got):\n%s", diff)
	}
	if got := unifiedDiff("f.txt", []byte(old), []byte(old)); got != "" {
		t.Errorf("diff of equal files = %q, want empty", got)
	}
	if got := unifiedDiff("f.txt", []byte("x"), []byte("y")); !strings.Contains(got, "\\ No newline at end of file") {
		t.Errorf("diff without final newline lacks the marker:\n%s", got)
	}
}

func TestNewDefaultsToCurrentDirectory(t *testing.T) {
	a, err := New(nil)
	if err != nil {
		t.Fatal(err)
	}
	wd, _ := os.Getwd()
	wd, _ = filepath.EvalSymlinks(wd)
	if a.Workspace().Root != wd {
		t.Errorf("workspace %q, want the current directory %q", a.Workspace().Root, wd)
	}
	if _, err := New(&Options{Workspace: filepath.Join(t.TempDir(), "missing")}); err == nil {
		t.Error("New with a missing workspace: got no error")
	}
}

// pacto_create without overwrite must not replace a pacto.yaml that appears
// between its check and its write (a concurrent create, an editor saving):
// the new file is placed only where nothing exists.
func TestCreateNeverReplacesAContractThatAppearsMeanwhile(t *testing.T) {
	a, ws := newTestAuthoring(t, nil)
	theirs := minimalContract + "# written by someone else meanwhile\n"
	a.wrapWriter = func(rel string, w io.Writer) io.Writer {
		if rel == "svc/pacto.yaml" {
			if err := os.WriteFile(filepath.Join(ws, "svc", "pacto.yaml"), []byte(theirs), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return w
	}
	_, err := a.Create(t.Context(), CreateRequest{Name: "svc"})
	var ae *Error
	if !errors.As(err, &ae) || ae.Code != CodeAlreadyExists {
		t.Errorf("Create = %v, want an ALREADY_EXISTS error", err)
	}
	got, err := os.ReadFile(filepath.Join(ws, "svc", "pacto.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(got), theirs); diff != "" {
		t.Errorf("the contract that appeared meanwhile was replaced (-got +want):\n%s", diff)
	}
}
