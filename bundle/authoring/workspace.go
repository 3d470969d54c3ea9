package authoring

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// Workspace confines file access to a directory tree. Root is absolute and
// has its symlinks resolved.
type Workspace struct {
	Root string
}

// NewWorkspace returns the workspace rooted at dir ("" = the current
// directory). The directory must exist.
func NewWorkspace(dir string) (*Workspace, error) {
	if dir == "" {
		dir = "."
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("workspace %q: %w", dir, err)
	}
	resolved, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("workspace %q: %w", dir, err)
	}
	st, err := os.Stat(resolved)
	if err != nil {
		return nil, fmt.Errorf("workspace %q: %w", dir, err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("workspace %q is not a directory", dir)
	}
	return &Workspace{Root: resolved}, nil
}

// Rel maps a path given by a caller (relative to Root, or absolute) to a
// clean slash-separated path relative to Root ("." for Root itself). A path
// that is, or through a symlink resolves to, a place outside Root is refused
// with [CodePathOutsideWorkspace].
//
// The lexical result is what later file operations use, through an [os.Root]
// opened at Root, which refuses symlink escapes again at the moment of use.
func (w *Workspace) Rel(field, p string) (string, error) {
	if p == "" {
		p = "."
	}
	if strings.ContainsRune(p, 0) {
		return "", argError(field, fmt.Sprintf("%q contains a NUL byte", field))
	}
	full := p
	if !filepath.IsAbs(full) {
		full = filepath.Join(w.Root, p)
	}
	full = filepath.Clean(full)
	outside := &Error{
		Code:    CodePathOutsideWorkspace,
		Field:   field,
		Message: fmt.Sprintf("%s %q is outside the workspace %s; give a path inside it", field, p, w.Root),
	}
	lexical, err := filepath.Rel(w.Root, full)
	if err != nil || !local(lexical) {
		return "", outside
	}
	// Resolve the deepest existing ancestor: a symlink on the way may point
	// out of the workspace. Components below it do not exist yet.
	existing, rest := full, ""
	for {
		if _, err := os.Lstat(existing); err == nil {
			break
		} else if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
			return "", internalError("checking "+field, err)
		}
		parent := filepath.Dir(existing)
		if parent == existing {
			break
		}
		rest = filepath.Join(filepath.Base(existing), rest)
		existing = parent
	}
	resolved, err := filepath.EvalSymlinks(existing)
	if err != nil {
		return "", outside // a dangling or looping link: refuse rather than guess
	}
	real, err := filepath.Rel(w.Root, filepath.Join(resolved, rest))
	if err != nil || !local(real) {
		return "", outside
	}
	return filepath.ToSlash(lexical), nil
}

// local reports whether a relative OS path stays below its base.
func local(rel string) bool {
	return rel == "." || filepath.IsLocal(rel)
}

// join joins slash paths relative to the workspace root.
func join(dir, name string) string {
	if dir == "." || dir == "" {
		return name
	}
	return dir + "/" + name
}
