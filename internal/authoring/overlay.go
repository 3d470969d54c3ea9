package authoring

import (
	"bytes"
	"errors"
	"io/fs"
	"path"
	"slices"
	"strings"

	"github.com/kubepact/kubepact/internal/memfs"
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
		return &memFile{info: memfs.File(path.Base(name), int64(len(data))), r: bytes.NewReader(data)}, nil
	}
	if o.hasChildren(name) {
		entries, err := o.ReadDir(name)
		if err != nil {
			return nil, err
		}
		return memfs.NewOpenDir(memfs.Dir(path.Base(name)), entries), nil
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
				byName[child] = fs.FileInfoToDirEntry(memfs.Dir(child))
			}
		} else {
			byName[rest] = fs.FileInfoToDirEntry(memfs.File(rest, int64(len(data))))
		}
	}
	out := make([]fs.DirEntry, 0, len(byName))
	for _, e := range byName {
		out = append(out, e)
	}
	slices.SortFunc(out, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return out, nil
}

type memFile struct {
	info memfs.FileInfo
	r    *bytes.Reader
}

func (f *memFile) Stat() (fs.FileInfo, error) { return f.info, nil }
func (f *memFile) Read(p []byte) (int, error) { return f.r.Read(p) }
func (f *memFile) Close() error               { return nil }
