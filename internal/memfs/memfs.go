// Package memfs holds the pieces of an io/fs file system kept in memory
// that every such file system in kubepact needs alike: the fs.FileInfo of
// a file or directory with no times or owners, and an open directory over
// a fixed listing. bundle/archive's extracted bundle and
// internal/authoring's write overlay use them.
//
// It imports the standard library only, so any package may use it.
package memfs

import (
	"errors"
	"io"
	"io/fs"
	"slices"
	"time"
)

// FileInfo describes a file (mode 0644) or a directory (0755) held in
// memory; its modification time is the zero time.
type FileInfo struct {
	name string
	size int64
	dir  bool
}

// File is the FileInfo of a regular file of size bytes; name is its base
// name.
func File(name string, size int64) FileInfo { return FileInfo{name: name, size: size} }

// Dir is the FileInfo of a directory; name is its base name.
func Dir(name string) FileInfo { return FileInfo{name: name, dir: true} }

// Name implements fs.FileInfo.
func (i FileInfo) Name() string { return i.name }

// Size implements fs.FileInfo.
func (i FileInfo) Size() int64 { return i.size }

// Mode implements fs.FileInfo.
func (i FileInfo) Mode() fs.FileMode {
	if i.dir {
		return fs.ModeDir | 0o755
	}
	return 0o644
}

// ModTime implements fs.FileInfo: always the zero time.
func (i FileInfo) ModTime() time.Time { return time.Time{} }

// IsDir implements fs.FileInfo.
func (i FileInfo) IsDir() bool { return i.dir }

// Sys implements fs.FileInfo: always nil.
func (i FileInfo) Sys() any { return nil }

// ErrIsDir is the error of reading bytes from a directory.
var ErrIsDir = errors.New("is a directory")

// OpenDir is an open directory listing a fixed set of entries; it
// implements fs.ReadDirFile.
type OpenDir struct {
	info    FileInfo
	entries []fs.DirEntry
	off     int
}

// NewOpenDir opens the directory info with entries, in the order given.
func NewOpenDir(info FileInfo, entries []fs.DirEntry) *OpenDir {
	return &OpenDir{info: info, entries: entries}
}

// Stat implements fs.File.
func (d *OpenDir) Stat() (fs.FileInfo, error) { return d.info, nil }

// Close implements fs.File.
func (d *OpenDir) Close() error { return nil }

// Read implements fs.File: a directory has no bytes to read.
func (d *OpenDir) Read([]byte) (int, error) {
	return 0, &fs.PathError{Op: "read", Path: d.info.name, Err: ErrIsDir}
}

// ReadDir implements fs.ReadDirFile: n <= 0 returns every entry left;
// otherwise at most n, and io.EOF once none are left. The slices returned
// are the caller's.
func (d *OpenDir) ReadDir(n int) ([]fs.DirEntry, error) {
	rest := d.entries[d.off:]
	if n <= 0 {
		d.off = len(d.entries)
		return slices.Clone(rest), nil
	}
	if len(rest) == 0 {
		return nil, io.EOF
	}
	n = min(n, len(rest))
	d.off += n
	return slices.Clone(rest[:n]), nil
}
