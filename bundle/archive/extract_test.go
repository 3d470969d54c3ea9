package archive_test

import (
	"archive/tar"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"runtime"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kubepact/kubepact/bundle/archive"
)

func TestExtractRejectsHostileArchives(t *testing.T) {
	small := archive.Limits{MaxFileBytes: 1 << 10, MaxTotalBytes: 4 << 10, MaxEntries: 8}

	// A tar header declaring a 1 GiB file, then the gibibyte of zeros and
	// the end-of-archive blocks: about 1 MiB once compressed.
	var bombHeader bytes.Buffer
	tw := tar.NewWriter(&bombHeader)
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: "openapi.json", Size: 1 << 30, Mode: 0o644}); err != nil {
		t.Fatal(err)
	}
	fileBomb := zeroBomb(t, bombHeader.Bytes(), 1024, make([]byte, 1024))
	// A small valid archive followed by a gibibyte of zeros after its
	// end-of-archive marker: only counting what is decompressed stops it.
	trailingBomb := zeroBomb(t, tarBytes(t, file("pacto.yaml", "pactoVersion: \"2.0\"\n")), 1024, nil)
	// Global PAX headers are metadata the extractor skips, 1 MiB each.
	var globals []entry
	for range 3 {
		globals = append(globals, entry{hdr: tar.Header{Typeflag: tar.TypeXGlobalHeader, Name: "g",
			PAXRecords: map[string]string{"comment": strings.Repeat("x", 1<<20-64)}}})
	}
	globalBomb := tgz(t, globals...)

	manyEntries := make([]entry, 0, archive.DefaultLimits.MaxEntries+1)
	for i := range archive.DefaultLimits.MaxEntries + 1 {
		manyEntries = append(manyEntries, file(fmt.Sprintf("f%05d", i), ""))
	}
	valid := tgz(t, file("pacto.yaml", "pactoVersion: \"2.0\"\n"))

	tests := []struct {
		name  string
		input []byte
		lim   archive.Limits
		kind  error
		want  string // substring of the error message
	}{
		{name: "traversal", input: tgz(t, file("../evil", "x")), kind: archive.ErrUnsafe,
			want: `entry "../evil": path traversal ("..")`},
		{name: "traversal inside path", input: tgz(t, file("a/../../evil", "x")), kind: archive.ErrUnsafe,
			want: `entry "a/../../evil": path traversal`},
		{name: "absolute path", input: tgz(t, file("/etc/passwd", "x")), kind: archive.ErrUnsafe,
			want: `entry "/etc/passwd": absolute path`},
		{name: "unclean path", input: tgz(t, file("a//b", "x")), kind: archive.ErrUnsafe,
			want: `entry "a//b": unclean path`},
		{name: "backslash", input: tgz(t, file(`..\evil`, "x")), kind: archive.ErrUnsafe,
			want: "backslash in name"},
		{name: "control character", input: tgz(t, file("a\nb", "x")), kind: archive.ErrUnsafe,
			want: "control character U+000A"},
		{name: "non-UTF-8 name", input: tgz(t, file("caf\xe9", "x")), kind: archive.ErrUnsafe,
			want: "name is not valid UTF-8"},
		{name: "symlink", input: tgz(t, entry{hdr: tar.Header{Typeflag: tar.TypeSymlink, Name: "link", Linkname: "/etc/passwd"}}),
			kind: archive.ErrUnsafe, want: `entry "link": symlink entries are not allowed`},
		{name: "hard link", input: tgz(t, file("a", "x"), entry{hdr: tar.Header{Typeflag: tar.TypeLink, Name: "b", Linkname: "a"}}),
			kind: archive.ErrUnsafe, want: `entry "b": hard link entries are not allowed`},
		{name: "character device", input: tgz(t, entry{hdr: tar.Header{Typeflag: tar.TypeChar, Name: "null", Devmajor: 1, Devminor: 3}}),
			kind: archive.ErrUnsafe, want: `entry "null": character device entries are not allowed`},
		{name: "block device", input: tgz(t, entry{hdr: tar.Header{Typeflag: tar.TypeBlock, Name: "sda", Devmajor: 8}}),
			kind: archive.ErrUnsafe, want: "block device entries are not allowed"},
		{name: "fifo", input: tgz(t, entry{hdr: tar.Header{Typeflag: tar.TypeFifo, Name: "pipe"}}),
			kind: archive.ErrUnsafe, want: `entry "pipe": FIFO entries are not allowed`},
		{name: "duplicate file", input: tgz(t, file("pacto.yaml", "a"), file("pacto.yaml", "b")),
			kind: archive.ErrUnsafe, want: `entry "pacto.yaml": duplicate entry`},
		{name: "duplicate via ./ prefix", input: tgz(t, file("pacto.yaml", "a"), file("./pacto.yaml", "b")),
			kind: archive.ErrUnsafe, want: `entry "./pacto.yaml": duplicate entry`},
		{name: "file used as directory", input: tgz(t, file("docs", "a"), file("docs/x.md", "b")),
			kind: archive.ErrUnsafe, want: `entry "docs/x.md": parent "docs" is a file`},
		{name: "directory over file", input: tgz(t, file("docs", "a"), dir("docs/")),
			kind: archive.ErrUnsafe, want: `entry "docs/": directory has the same path as a file`},
		{name: "oversize file", lim: small, input: tgz(t, file("big.json", strings.Repeat("x", 1<<10+1))),
			kind: archive.ErrLimit, want: `entry "big.json": size 1025 bytes exceeds the per-file limit of 1024 bytes`},
		{name: "total over limit", lim: small, input: tgz(t,
			file("a", strings.Repeat("x", 1000)), file("b", strings.Repeat("x", 1000)),
			file("c", strings.Repeat("x", 1000)), file("d", strings.Repeat("x", 1000)), file("e", strings.Repeat("x", 1000))),
			kind: archive.ErrLimit, want: `entry "e": contents of at least 5000 bytes exceed the total limit of 4096 bytes`},
		{name: "too many entries", lim: small, input: tgz(t,
			dir("d/"), file("d/1", ""), file("d/2", ""), file("d/3", ""), file("d/4", ""), file("d/5", ""),
			file("d/6", ""), file("d/7", ""), file("d/8", "")),
			kind: archive.ErrLimit, want: `entry "d/8": more than 8 entries (entry limit)`},
		{name: "too many entries at default limit", input: tgz(t, manyEntries...),
			kind: archive.ErrLimit, want: "more than 10000 entries"},
		{name: "decompression bomb: 1 GiB file", input: fileBomb,
			kind: archive.ErrLimit, want: `entry "openapi.json": size 1073741824 bytes exceeds the per-file limit of 10485760 bytes`},
		{name: "decompression bomb: zeros after the archive", input: trailingBomb,
			kind: archive.ErrLimit, want: "decompressed stream exceeds"},
		{name: "decompression bomb: global headers", input: globalBomb, lim: small,
			kind: archive.ErrLimit, want: "decompressed stream exceeds"},
		{name: "sparse file (PAX)", input: gzipBytes(t, paxSparse(t)),
			kind: archive.ErrUnsafe, want: `entry "s": sparse files are not allowed`},
		{name: "truncated gzip", input: valid[:len(valid)-12], kind: archive.ErrFormat, want: "truncated archive"},
		{name: "corrupt gzip checksum", input: flipByte(valid, len(valid)-6), kind: archive.ErrFormat, want: "corrupt archive"},
		{name: "not gzip", input: tarBytes(t, file("pacto.yaml", "x")), kind: archive.ErrFormat, want: "not a gzip stream"},
		{name: "empty input", input: nil, kind: archive.ErrFormat, want: "empty input"},
		{name: "gzip of garbage", input: gzipBytes(t, []byte("this is not a tar archive at all")), kind: archive.ErrFormat,
			want: "archive"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			var before runtime.MemStats
			runtime.ReadMemStats(&before)

			got, err := archive.Extract(bytes.NewReader(tt.input), tt.lim)

			var after runtime.MemStats
			runtime.ReadMemStats(&after)
			if err == nil {
				t.Fatalf("Extract() = %v, nil; want an error containing %q", got.Paths(), tt.want)
			}
			if !errors.Is(err, tt.kind) {
				t.Errorf("Extract() error = %v; want kind %v", err, tt.kind)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Extract() error = %q; want it to contain %q", err, tt.want)
			}
			var aerr *archive.Error
			if !errors.As(err, &aerr) {
				t.Errorf("Extract() error type = %T; want *archive.Error", err)
			}
			// Rejections must be quick and must not allocate what the input
			// claims or expands to. (Generous bounds: -race is slow.)
			if d := time.Since(start); d > 20*time.Second {
				t.Errorf("Extract() took %v to reject", d)
			}
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<20 {
				t.Errorf("Extract() allocated %d MiB to reject", alloc>>20)
			}
		})
	}
}

