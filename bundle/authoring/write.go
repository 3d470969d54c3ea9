package authoring

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
)

// fileChange is one file an operation writes, relative to the workspace.
type fileChange struct {
	rel  string
	data []byte
	old  []byte // previous content; nil when the file is new
	// create means the file must not exist: scaffolds never replace a file.
	create bool
}

// FileChange reports one file a call created or updated (or, with dry_run,
// would have).
type FileChange struct {
	// Path is relative to the workspace root, slash-separated.
	Path string `json:"path"`
	// Action is "created" or "updated".
	Action string `json:"action"`
}

func reportFiles(changes []fileChange) []FileChange {
	out := make([]FileChange, 0, len(changes))
	for _, c := range changes {
		action := "updated"
		if c.old == nil {
			action = "created"
		}
		out = append(out, FileChange{Path: c.rel, Action: action})
	}
	return out
}

// writeAll writes changes in order through root. Callers put pacto.yaml last
// so that a failure part-way never leaves it referring to missing files.
// Files created by this call are removed again when a later write fails.
func (a *Authoring) writeAll(root *os.Root, changes []fileChange) error {
	var created []string
	for _, c := range changes {
		if err := a.writeAtomic(root, c); err != nil {
			for _, rel := range created {
				_ = root.Remove(rel)
			}
			return err
		}
		if c.old == nil {
			created = append(created, c.rel)
		}
	}
	return nil
}

// writeAtomic writes one file so that readers see the old content or the new
// content, never a prefix: a temporary file in the same directory is written,
// fsynced and renamed over the target (or, for a new file, hard-linked into
// place so an existing file is never replaced), then the directory is
// fsynced.
func (a *Authoring) writeAtomic(root *os.Root, c fileChange) (err error) {
	dir, base := path.Split(c.rel)
	if dir == "" {
		dir = "."
	}
	if err := root.MkdirAll(dir, 0o755); err != nil {
		return internalError("creating directory "+dir, err)
	}
	perm := fs.FileMode(0o644)
	if st, err := root.Stat(c.rel); err == nil {
		if c.create {
			return &Error{Code: CodeAlreadyExists, Message: fmt.Sprintf("%s already exists; it is left as it is", c.rel)}
		}
		perm = st.Mode().Perm()
	}
	var suffix [6]byte
	_, _ = rand.Read(suffix[:])
	tmp := path.Join(dir, "."+base+".tmp-"+hex.EncodeToString(suffix[:]))
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return internalError("creating a temporary file for "+c.rel, err)
	}
	placed := false
	defer func() {
		if !placed {
			_ = f.Close()
			_ = root.Remove(tmp)
		}
	}()
	var w io.Writer = f
	if a.wrapWriter != nil {
		w = a.wrapWriter(c.rel, f)
	}
	if _, err := w.Write(c.data); err != nil {
		return internalError("writing "+c.rel, err)
	}
	if err := f.Sync(); err != nil {
		return internalError("syncing "+c.rel, err)
	}
	if err := f.Close(); err != nil {
		return internalError("closing "+c.rel, err)
	}
	if c.create {
		if err := root.Link(tmp, c.rel); err != nil {
			if errors.Is(err, fs.ErrExist) {
				return &Error{Code: CodeAlreadyExists, Message: fmt.Sprintf("%s already exists; it is left as it is", c.rel)}
			}
			// No hard links here: fall back to rename after a last check.
			if _, serr := root.Lstat(c.rel); serr == nil {
				return &Error{Code: CodeAlreadyExists, Message: fmt.Sprintf("%s already exists; it is left as it is", c.rel)}
			}
			if err := root.Rename(tmp, c.rel); err != nil {
				return internalError("placing "+c.rel, err)
			}
		} else {
			_ = root.Remove(tmp)
		}
	} else if err := root.Rename(tmp, c.rel); err != nil {
		return internalError("replacing "+c.rel, err)
	}
	placed = true
	syncDir(root, dir)
	return nil
}

// syncDir makes a rename durable. Some filesystems cannot fsync a directory;
// the rename has still happened, so failures are ignored.
func syncDir(root *os.Root, dir string) {
	d, err := root.Open(dir)
	if err != nil {
		return
	}
	_ = d.Sync()
	_ = d.Close()
}
