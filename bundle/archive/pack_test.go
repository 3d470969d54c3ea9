package archive_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kubepact/kubepact/bundle/archive"
)

var bundleFiles = map[string]string{
	"pacto.yaml":                  "pactoVersion: \"2.0\"\nservice:\n  name: orders\n  version: 1.0.0\n",
	"interfaces/openapi.yaml":     "openapi: 3.1.0\ninfo: {title: orders, version: 1.0.0}\npaths: {}\n",
	"configuration/schema.json":   `{"type":"object"}`,
	"skills/operations.md":        "# Operating orders\n",
	"docs/a/deeply/nested/doc.md": strings.Repeat("long line of documentation\n", 200),
}

func mapFS(files map[string]string) fstest.MapFS {
	m := fstest.MapFS{}
	for name, body := range files {
		m[name] = &fstest.MapFile{Data: []byte(body), Mode: 0o600, ModTime: time.Now()}
	}
	return m
}

func keys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

func pack(t *testing.T, fsys fs.FS, files []string) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := archive.Pack(&buf, fsys, files); err != nil {
		t.Fatalf("Pack() error = %v", err)
	}
	return buf.Bytes()
}

func TestPackExtractRoundTrip(t *testing.T) {
	packed := pack(t, mapFS(bundleFiles), keys(bundleFiles))

	fsys, err := archive.Extract(bytes.NewReader(packed), archive.Limits{})
	if err != nil {
		t.Fatalf("Extract() error = %v", err)
	}
	got := map[string]string{}
	for _, p := range fsys.Paths() {
		data, err := fs.ReadFile(fsys, p)
		if err != nil {
			t.Fatal(err)
		}
		got[p] = string(data)
	}
	if diff := cmp.Diff(got, bundleFiles); diff != "" {
		t.Errorf("round trip (-got +want):\n%s", diff)
	}
	if err := fstest.TestFS(fsys, keys(bundleFiles)...); err != nil {
		t.Errorf("fstest.TestFS: %v", err)
	}
	var walked []string
	if err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		walked = append(walked, p)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	want := []string{".", "configuration", "configuration/schema.json", "docs", "docs/a", "docs/a/deeply",
		"docs/a/deeply/nested", "docs/a/deeply/nested/doc.md", "interfaces", "interfaces/openapi.yaml",
		"pacto.yaml", "skills", "skills/operations.md"}
	if diff := cmp.Diff(walked, want); diff != "" {
		t.Errorf("WalkDir order (-got +want):\n%s", diff)
	}
}

func TestPackIsReproducible(t *testing.T) {
	dir := t.TempDir()
	for name, body := range bundleFiles {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	files := keys(bundleFiles)
	first := pack(t, os.DirFS(dir), files)

	if again := pack(t, os.DirFS(dir), files); !bytes.Equal(again, first) {
		t.Error("packing the same directory twice gave different bytes")
	}

	// Touch every file and directory, change permissions, reverse the list.
	later := time.Date(2031, 7, 1, 12, 0, 0, 0, time.UTC)
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		mode := os.FileMode(0o600)
		if d.IsDir() {
			mode = 0o700
		}
		if err := os.Chmod(p, mode); err != nil {
			return err
		}
		return os.Chtimes(p, later, later)
	})
	if err != nil {
		t.Fatal(err)
	}
	reversed := make([]string, len(files))
	for i, f := range files {
		reversed[len(files)-1-i] = f
	}
	if again := pack(t, os.DirFS(dir), reversed); !bytes.Equal(again, first) {
		t.Error("packing after touching mtimes and permissions gave different bytes")
	}
	if fromMap := pack(t, mapFS(bundleFiles), nil); !bytes.Equal(fromMap, first) {
		t.Error("packing the same files from another fs.FS (nil list: walk it) gave different bytes")
	}
}

// TestPackGolden pins the layer bytes of one small bundle. If it fails after a
// Go upgrade (compress/flate or archive/tar output changed), every bundle's
// identity changes with it: decide that deliberately, then update the digest.
func TestPackGolden(t *testing.T) {
	packed := pack(t, mapFS(map[string]string{
		"pacto.yaml":              "pactoVersion: \"2.0\"\n",
		"interfaces/openapi.yaml": "openapi: 3.1.0\n",
	}), nil)
	sum := sha256.Sum256(packed)
	got := "sha256:" + hex.EncodeToString(sum[:])
	const want = "sha256:112720dbd75d930c7445086ab322b2aee8c81d900db4124a22856d78d8a15d1d"
	if got != want {
		t.Errorf("packed layer digest = %s; want %s", got, want)
	}
}

