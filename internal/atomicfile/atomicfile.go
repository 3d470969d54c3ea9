// Package atomicfile writes a file so that a reader sees its old content or
// its new content, never a prefix, and a failed write leaves nothing
// behind: the one way kubepact replaces a file by path (the tools lock,
// pack's output, the OCI blob cache).
//
// Writes confined to an os.Root (internal/authoring) keep their own steps:
// they create without replacing and sync the directory.
//
// It imports the standard library only, so any package may use it.
package atomicfile

import (
	"os"
	"path/filepath"
)

// Write replaces path with data, with permissions perm: a temporary file
// beside path (".<name>.tmp-*") is written, given perm, synced, closed and
// renamed over path. The directory must exist. On any error path is left
// as it was, the temporary file is removed, and the error of the failing
// step is returned as it is (an *fs.PathError or *os.LinkError), for the
// caller to wrap with what it was writing.
func Write(path string, data []byte, perm os.FileMode) (err error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = tmp.Close() // already closed on the last steps: harmless
			_ = os.Remove(tmp.Name())
		}
	}()
	if _, err = tmp.Write(data); err != nil {
		return err
	}
	if err = tmp.Chmod(perm); err != nil {
		return err
	}
	if err = tmp.Sync(); err != nil {
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
