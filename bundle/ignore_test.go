package bundle

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// writeTree creates files (slash path → content) under a new temp dir.
func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for p, content := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestFiles(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		want  []string
	}{{
		name: "default ignores",
		files: map[string]string{
			"pacto.yaml": "x", ".git/HEAD": "ref", ".DS_Store": "junk", "docs/.DS_Store": "junk",
			".pactoignore": "", "docs/a.md": "a",
		},
		want: []string{"docs/a.md", "pacto.yaml"},
	}, {
		name: "patterns, directories and negation",
		files: map[string]string{
			"pacto.yaml": "x", ".pactoignore": "# editor files\n*.swp\nbuild/\n!keep.swp\n\n",
			"a.swp": "", "keep.swp": "", "build/out.bin": "", "src/build/x": "", "interfaces/api.yaml": "",
		},
		want: []string{"interfaces/api.yaml", "keep.swp", "pacto.yaml"},
	}, {
		name:  "pacto.yaml cannot be ignored",
		files: map[string]string{"pacto.yaml": "x", ".pactoignore": "*.yaml\n", "b.yaml": ""},
		want:  []string{"pacto.yaml"},
	}, {
		name:  "pacto.lock ships unless ignored",
		files: map[string]string{"pacto.yaml": "x", "pacto.lock": "lock"},
		want:  []string{"pacto.lock", "pacto.yaml"},
	}, {
		name:  "default ignore re-included",
		files: map[string]string{"pacto.yaml": "x", ".pactoignore": "!.DS_Store\n", ".DS_Store": "kept"},
		want:  []string{".DS_Store", "pacto.yaml"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeTree(t, tt.files)
			got, err := Files(os.DirFS(dir))
			if err != nil {
				t.Fatalf("Files: %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Files (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFilesRefusesSymlinks(t *testing.T) {
	dir := writeTree(t, map[string]string{"pacto.yaml": "x"})
	if err := os.Symlink("/etc/passwd", filepath.Join(dir, "leak")); err != nil {
		t.Skipf("symlinks unavailable: %v", err)
	}
	_, err := Files(os.DirFS(dir))
	if err == nil || !strings.Contains(err.Error(), "leak is a symlink") {
		t.Fatalf("Files with a symlink: got %v, want an error naming the symlink", err)
	}

	// An ignored symlink is fine: it is not part of the bundle.
	if err := os.WriteFile(filepath.Join(dir, IgnoreFile), []byte("leak\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Files(os.DirFS(dir)); err != nil {
		t.Fatalf("Files with an ignored symlink: %v", err)
	}
}

func TestFilesRefusesHugeIgnoreFile(t *testing.T) {
	dir := writeTree(t, map[string]string{"pacto.yaml": "x", IgnoreFile: strings.Repeat("#\n", maxIgnoreFileBytes)})
	_, err := Files(os.DirFS(dir))
	if err == nil || !strings.Contains(err.Error(), "at most") {
		t.Fatalf("Files with a huge .pactoignore: got %v, want a size error", err)
	}
}

// TestFilesRefusesIrregularIgnoreFile: .pactoignore is bundle content, so it
// is read only when it is a regular file in the bundle. A link to a device
// such as /dev/zero reports size 0 and never ends, and a FIFO blocks on open:
// both must be refused at once, not read until memory runs out or forever.
func TestFilesRefusesIrregularIgnoreFile(t *testing.T) {
	tests := []struct {
		name string
		make func(t *testing.T, p string)
		want string
	}{{
		name: "symlink to /dev/zero",
		make: func(t *testing.T, p string) {
			if err := os.Symlink("/dev/zero", p); err != nil {
				t.Skipf("symlinks unavailable: %v", err)
			}
		},
		want: ".pactoignore is a symlink",
	}, {
		name: "symlink to a file outside the bundle",
		make: func(t *testing.T, p string) {
			outside := filepath.Join(t.TempDir(), "patterns")
			if err := os.WriteFile(outside, []byte("interfaces/\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(outside, p); err != nil {
				t.Skipf("symlinks unavailable: %v", err)
			}
		},
		want: ".pactoignore is a symlink",
	}, {
		name: "FIFO",
		make: func(t *testing.T, p string) {
			if err := mkfifo(p); err != nil {
				t.Skipf("FIFOs unavailable: %v", err)
			}
		},
		want: ".pactoignore is a named pipe",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeTree(t, map[string]string{"pacto.yaml": "x", "interfaces/api.yaml": "y"})
			tt.make(t, filepath.Join(dir, IgnoreFile))
			done := make(chan error, 1)
			go func() {
				_, err := Files(os.DirFS(dir))
				done <- err
			}()
			select {
			case err := <-done:
				if err == nil || !strings.Contains(err.Error(), tt.want) {
					t.Fatalf("Files: got %v, want an error containing %q", err, tt.want)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("Files did not return within 5s: it is reading a .pactoignore that is not a regular file")
			}
		})
	}
}
