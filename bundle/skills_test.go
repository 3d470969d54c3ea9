package bundle

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
)

func TestSkills(t *testing.T) {
	dir := writeTree(t, map[string]string{
		"pacto.yaml":         "x",
		"skills/refund.md":   "# Refund\n",
		"skills/states.md":   "# States\n",
		"skills/notes.txt":   "not a skill",
		"skills/sub/deep.md": "not listed",
		"secret.md":          "outside",
	})
	fsys := os.DirFS(dir)

	got, err := ListSkills(fsys)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"refund", "states"}, got); diff != "" {
		t.Errorf("ListSkills (-want +got):\n%s", diff)
	}

	for _, name := range []string{"refund", "refund.md"} {
		md, err := ReadSkill(fsys, name)
		if err != nil || md != "# Refund\n" {
			t.Errorf("ReadSkill(%q) = %q, %v; want the Markdown", name, md, err)
		}
	}

	bad := []struct{ name, want string }{
		{"../secret", "not accepted"},
		{"sub/deep", "not accepted"},
		{`..\secret`, "not accepted"},
		{".hidden", "not accepted"},
		{"", "not accepted"},
		{"missing", "the bundle has: refund, states"},
	}
	for _, b := range bad {
		_, err := ReadSkill(fsys, b.name)
		if err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("ReadSkill(%q): got %v, want an error containing %q", b.name, err, b.want)
		}
	}
}

func TestSkillsNone(t *testing.T) {
	fsys := os.DirFS(writeTree(t, map[string]string{"pacto.yaml": "x"}))
	got, err := ListSkills(fsys)
	if err != nil || got == nil || len(got) != 0 {
		t.Fatalf("ListSkills without a skills folder = %#v, %v; want an empty, non-nil list", got, err)
	}
	if _, err := ReadSkill(fsys, "any"); err == nil || !strings.Contains(err.Error(), "no skills") {
		t.Fatalf("ReadSkill without skills: got %v", err)
	}
}

// TestListedSkillsAreReadable: every name ListSkills offers is one ReadSkill
// serves. A dot file ("skills/.draft.md") or a file named just ".md" is not a
// skill ReadSkill accepts, so it must not be listed either.
func TestListedSkillsAreReadable(t *testing.T) {
	fsys := fstest.MapFS{
		"skills/refund.md": {Data: []byte("# Refund\n")},
		"skills/.draft.md": {Data: []byte("# hidden\n")},
		"skills/.md":       {Data: []byte("no name\n")},
		"skills/a b.md":    {Data: []byte("# spaced\n")},
	}
	names, err := ListSkills(fsys)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"a b", "refund"}, names); diff != "" {
		t.Errorf("ListSkills (-want +got):\n%s", diff)
	}
	for _, n := range names {
		if _, err := ReadSkill(fsys, n); err != nil {
			t.Errorf("ListSkills offered %q, but ReadSkill refuses it: %v", n, err)
		}
	}
}

// TestReadSkillRefusesAFIFOWithoutOpeningIt: a skill that is a FIFO in a
// local bundle directory, read through an os.Root as pacto_skill reads it,
// is refused; opening it would block until a writer came.
func TestReadSkillRefusesAFIFOWithoutOpeningIt(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, SkillsDir), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := mkfifo(filepath.Join(dir, SkillsDir, "pipe.md")); err != nil {
		t.Skip(err)
	}
	r, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := ReadSkill(r.FS(), "pipe"); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("ReadSkill(FIFO) = %v; want it refused as not a regular file", err)
	}
}
