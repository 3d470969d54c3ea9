package bundle

import (
	"io/fs"
	"os"
)

// rootFS is the files below an os.Root as an fs.FS, as r.FS() is, but an
// open never blocks: a file opened for reading is opened non-blocking, so a
// FIFO swapped in after the loader looked at a path (which would otherwise
// wait for a writer forever) opens at once and is refused by its type, as
// Pack and ReadSkill check the file they opened. Every open resolves below
// the handle, so links out of the root are refused as with r.FS().
type rootFS struct {
	r *os.Root
}

var (
	_ fs.ReadLinkFS = rootFS{}
	_ fs.StatFS     = rootFS{}
)

func (f rootFS) Open(name string) (fs.File, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	file, err := f.r.OpenFile(name, os.O_RDONLY|oNonblock, 0)
	if err != nil {
		return nil, err // a nil *os.File must not become a non-nil fs.File
	}
	return file, nil
}

func (f rootFS) Stat(name string) (fs.FileInfo, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "stat", Path: name, Err: fs.ErrInvalid}
	}
	return f.r.Stat(name)
}

func (f rootFS) Lstat(name string) (fs.FileInfo, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "lstat", Path: name, Err: fs.ErrInvalid}
	}
	return f.r.Lstat(name)
}

func (f rootFS) ReadLink(name string) (string, error) {
	if !fs.ValidPath(name) {
		return "", &fs.PathError{Op: "readlink", Path: name, Err: fs.ErrInvalid}
	}
	return f.r.Readlink(name)
}