func flipByte(b []byte, i int) []byte {
	out := bytes.Clone(b)
	out[i] ^= 0xff
	return out
}

func TestExtractAccepts(t *testing.T) {
	tests := []struct {
		name    string
		input   []byte
		want    map[string]string // path -> content
		wantDir []string
	}{
		{
			name:    "implicit parent directories",
			input:   tgz(t, file("interfaces/openapi.yaml", "openapi: 3.1.0"), file("pacto.yaml", "p")),
			want:    map[string]string{"interfaces/openapi.yaml": "openapi: 3.1.0", "pacto.yaml": "p"},
			wantDir: []string{"interfaces"},
		},
		{
			name: "tar -C dir . layout with ./ prefixes",
			input: tgz(t, dir("./"), dir("./skills/"), file("./skills/ops.md", "# ops"),
				file("./pacto.yaml", "p")),
			want:    map[string]string{"skills/ops.md": "# ops", "pacto.yaml": "p"},
			wantDir: []string{"skills"},
		},
		{
			name:    "explicit directory after implied one",
			input:   tgz(t, file("a/b/c.txt", "c"), dir("a/"), dir("a/b/")),
			want:    map[string]string{"a/b/c.txt": "c"},
			wantDir: []string{"a", "a/b"},
		},
		{
			name:    "empty directory and empty file",
			input:   tgz(t, dir("docs/"), file("empty", "")),
			want:    map[string]string{"empty": ""},
			wantDir: []string{"docs"},
		},
		{
			name: "global header skipped, names that merely contain dots",
			input: tgz(t, entry{hdr: tar.Header{Typeflag: tar.TypeXGlobalHeader, Name: "pax_global_header",
				PAXRecords: map[string]string{"comment": "abc"}}}, file("my..file.yaml", "x"), file(".pactoignore", "y")),
			want: map[string]string{"my..file.yaml": "x", ".pactoignore": "y"},
		},
		{
			name:  "unicode names",
			input: tgz(t, file("docs/café.md", "é")),
			want:  map[string]string{"docs/café.md": "é"}, wantDir: []string{"docs"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fsys, err := archive.Extract(bytes.NewReader(tt.input), archive.Limits{})
			if err != nil {
				t.Fatalf("Extract() error = %v", err)
			}
			got := map[string]string{}
			for _, p := range fsys.Paths() {
				data, err := fsys.ReadFile(p)
				if err != nil {
					t.Fatalf("ReadFile(%q) error = %v", p, err)
				}
				got[p] = string(data)
			}
			if diff := cmp.Diff(got, tt.want); diff != "" {
				t.Errorf("extracted files (-got +want):\n%s", diff)
			}
			for _, d := range tt.wantDir {
				info, err := fsys.Stat(d)
				if err != nil || !info.IsDir() {
					t.Errorf("Stat(%q) = %v, %v; want a directory", d, info, err)
				}
			}
			if err := fstest.TestFS(fsys, fsys.Paths()...); err != nil {
				t.Errorf("fstest.TestFS: %v", err)
			}
		})
	}
}

