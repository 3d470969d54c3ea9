package atomicfile

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWriteReplaces(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "tools.lock")
	if err := os.WriteFile(path, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Write(path, []byte("new"), 0o644); err != nil {
		t.Fatalf("Write: %v", err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != "new" {
		t.Errorf("content = %q, want %q", got, "new")
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o644 {
		t.Errorf("mode = %v, want 0644", st.Mode().Perm())
	}
	assertOnly(t, dir, "tools.lock")
}

// TestWriteFailureLeavesNothing: each step that can fail after the
// temporary file exists, made to fail for real, leaves the target as it
// was and no temporary file.
func TestWriteFailureLeavesNothing(t *testing.T) {
	t.Run("rename over a directory", func(t *testing.T) {
		dir := t.TempDir()
		target := filepath.Join(dir, "out")
		if err := os.MkdirAll(filepath.Join(target, "kept"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := Write(target, []byte("layer"), 0o644); err == nil {
			t.Fatal("Write over a non-empty directory succeeded")
		}
		if st, err := os.Stat(filepath.Join(target, "kept")); err != nil || !st.IsDir() {
			t.Errorf("the directory's content changed: %v", err)
		}
		assertOnly(t, dir, "out")
	})
	t.Run("directory missing", func(t *testing.T) {
		dir := t.TempDir()
		if err := Write(filepath.Join(dir, "absent", "out"), []byte("x"), 0o644); err == nil {
			t.Fatal("Write into a missing directory succeeded")
		}
		assertOnly(t, dir)
	})
}

// assertOnly fails unless dir holds exactly the names given.
func assertOnly(t *testing.T, dir string, names ...string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	if len(got) != len(names) {
		t.Fatalf("%s holds %q, want %q", dir, got, names)
	}
	for i := range got {
		if got[i] != names[i] {
			t.Fatalf("%s holds %q, want %q", dir, got, names)
		}
	}
}
