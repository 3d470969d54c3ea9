package archive

import (
	"archive/tar"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"
	"sync"
	"time"
)

// CompressionLevel is the gzip level Pack always uses. It is part of the
// layer's byte format: changing it changes every bundle's identity.
const CompressionLevel = gzip.DefaultCompression

// gzipWriters keeps Pack's gzip writers between calls: a writer's deflate
// state is about 1 MB, and a fleet loading thousands of small bundles packs
// each one for its identity. Reset keeps the level, so the bytes are those
// of a new writer.
var gzipWriters sync.Pool

// copyBuffers keeps packFile's copy buffers between files: io.Copy made a
// new 32 KiB buffer for every file (os.File's WriteTo falls back to it when
// the writer is not a file), a tenth of what a fleet's start allocated.
var copyBuffers = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// readerOnly hides a file's WriteTo, so io.CopyBuffer uses the buffer it
// is given.
type readerOnly struct{ io.Reader }

// epoch is the modification time stamped on every entry Pack writes.
var epoch = time.Unix(0, 0).UTC()

// Pack writes a reproducible gzip'd tar of files, read from fsys, to w.
//
// files are slash-separated paths as fs.ValidPath accepts them, each naming a
// regular file; their order does not matter. A nil files means every regular
// file in fsys (any other kind of entry is then an error, not silently
// skipped). Every parent directory of a file is written as a directory entry.
// Pack writes nothing about the files but their paths and contents, so the
// same files always produce the same bytes.
func Pack(w io.Writer, fsys fs.FS, files []string) error {
	gz, err := gzipWriter(w)
	if err != nil {
		return err
	}
	defer gzipWriters.Put(gz)
	if err := PackTar(gz, fsys, files); err != nil {
		return err
	}
	if err := gz.Close(); err != nil {
		return fmt.Errorf("archive: pack: %w", err)
	}
	return nil
}

// Compress writes the layer of a tar PackTar wrote: the gzip stream Pack
// writes for the same files, byte for byte (deflate's output does not
// depend on how its input is split into writes).
func Compress(w io.Writer, tarball []byte) error {
	gz, err := gzipWriter(w)
	if err != nil {
		return err
	}
	defer gzipWriters.Put(gz)
	if _, err := gz.Write(tarball); err != nil {
		return fmt.Errorf("archive: pack: %w", err)
	}
	if err := gz.Close(); err != nil {
		return fmt.Errorf("archive: pack: %w", err)
	}
	return nil
}

// gzipWriter is a pooled gzip writer at CompressionLevel writing to w.
func gzipWriter(w io.Writer) (*gzip.Writer, error) {
	if gz, ok := gzipWriters.Get().(*gzip.Writer); ok {
		gz.Reset(w)
		return gz, nil
	}
	gz, err := gzip.NewWriterLevel(w, CompressionLevel)
	if err != nil {
		return nil, fmt.Errorf("archive: pack: %w", err)
	}
	return gz, nil
}

// PackTar writes the tar Pack compresses: the same entries, in the same
// order, with the same headers. A caller that needs both the layer and
// its contents (its diff ID, the files read back) packs once with it and
// compresses with Compress.
func PackTar(w io.Writer, fsys fs.FS, files []string) error {
	if files == nil {
		var err error
		if files, err = regularFiles(fsys); err != nil {
			return err
		}
	}
	names, err := entryNames(files)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(w)
	for _, e := range names {
		if err := checkNoLink(fsys, e); err != nil {
			return err
		}
		if e.dir {
			// No trailing slash on directory names, as Pacto writes them:
			// Pacto extracts into an fstest.MapFS keyed by entry name, where
			// a "dir/" key makes fs.WalkDir revisit "dir" forever.
			if err := tw.WriteHeader(normalizedHeader(e.name, tar.TypeDir, 0o755, 0)); err != nil {
				return fmt.Errorf("archive: pack %s: %w", e.name, err)
			}
			continue
		}
		if err := packFile(tw, fsys, e.name); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return fmt.Errorf("archive: pack: %w", err)
	}
	return nil
}

type entryName struct {
	name string
	dir  bool
}