func TestFSErrors(t *testing.T) {
	fsys, err := archive.Extract(bytes.NewReader(tgz(t, file("a/b.txt", "b"))), archive.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fsys.ReadFile("a"); err == nil {
		t.Error(`ReadFile("a") on a directory: got nil error`)
	}
	if _, err := fsys.ReadDir("a/b.txt"); err == nil {
		t.Error(`ReadDir("a/b.txt") on a file: got nil error`)
	}
	for _, name := range []string{"missing", "../a", "/a", "a/"} {
		if _, err := fsys.Open(name); err == nil {
			t.Errorf("Open(%q): got nil error", name)
		}
	}
	if _, err := fsys.Open("missing"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf(`Open("missing") error = %v; want fs.ErrNotExist`, err)
	}
	// ReadFile hands out a copy.
	data, _ := fsys.ReadFile("a/b.txt")
	data[0] = 'X'
	again, _ := fsys.ReadFile("a/b.txt")
	if string(again) != "b" {
		t.Errorf("ReadFile after modifying a returned slice = %q; want %q", again, "b")
	}
}

// paxSparse builds a GNU PAX 0.1 sparse file by hand: archive/tar's writer
// refuses to write one.
func paxSparse(t *testing.T) []byte {
	t.Helper()
	records := paxRecord("GNU.sparse.numblocks", "1") + paxRecord("GNU.sparse.map", "0,1") +
		paxRecord("GNU.sparse.size", "1048576")
	raw := tarBytes(t, file("PaxHeaders.0/s", records), file("s", "x"))
	setTypeflag(raw[:512], tar.TypeXHeader)
	return raw
}

func paxRecord(k, v string) string {
	rec := " " + k + "=" + v + "\n"
	n := len(rec)
	for len(fmt.Sprint(n))+len(rec) != n {
		n = len(fmt.Sprint(n)) + len(rec)
	}
	return fmt.Sprint(n) + rec
}

// setTypeflag rewrites a raw ustar header block's type flag and checksum.
func setTypeflag(block []byte, flag byte) {
	block[156] = flag
	copy(block[148:156], "        ")
	var sum int
	for _, c := range block[:512] {
		sum += int(c)
	}
	copy(block[148:156], fmt.Sprintf("%06o\x00 ", sum))
}

// ExtractTar holds a plain tar to Extract's rules and limits: what
// PackTar wrote reads back as Extract reads the layer, a traversal is
// refused, and so is a stream past the limits whatever its headers say.
func TestExtractTarRules(t *testing.T) {
	fsys := fstest.MapFS{"pacto.yaml": {Data: []byte("a: 1\n")}, "docs/x.md": {Data: []byte("# x\n")}}
	var tarball, layer bytes.Buffer
	if err := archive.PackTar(&tarball, fsys, nil); err != nil {
		t.Fatal(err)
	}
	if err := archive.Pack(&layer, fsys, nil); err != nil {
		t.Fatal(err)
	}
	var compressed bytes.Buffer
	if err := archive.Compress(&compressed, tarball.Bytes()); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(compressed.Bytes(), layer.Bytes()) {
		t.Error("Compress(PackTar) differs from Pack")
	}
	got, err := archive.ExtractTar(bytes.NewReader(tarball.Bytes()), archive.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if p := got.Paths(); len(p) != 2 || p[0] != "docs/x.md" || p[1] != "pacto.yaml" {
		t.Errorf("paths %v", p)
	}
	if _, err := archive.ExtractTar(bytes.NewReader(tarBytes(t, file("../escape", "x"))), archive.Limits{}); !errors.Is(err, archive.ErrUnsafe) {
		t.Errorf("traversal: %v, want ErrUnsafe", err)
	}
	big := tarBytes(t, file("a", strings.Repeat("x", 4096)), file("b", strings.Repeat("y", 4096)))
	if _, err := archive.ExtractTar(bytes.NewReader(big), archive.Limits{MaxTotalBytes: 5000}); !errors.Is(err, archive.ErrLimit) {
		t.Errorf("over the total: %v, want ErrLimit", err)
	}
}
