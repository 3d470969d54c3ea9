package bundle

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// ErrOutsideRoot is wrapped by a [Confine] error for a path that leaves its
// root, lexically or through a symbolic link.
var ErrOutsideRoot = errors.New("it leads outside the root")

// ErrLinkLoop is wrapped by a [Confine] error for a path whose symbolic
// links loop, so it names nothing.
var ErrLinkLoop = errors.New("its symbolic links loop")

// Confine maps p, absolute or relative to root, to a clean slash path
// relative to root ("." for root itself). It refuses, wrapping
// [ErrOutsideRoot], a path that leaves root lexically or whose deepest
// existing ancestor resolves, links followed, outside root (a dangling link
// is refused too, rather than guessed at); a link loop on the way wraps
// [ErrLinkLoop]. Components that do not exist yet are accepted: a write may
// create them. An absolute p may be written under root as given or under
// root with its own links resolved.
//
// Confine answers early and precisely, for messages. It is not the guard:
// the path can change as soon as it returns. Reads and writes go through an
// [os.Root] opened at root ([OpenDirIn], [LoadDirIn]), which refuses an
// escape again at the moment of each use.
func Confine(root, p string) (string, error) {
	if strings.ContainsRune(p, 0) {
		return "", fmt.Errorf("%q contains a NUL byte", p)
	}
	rootAbs, err := filepath.Abs(root)
	if err != nil {
		return "", fmt.Errorf("root %s: %w", root, err)
	}
	rootReal, err := filepath.EvalSymlinks(rootAbs)
	if err != nil {
		return "", fmt.Errorf("root %s: %w", root, err)
	}
	if p == "" {
		p = "."
	}
	full := p
	if !filepath.IsAbs(full) {
		full = filepath.Join(rootAbs, full)
	}
	full = filepath.Clean(full)
	lexical, ok := relLocal(rootAbs, full)
	if !ok {
		if lexical, ok = relLocal(rootReal, full); !ok {
			return "", ErrOutsideRoot
		}
	}
	// Resolve the deepest existing ancestor: a link on the way may point
	// out of the root. Components below it do not exist yet.
	existing, rest := filepath.Join(rootReal, lexical), ""
	for {
		_, err := os.Lstat(existing)
		if err == nil {
			break
		}
		if errors.Is(err, syscall.ELOOP) {
			return "", ErrLinkLoop
		}
		if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
			return "", err
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
		// EvalSymlinks says "too many links" without an errno; Stat does not.
		if _, serr := os.Stat(existing); errors.Is(serr, syscall.ELOOP) {
			return "", ErrLinkLoop
		}
		return "", ErrOutsideRoot
	}
	if _, ok := relLocal(rootReal, filepath.Join(resolved, rest)); !ok {
		return "", ErrOutsideRoot
	}
	return filepath.ToSlash(lexical), nil
}

// relLocal returns p relative to base when p is base or below it, lexically.
func relLocal(base, p string) (string, bool) {
	rel, err := filepath.Rel(base, p)
	if err != nil || (rel != "." && !filepath.IsLocal(rel)) {
		return "", false
	}
	return rel, true
}

// OpenDirIn opens the directory rel (a slash path relative to root, as
// [Confine] returns) as an [os.Root] of its own. Every component is
// resolved below a handle on root, so a link that leads out is refused at
// the moment of opening, and the returned handle keeps naming the directory
// it opened even if the path is swapped afterwards: reads through it stay
// inside that directory.
func OpenDirIn(root, rel string) (*os.Root, error) {
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return r.OpenRoot(filepath.FromSlash(rel))
}

// RootError classifies an error from an [os.Root] operation the way
// [Confine] does: a path that escapes the root wraps [ErrOutsideRoot] and a
// link loop [ErrLinkLoop], each keeping err's text; any other error is
// returned as it is.
func RootError(err error) error {
	var pe *fs.PathError
	switch {
	case err == nil:
		return nil
	case errors.Is(err, syscall.ELOOP):
		return fmt.Errorf("%w: %w", ErrLinkLoop, err)
	case errors.As(err, &pe) && pe.Err.Error() == rootEscapeText:
		return fmt.Errorf("%w: %w", ErrOutsideRoot, err)
	}
	return err
}

// rootEscapeText is how os.Root says a path escapes it; the os package does
// not export the error value.
const rootEscapeText = "path escapes from parent"