func TestPackRejects(t *testing.T) {
	fsys := mapFS(map[string]string{"pacto.yaml": "x", "docs/a.md": "y"})
	fsys["link"] = &fstest.MapFile{Mode: fs.ModeSymlink, Data: []byte("pacto.yaml")}
	fsys["linkdir"] = &fstest.MapFile{Mode: fs.ModeSymlink, Data: []byte("docs")}
	tests := []struct {
		name  string
		files []string
		want  string
	}{
		{name: "traversal", files: []string{"../x"}, want: `invalid path "../x"`},
		{name: "absolute", files: []string{"/etc/passwd"}, want: `invalid path "/etc/passwd"`},
		{name: "root", files: []string{"."}, want: `invalid path "."`},
		{name: "duplicate", files: []string{"pacto.yaml", "pacto.yaml"}, want: "duplicate path pacto.yaml"},
		{name: "file and directory", files: []string{"docs/a.md", "docs"}, want: "docs is both a file and a parent directory"},
		{name: "missing", files: []string{"nope.yaml"}, want: "nope.yaml"},
		{name: "directory", files: []string{"docs"}, want: "docs: not a regular file"},
		{name: "symlink", files: []string{"link"}, want: "link: not a regular file"},
		{name: "walk finds symlink", files: nil, want: "link: not a regular file"},
		{name: "symlinked parent directory", files: []string{"linkdir/a.md"}, want: "linkdir: parent directory is not a directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := archive.Pack(&bytes.Buffer{}, fsys, tt.files)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Pack(%q) error = %v; want it to contain %q", tt.files, err, tt.want)
			}
		})
	}
}

func TestPackRefusesSymlinksOnDisk(t *testing.T) {
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret"), []byte("s3cr3t"), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "pacto.yaml"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "secret"), filepath.Join(dir, "secret")); err != nil {
		t.Skipf("symlinks unsupported: %v", err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "docs")); err != nil {
		t.Fatal(err)
	}
	for _, files := range [][]string{{"pacto.yaml", "secret"}, {"docs/secret"}, nil} {
		err := archive.Pack(&bytes.Buffer{}, os.DirFS(dir), files)
		if err == nil {
			t.Errorf("Pack(%q) through a symlink: got nil error", files)
		}
	}
}

// TestPackHeaders checks the raw headers: what Pacto's extractor sees.
func TestPackHeaders(t *testing.T) {
	packed := pack(t, mapFS(map[string]string{"a/b/c.txt": "c", "pacto.yaml": "p"}), nil)
	zr, err := gzip.NewReader(bytes.NewReader(packed))
	if err != nil {
		t.Fatal(err)
	}
	if zr.Name != "" || !zr.ModTime.IsZero() {
		t.Errorf("gzip header name %q, mtime %v; want neither", zr.Name, zr.ModTime)
	}
	tr := tar.NewReader(zr)
	var got []string
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%c %s %o %d uid=%d gid=%d %q %q mtime=%d atime=%v ctime=%v",
			hdr.Typeflag, hdr.Name, hdr.Mode, hdr.Size, hdr.Uid, hdr.Gid, hdr.Uname, hdr.Gname,
			hdr.ModTime.Unix(), hdr.AccessTime.IsZero(), hdr.ChangeTime.IsZero()))
	}
	want := []string{
		`5 a 755 0 uid=0 gid=0 "" "" mtime=0 atime=true ctime=true`,
		`5 a/b 755 0 uid=0 gid=0 "" "" mtime=0 atime=true ctime=true`,
		`0 a/b/c.txt 644 1 uid=0 gid=0 "" "" mtime=0 atime=true ctime=true`,
		`0 pacto.yaml 644 1 uid=0 gid=0 "" "" mtime=0 atime=true ctime=true`,
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("tar headers (-got +want):\n%s", diff)
	}
}
