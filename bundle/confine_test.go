package bundle

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestConfine(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "ws")
	outside := filepath.Join(base, "outside")
	for _, d := range []string{filepath.Join(root, "a", "b"), outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	links := map[string]string{
		"out":    outside,
		"in":     filepath.Join(root, "a"),
		"loop":   "loop",
		"ping":   "pong",
		"pong":   "ping",
		"broken": filepath.Join(outside, "missing"),
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
			t.Fatal(err)
		}
	}
	// A root named through a link: absolute paths under either name count.
	alias := filepath.Join(base, "alias")
	if err := os.Symlink(root, alias); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		root, p, want string
		err           error
	}{
		{root, "", ".", nil},
		{root, "a/b", "a/b", nil},
		{root, "a/new/deeper", "a/new/deeper", nil},
		{root, filepath.Join(root, "a"), "a", nil},
		{alias, filepath.Join(root, "a"), "a", nil},
		{alias, filepath.Join(alias, "a", "b"), "a/b", nil},
		{root, "in/b", "in/b", nil},
		{root, "..", "", ErrOutsideRoot},
		{root, "a/../../outside", "", ErrOutsideRoot},
		{root, outside, "", ErrOutsideRoot},
		{root, "out", "", ErrOutsideRoot},
		{root, "out/new", "", ErrOutsideRoot},
		{root, "broken", "", ErrOutsideRoot},
		{root, "loop", "", ErrLinkLoop},
		{root, "loop/x", "", ErrLinkLoop},
		{root, "ping/x/y", "", ErrLinkLoop},
	} {
		got, err := Confine(tt.root, tt.p)
		if tt.err != nil {
			if !errors.Is(err, tt.err) {
				t.Errorf("Confine(%s, %q) = %q, %v; want %v", tt.root, tt.p, got, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("Confine(%s, %q) = %q, %v; want %q", tt.root, tt.p, got, err, tt.want)
		}
	}
	if _, err := Confine(root, "a\x00b"); err == nil || !strings.Contains(err.Error(), "NUL") {
		t.Errorf("Confine with a NUL byte: %v; want an error naming it", err)
	}
}

// TestLoadDirInRefusesLinksOut: the directory itself, or a parent on the way
// to it, being a link to outside the root is refused by the handle even
// when the path check is skipped (as a swap after the check would).
func TestLoadDirInRefusesLinksOut(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "ws")
	outside := filepath.Join(base, "outside")
	writeBundle := func(dir, name string) {
		t.Helper()
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		y := "pactoVersion: \"2.0\"\nservice:\n  name: " + name + "\n  version: 1.0.0\n"
		if err := os.WriteFile(filepath.Join(dir, "pacto.yaml"), []byte(y), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeBundle(filepath.Join(root, "inside"), "inside")
	writeBundle(outside, "outside")
	if err := os.Symlink(outside, filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	b, err := LoadDirIn(root, "inside", nil)
	if err != nil || b.Contract == nil || b.Contract.Service.Name != "inside" {
		t.Fatalf("LoadDirIn(inside) = %v, %v", b, err)
	}
	if _, err := LoadDirIn(root, "link", nil); !errors.Is(err, ErrOutsideRoot) {
		t.Errorf("LoadDirIn(link) error = %v; want ErrOutsideRoot", err)
	}
	// The handle alone, as after a swap that happened past the check.
	if r, err := OpenDirIn(root, "link"); err == nil {
		r.Close()
		t.Error("OpenDirIn(link) opened a directory outside the root")
	}
}

// TestRootError: errors from os.Root itself are told apart as Confine tells
// them, so a caller answers a loop or an escape met at the moment of use
// with the same message as one met by the check.
func TestRootError(t *testing.T) {
	root := t.TempDir()
	if err := os.Symlink("loop", filepath.Join(root, "loop")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(t.TempDir(), filepath.Join(root, "out")); err != nil {
		t.Fatal(err)
	}
	r, err := os.OpenRoot(root)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	_, err = r.ReadFile("loop")
	if !errors.Is(RootError(err), ErrLinkLoop) {
		t.Errorf("loop: RootError(%v) does not wrap ErrLinkLoop", err)
	}
	_, err = r.ReadFile("out/x")
	if !errors.Is(RootError(err), ErrOutsideRoot) {
		t.Errorf("escape: RootError(%v) does not wrap ErrOutsideRoot", err)
	}
	_, err = r.ReadFile("missing")
	if got := RootError(err); errors.Is(got, ErrLinkLoop) || errors.Is(got, ErrOutsideRoot) {
		t.Errorf("not found: RootError changed %v into %v", err, got)
	}
}

// TestRootFSOpensAFIFOWithoutBlocking: a FIFO that appears where the loader
// saw a regular file opens at once through the loader's file system and
// shows its type, so Pack refuses it instead of waiting for a writer.
func TestRootFSOpensAFIFOWithoutBlocking(t *testing.T) {
	dir := t.TempDir()
	if err := mkfifo(filepath.Join(dir, "spec.yaml")); err != nil {
		t.Skip(err)
	}
	r, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	f, err := rootFS{r}.Open("spec.yaml")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || st.Mode().IsRegular() {
		t.Errorf("FIFO opened through rootFS: %v, %v; want its non-regular mode", st, err)
	}
	if _, err := (rootFS{r}).Open("../x"); err == nil {
		t.Error("rootFS opened a path that is not a valid fs path")
	}
}
