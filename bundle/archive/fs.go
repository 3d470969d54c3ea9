package archive

import (
	"bytes"
	"io/fs"
	"path"
	"slices"
	"strings"

	"github.com/kubepact/kubepact/internal/memfs"
)

// FS is an extracted archive held in memory. It is immutable: it implements
// fs.FS, fs.ReadFileFS, fs.ReadDirFS and fs.StatFS, and hands out copies,
// so it is safe for concurrent use. Directories are reported with mode
// 0755, files with 0644, and every modification time is the zero time.
type FS struct {
	files map[string][]byte
	dirs  map[string][]fs.DirEntry // sorted by name; "." is the root
	paths []string                 // regular files, sorted
	size  int64                    // bytes of all regular files
}

var (
	_ fs.FS         = (*FS)(nil)
	_ fs.ReadFileFS = (*FS)(nil)
	_ fs.ReadDirFS  = (*FS)(nil)
	_ fs.StatFS     = (*FS)(nil)
)

func (b *builder) build() *FS {
	f := &FS{files: map[string][]byte{}, dirs: map[string][]fs.DirEntry{".": nil}}
	for name, n := range b.nodes {
		if n.dir {
			if _, ok := f.dirs[name]; !ok {
				f.dirs[name] = nil
			}
		} else {
			f.files[name] = n.data
			f.paths = append(f.paths, name)
			f.size += int64(len(n.data))
		}
		parent := path.Dir(name)
		f.dirs[parent] = append(f.dirs[parent], fs.FileInfoToDirEntry(f.info(name, n.dir, len(n.data))))
	}
	for _, entries := range f.dirs {
		slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	}
	slices.Sort(f.paths)
	return f
}

// Size returns the bytes of all regular files: what the archive holds in
// memory, as a caller budgeting memory counts it.
func (f *FS) Size() int64 {
	if f == nil {
		return 0
	}
	return f.size
}

// Paths returns the paths of all regular files, sorted. The caller owns the
// returned slice.
func (f *FS) Paths() []string { return slices.Clone(f.paths) }

// Open implements fs.FS.
func (f *FS) Open(name string) (fs.File, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	if data, ok := f.files[name]; ok {
		return &openFile{info: f.info(name, false, len(data)), Reader: bytes.NewReader(data)}, nil
	}
	if entries, ok := f.dirs[name]; ok {
		return memfs.NewOpenDir(f.info(name, true, 0), entries), nil
	}
	return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
}

// ReadFile implements fs.ReadFileFS; the caller owns the returned bytes.
func (f *FS) ReadFile(name string) ([]byte, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "readfile", Path: name, Err: fs.ErrInvalid}
	}
	data, ok := f.files[name]
	if !ok {
		if _, isDir := f.dirs[name]; isDir {
			return nil, &fs.PathError{Op: "readfile", Path: name, Err: errIsDir}
		}
		return nil, &fs.PathError{Op: "readfile", Path: name, Err: fs.ErrNotExist}
	}
	return bytes.Clone(data), nil
}

// ReadDir implements fs.ReadDirFS: the entries of directory name, sorted by
// name.
func (f *FS) ReadDir(name string) ([]fs.DirEntry, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: fs.ErrInvalid}
	}
	entries, ok := f.dirs[name]
	if !ok {
		if _, isFile := f.files[name]; isFile {
			return nil, &fs.PathError{Op: "readdir", Path: name, Err: errNotDir}
		}
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: fs.ErrNotExist}
	}
	return slices.Clone(entries), nil
}

// Stat implements fs.StatFS.
func (f *FS) Stat(name string) (fs.FileInfo, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "stat", Path: name, Err: fs.ErrInvalid}
	}
	if data, ok := f.files[name]; ok {
		return f.info(name, false, len(data)), nil
	}
	if _, ok := f.dirs[name]; ok {
		return f.info(name, true, 0), nil
	}
	return nil, &fs.PathError{Op: "stat", Path: name, Err: fs.ErrNotExist}
}

func (f *FS) info(name string, dir bool, size int) memfs.FileInfo {
	if dir {
		return memfs.Dir(path.Base(name))
	}
	return memfs.File(path.Base(name), int64(size))
}

type fsError string

func (e fsError) Error() string { return string(e) }

const errNotDir = fsError("not a directory")

var errIsDir = memfs.ErrIsDir

// openFile is an open regular file; it also implements io.Seeker and
// io.ReaderAt through the embedded reader.
type openFile struct {
	info memfs.FileInfo
	*bytes.Reader
}

func (o *openFile) Stat() (fs.FileInfo, error) { return o.info, nil }
func (o *openFile) Close() error               { return nil }