// entryNames validates files and returns them with their parent directories,
// sorted by path so that a parent always precedes its children.
func entryNames(files []string) ([]entryName, error) {
	seen := make(map[string]bool, len(files)) // path -> is a directory
	out := make([]entryName, 0, len(files)*2)
	for _, f := range files {
		if !fs.ValidPath(f) || f == "." {
			return nil, fmt.Errorf("archive: pack: invalid path %q: want a clean relative slash path", f)
		}
		if dir, ok := seen[f]; ok {
			if dir {
				return nil, fmt.Errorf("archive: pack: %s is both a file and a parent directory", f)
			}
			return nil, fmt.Errorf("archive: pack: duplicate path %s", f)
		}
		seen[f] = false
		out = append(out, entryName{name: f})
		for d := path.Dir(f); d != "."; d = path.Dir(d) {
			isDir, ok := seen[d]
			if ok {
				if !isDir {
					return nil, fmt.Errorf("archive: pack: %s is both a file and a parent directory", d)
				}
				break // its parents were added with it
			}
			seen[d] = true
			out = append(out, entryName{name: d, dir: true})
		}
	}
	slices.SortFunc(out, func(a, b entryName) int { return strings.Compare(a.name, b.name) })
	return out, nil
}

func packFile(tw *tar.Writer, fsys fs.FS, name string) error {
	f, err := fsys.Open(name)
	if err != nil {
		return fmt.Errorf("archive: pack: %w", err)
	}
	defer func() { _ = f.Close() }()
	info, err := f.Stat()
	if err != nil {
		return fmt.Errorf("archive: pack: %w", err)
	}
	if !info.Mode().IsRegular() {
		return fmt.Errorf("archive: pack %s: not a regular file (mode %s)", name, info.Mode())
	}
	size := info.Size()
	if err := tw.WriteHeader(normalizedHeader(name, tar.TypeReg, 0o644, size)); err != nil {
		return fmt.Errorf("archive: pack %s: %w", name, err)
	}
	// Copy exactly the size we announced; a file that changes size while it
	// is packed is an error rather than a corrupt archive.
	buf := copyBuffers.Get().(*[]byte)
	n, err := io.CopyBuffer(tw, readerOnly{f}, *buf)
	copyBuffers.Put(buf)
	switch {
	case errors.Is(err, tar.ErrWriteTooLong):
		return fmt.Errorf("archive: pack %s: file grew while packing (stat said %d bytes)", name, size)
	case err != nil:
		return fmt.Errorf("archive: pack %s: %w", name, err)
	case n != size:
		return fmt.Errorf("archive: pack %s: read %d bytes, stat said %d", name, n, size)
	}
	return nil
}

// checkNoLink makes sure an entry is what it claims without following a
// symbolic link: Open on os.DirFS follows links, so a link in a bundle
// directory (the entry itself or any parent, each of which is an entry too)
// could otherwise pack files from outside it.
func checkNoLink(fsys fs.FS, e entryName) error {
	info, err := fs.Lstat(fsys, e.name)
	if err != nil {
		return fmt.Errorf("archive: pack: %w", err)
	}
	mode := info.Mode()
	switch {
	case e.dir && !mode.IsDir():
		return fmt.Errorf("archive: pack %s: parent directory is not a directory (mode %s)", e.name, mode)
	case !e.dir && !mode.IsRegular():
		return fmt.Errorf("archive: pack %s: not a regular file (mode %s)", e.name, mode)
	}
	return nil
}

// normalizedHeader is the only header shape Pack writes: everything but the
// name, type and size is fixed.
func normalizedHeader(name string, typ byte, mode, size int64) *tar.Header {
	return &tar.Header{
		Typeflag: typ,
		Name:     name,
		Mode:     mode,
		Size:     size,
		ModTime:  epoch,
		Format:   tar.FormatPAX,
	}
}

// regularFiles lists every regular file in fsys, failing on anything that is
// neither a regular file nor a directory.
func regularFiles(fsys fs.FS) ([]string, error) {
	var files []string
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("archive: pack: %w", err)
		}
		switch {
		case d.IsDir():
			return nil
		case d.Type().IsRegular():
			files = append(files, p)
			return nil
		default:
			return fmt.Errorf("archive: pack %s: not a regular file (type %s)", p, d.Type())
		}
	})
	if err != nil {
		return nil, err
	}
	if files == nil {
		files = []string{}
	}
	return files, nil
}
