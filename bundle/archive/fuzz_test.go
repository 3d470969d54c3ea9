package archive_test

import (
	"archive/tar"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"testing/fstest"

	"github.com/kubepact/kubepact/bundle/archive"
)

// fuzzLimits are small so the fuzzer reaches every limit cheaply.
var fuzzLimits = archive.Limits{MaxFileBytes: 64 << 10, MaxTotalBytes: 256 << 10, MaxEntries: 64}

// FuzzExtract feeds arbitrary bytes to Extract. It must never panic, must
// fail only with an *archive.Error of a known kind, and anything it accepts
// must be a well-formed fs.FS within the limits that packs and extracts
// again to the same files. The seed corpus is testdata/fuzz/FuzzExtract
// (regenerate it with KUBEPACT_WRITE_FUZZ_SEEDS=1 go test -run TestWriteFuzzSeeds).
func FuzzExtract(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		fsys, err := archive.Extract(bytes.NewReader(data), fuzzLimits)
		if err != nil {
			var aerr *archive.Error
			if !errors.As(err, &aerr) {
				t.Fatalf("Extract() error type %T (%v); want *archive.Error", err, err)
			}
			if !errors.Is(err, archive.ErrLimit) && !errors.Is(err, archive.ErrUnsafe) && !errors.Is(err, archive.ErrFormat) {
				t.Fatalf("Extract() error %v has no known kind", err)
			}
			return
		}
		paths := fsys.Paths()
		var total int64
		files := map[string][]byte{}
		for _, p := range paths {
			if !fs.ValidPath(p) {
				t.Fatalf("extracted invalid path %q", p)
			}
			b, err := fsys.ReadFile(p)
			if err != nil {
				t.Fatalf("ReadFile(%q) error = %v", p, err)
			}
			if int64(len(b)) > fuzzLimits.MaxFileBytes {
				t.Fatalf("file %q has %d bytes, over the limit", p, len(b))
			}
			total += int64(len(b))
			files[p] = b
		}
		if total > fuzzLimits.MaxTotalBytes {
			t.Fatalf("extracted %d bytes, over the total limit", total)
		}
		if err := fstest.TestFS(fsys, paths...); err != nil {
			t.Fatalf("fstest.TestFS: %v", err)
		}
		var buf bytes.Buffer
		if err := archive.Pack(&buf, fsys, paths); err != nil {
			t.Fatalf("Pack(extracted) error = %v", err)
		}
		again, err := archive.Extract(&buf, archive.Limits{})
		if err != nil {
			t.Fatalf("Extract(Pack(extracted)) error = %v", err)
		}
		if got := again.Paths(); fmt.Sprint(got) != fmt.Sprint(paths) {
			t.Fatalf("re-extracted paths %q; want %q", got, paths)
		}
		for _, p := range paths {
			if b, _ := again.ReadFile(p); !bytes.Equal(b, files[p]) {
				t.Fatalf("re-extracted %q differs", p)
			}
		}
	})
}

// TestWriteFuzzSeeds writes the committed seed corpus; it only runs when
// asked, so the corpus changes only on purpose.
func TestWriteFuzzSeeds(t *testing.T) {
	if os.Getenv("KUBEPACT_WRITE_FUZZ_SEEDS") == "" {
		t.Skip("set KUBEPACT_WRITE_FUZZ_SEEDS=1 to rewrite testdata/fuzz/FuzzExtract")
	}
	var packed bytes.Buffer
	if err := archive.Pack(&packed, mapFS(bundleFiles), nil); err != nil {
		t.Fatal(err)
	}
	seeds := map[string][]byte{
		"valid-packed-bundle":  packed.Bytes(),
		"valid-dot-prefixes":   tgz(t, dir("./"), dir("./skills/"), file("./skills/a.md", "# a"), file("./pacto.yaml", "p")),
		"valid-empty-archive":  tgz(t),
		"valid-implicit-dirs":  tgz(t, file("a/b/c.txt", "c"), dir("a/")),
		"traversal":            tgz(t, file("../evil", "x")),
		"absolute":             tgz(t, file("/etc/passwd", "x")),
		"symlink":              tgz(t, entry{hdr: tar.Header{Typeflag: tar.TypeSymlink, Name: "l", Linkname: "/etc/passwd"}}),
		"duplicate":            tgz(t, file("a", "1"), file("a", "2")),
		"file-as-parent":       tgz(t, file("a", "1"), file("a/b", "2")),
		"sparse":               gzipBytes(t, paxSparse(t)),
		"too-many-entries":     tgz(t, manyFiles(65)...),
		"truncated":            packed.Bytes()[:packed.Len()/2],
		"not-gzip":             tarBytes(t, file("pacto.yaml", "x")),
		"non-utf8-name":        tgz(t, file("caf\xe9", "x")),
		"oversize-file-header": tgz(t, file("big", string(make([]byte, 64<<10+1)))),
	}
	dir := filepath.Join("testdata", "fuzz", "FuzzExtract")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, data := range seeds {
		content := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", data)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func manyFiles(n int) []entry {
	out := make([]entry, 0, n)
	for i := range n {
		out = append(out, file(fmt.Sprintf("f%03d", i), ""))
	}
	return out
}
