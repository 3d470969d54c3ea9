package authoring

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/kubepact/kubepact/bundle"
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
// with [CodePathOutsideWorkspace]; one whose links loop is an argument error
// naming the loop.
//
// The lexical result is what later file operations use, through an [os.Root]
// opened at Root, which refuses symlink escapes again at the moment of use.
func (w *Workspace) Rel(field, p string) (string, error) {
	if strings.ContainsRune(p, 0) {
		return "", argError(field, fmt.Sprintf("%q contains a NUL byte", field))
	}
	rel, err := bundle.Confine(w.Root, p)
	if err != nil {
		return "", w.pathError(field, p, err)
	}
	return rel, nil
}

// pathError answers a confinement failure on the path the caller gave as
// field, met by [bundle.Confine] or by an [os.Root] operation: outside the
// workspace, a link loop, or else an internal error.
func (w *Workspace) pathError(field, p string, err error) error {
	if p == "" {
		p = "."
	}
	err = bundle.RootError(err)
	switch {
	case errors.Is(err, bundle.ErrOutsideRoot):
		return &Error{
			Code:    CodePathOutsideWorkspace,
			Field:   field,
			Message: fmt.Sprintf("%s %q is outside the workspace %s; give a path inside it", field, p, w.Root),
		}
	case errors.Is(err, bundle.ErrLinkLoop):
		return argError(field, fmt.Sprintf("%s %q cannot be used: its symbolic links loop, so it names no file or directory; remove or fix the link", field, p))
	}
	return internalError("checking "+field, err)
}

// join joins slash paths relative to the workspace root.
func join(dir, name string) string {
	if dir == "." || dir == "" {
		return name
	}
	return dir + "/" + name
}
