package authoring

import (
	"context"
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
// so that a failure part-way never leaves it referring to missing files. A
// call either writes every change or leaves the workspace as it found it:
// when a write fails, or ctx is cancelled before the last file is in place,
// the files this call created are removed, the files it updated get their
// old content back, and the directories it created are removed again.
// Temporary files never outlive the call.
func (a *Authoring) writeAll(ctx context.Context, root *os.Root, changes []fileChange) error {
	var done []fileChange
	var dirs []string // created by this call, parents first
	for _, c := range changes {
		err := ctx.Err()
		if err == nil {
			var made []string
			made, err = mkdirs(root, path.Dir(c.rel))
			dirs = append(dirs, made...)
			if err == nil {
				err = a.writeAtomic(ctx, root, c)
			}
		}
		if err != nil {
			rollback(ctx, root, done, dirs)
			if ctx.Err() != nil {
				return &Error{Code: CodeInternal, Message: "the call was cancelled before all its files were written; the workspace was left as it was", err: ctx.Err()}
			}
			return err
		}
		done = append(done, c)
	}
	return nil
}

// rollback undoes the writes done, newest first, and removes the
// directories a call created (deepest first, and only while empty: a file
// someone else put there meanwhile keeps its directory). It is best-effort:
// it runs because something already failed, and goes on when ctx is
// cancelled: that is one of the failures it repairs.
func rollback(ctx context.Context, root *os.Root, done []fileChange, dirs []string) {
	ctx = context.WithoutCancel(ctx)
	for i := len(done) - 1; i >= 0; i-- {
		c := done[i]
		if c.old == nil {
			_ = root.Remove(c.rel)
			continue
		}
		undo := fileChange{rel: c.rel, data: c.old, old: c.data}
		_ = (&Authoring{}).writeAtomic(ctx, root, undo)
	}
	for i := len(dirs) - 1; i >= 0; i-- {
		_ = root.Remove(dirs[i])
	}
}

// mkdirs creates dir and its missing parents below root and returns the ones
// it created, parents first.
func mkdirs(root *os.Root, dir string) ([]string, error) {
	var missing []string
	for d := dir; d != "." && d != "/" && d != ""; d = path.Dir(d) {
		if _, err := root.Lstat(d); err == nil {
			break
		}
		missing = append(missing, d)
	}
	var made []string
	for i := len(missing) - 1; i >= 0; i-- {
		err := root.Mkdir(missing[i], 0o755)
		if errors.Is(err, fs.ErrExist) {
			continue // made meanwhile by someone else: not ours to remove
		}
		if err != nil {
			return made, internalError("creating directory "+missing[i], err)
		}
		made = append(made, missing[i])
	}
	return made, nil
}

// writeAtomic writes one file so that readers see the old content or the new
// content, never a prefix: a temporary file in the same directory is written,
// fsynced and renamed over the target (or, for a new file, hard-linked into
// place so an existing file is never replaced), then the directory is
// fsynced. The directory must exist. Cancelling ctx before the file is in
// place leaves the target untouched and removes the temporary file.
func (a *Authoring) writeAtomic(ctx context.Context, root *os.Root, c fileChange) (err error) {
	dir, base := path.Split(c.rel)
	if dir == "" {
		dir = "."
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
	if err := ctx.Err(); err != nil {
		return err
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
