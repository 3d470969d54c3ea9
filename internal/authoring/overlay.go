package authoring

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"
	"time"
)

// overlayFS is the bundle directory as it will be after a write: the files
// about to be written (names relative to the bundle) over the real directory.
// Validation reads through it, so it checks exactly what will be on disk —
// nothing is stubbed.
type overlayFS struct {
	base  fs.FS
	files map[string][]byte
}

var (
	_ fs.ReadFileFS = (*overlayFS)(nil)
	_ fs.ReadDirFS  = (*overlayFS)(nil)
	_ fs.StatFS     = (*overlayFS)(nil)
)

func (o *overlayFS) Open(name string) (fs.File, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	if data, ok := o.files[name]; ok {
		return &memFile{info: memInfo{name: path.Base(name), size: int64(len(data))}, r: bytes.NewReader(data)}, nil
	}
	if o.hasChildren(name) {
		entries, err := o.ReadDir(name)
		if err != nil {
			return nil, err
		}
		return &memDir{info: memInfo{name: path.Base(name), dir: true}, entries: entries}, nil
	}
	return o.base.Open(name)
}

func (o *overlayFS) ReadFile(name string) ([]byte, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "read", Path: name, Err: fs.ErrInvalid}
	}
	if data, ok := o.files[name]; ok {
		return bytes.Clone(data), nil
	}
	return fs.ReadFile(o.base, name)
}

func (o *overlayFS) Stat(name string) (fs.FileInfo, error) {
	f, err := o.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Stat()
}

func (o *overlayFS) hasChildren(dir string) bool {
	if dir == "." {
		return len(o.files) > 0
	}
	for name := range o.files {
		if strings.HasPrefix(name, dir+"/") {
			return true
		}
	}
	return false
}

func (o *overlayFS) ReadDir(dir string) ([]fs.DirEntry, error) {
	entries, err := fs.ReadDir(o.base, dir)
	if err != nil && (!errors.Is(err, fs.ErrNotExist) || !o.hasChildren(dir)) {
		return nil, err
	}
	byName := map[string]fs.DirEntry{}
	for _, e := range entries {
		byName[e.Name()] = e
	}
	prefix := dir + "/"
	if dir == "." {
		prefix = ""
	}
	for name, data := range o.files {
		rest, ok := strings.CutPrefix(name, prefix)
		if !ok {
			continue
		}
		if child, _, nested := strings.Cut(rest, "/"); nested {
			if _, ok := byName[child]; !ok {
				byName[child] = fs.FileInfoToDirEntry(memInfo{name: child, dir: true})
			}
		} else {
			byName[rest] = fs.FileInfoToDirEntry(memInfo{name: rest, size: int64(len(data))})
		}
	}
	out := make([]fs.DirEntry, 0, len(byName))
	for _, e := range byName {
		out = append(out, e)
	}
	slices.SortFunc(out, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return out, nil
}

type memInfo struct {
	name string
	size int64
	dir  bool
}

func (m memInfo) Name() string { return m.name }
func (m memInfo) Size() int64  { return m.size }
func (m memInfo) Mode() fs.FileMode {
	if m.dir {
		return fs.ModeDir | 0o755
	}
	return 0o644
}
func (m memInfo) ModTime() time.Time { return time.Time{} }
func (m memInfo) IsDir() bool        { return m.dir }
func (m memInfo) Sys() any           { return nil }

type memFile struct {
	info memInfo
	r    *bytes.Reader
}

func (f *memFile) Stat() (fs.FileInfo, error) { return f.info, nil }
func (f *memFile) Read(p []byte) (int, error) { return f.r.Read(p) }
func (f *memFile) Close() error               { return nil }

type memDir struct {
	info    memInfo
	entries []fs.DirEntry
	off     int
}

func (d *memDir) Stat() (fs.FileInfo, error) { return d.info, nil }
func (d *memDir) Read([]byte) (int, error) {
	return 0, &fs.PathError{Op: "read", Path: d.info.name, Err: errors.New("is a directory")}
}
func (d *memDir) Close() error { return nil }

func (d *memDir) ReadDir(n int) ([]fs.DirEntry, error) {
	rest := d.entries[d.off:]
	if n <= 0 {
		d.off = len(d.entries)
		return rest, nil
	}
	if len(rest) == 0 {
		return nil, io.EOF
	}
	n = min(n, len(rest))
	d.off += n
	return rest[:n], nil
}
