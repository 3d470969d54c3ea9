package bundle

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"

	"github.com/kubepact/kubepact/bundle/archive"
	"github.com/kubepact/kubepact/bundle/contract"
)

// IgnoreFile is the name of a bundle's ignore file, in gitignore syntax.
const IgnoreFile = ".pactoignore"

// defaultIgnores are always in force, before the bundle's own .pactoignore,
// which may re-include them with a "!" pattern.
var defaultIgnores = []string{".git/", IgnoreFile, ".DS_Store"}

// maxIgnoreFileBytes bounds the .pactoignore read: it is bundle content and
// therefore untrusted.
const maxIgnoreFileBytes = 64 << 10

// Files lists the slash paths of the regular files in fsys that belong to the
// bundle: everything but what the default ignores and the bundle's
// .pactoignore exclude. pacto.yaml always belongs, whatever the patterns say.
// The result is sorted. Symlinks and other non-regular files are refused with
// an error, since a packed bundle could not carry them.
func Files(fsys fs.FS) ([]string, error) {
	patterns, err := ignorePatterns(fsys)
	if err != nil {
		return nil, err
	}
	m := gitignore.NewMatcher(patterns)

	var files []string
	err = fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("reading %s: %w", p, err)
		}
		if p == "." {
			return nil
		}
		parts := strings.Split(p, "/")
		if p != contract.FileName && m.Match(parts, d.IsDir()) {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		switch {
		case d.IsDir():
			return nil
		case d.Type().IsRegular():
			files = append(files, p)
			return nil
		default:
			return unsafeEntry(fmt.Sprintf("%s is a %s: a bundle holds only regular files and directories (ignore it in %s)", p, FileKind(d.Type()), IgnoreFile))
		}
	})
	if err != nil {
		return nil, err
	}
	slices.Sort(files)
	return files, nil
}

// unsafeEntry is a file a bundle may not hold (a link, a device, a
// socket): it reports as archive.ErrUnsafe, as the extractor's refusal of
// the same entry does.
type unsafeEntry string

func (e unsafeEntry) Error() string        { return string(e) }
func (e unsafeEntry) Is(target error) bool { return target == archive.ErrUnsafe }

func ignorePatterns(fsys fs.FS) ([]gitignore.Pattern, error) {
	var ps []gitignore.Pattern
	for _, line := range defaultIgnores {
		ps = append(ps, gitignore.ParsePattern(line, nil))
	}
	// Look before opening: Open follows links (os.DirFS), a link could name
	// a file outside the bundle or a device such as /dev/zero that never
	// ends, and opening a FIFO blocks. Only a regular file is read.
	st, err := fs.Lstat(fsys, IgnoreFile)
	if err != nil {
		if errorsIsNotExist(err) {
			return ps, nil
		}
		return nil, fmt.Errorf("reading %s: %w", IgnoreFile, err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is a %s: it must be a regular file in the bundle", IgnoreFile, FileKind(st.Mode()))
	}
	if st.Size() > maxIgnoreFileBytes {
		return nil, fmt.Errorf("%s is %d bytes; at most %d are accepted", IgnoreFile, st.Size(), maxIgnoreFileBytes)
	}
	f, err := fsys.Open(IgnoreFile)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", IgnoreFile, err)
	}
	defer f.Close()
	// The size was checked, but the file may have changed since: read at
	// most one byte more than the limit, whatever it holds now.
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(io.LimitReader(f, maxIgnoreFileBytes+1)); err != nil {
		return nil, fmt.Errorf("reading %s: %w", IgnoreFile, err)
	}
	if buf.Len() > maxIgnoreFileBytes {
		return nil, fmt.Errorf("%s is over %d bytes; at most %d are accepted", IgnoreFile, maxIgnoreFileBytes, maxIgnoreFileBytes)
	}
	sc := bufio.NewScanner(&buf)
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), " \t\r")
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		ps = append(ps, gitignore.ParsePattern(line, nil))
	}
	return ps, sc.Err()
}

// FileKind names the kind of a file that is not a regular one (a
// directory, symlink, device, named pipe or socket), for a message that
// refuses it; every reader of bundle and fleet files says it in these
// words.
func FileKind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "directory"
	case m&fs.ModeSymlink != 0:
		return "symlink"
	case m&fs.ModeDevice != 0:
		return "device"
	case m&fs.ModeNamedPipe != 0:
		return "named pipe"
	case m&fs.ModeSocket != 0:
		return "socket"
	default:
		return "non-regular file"
	}
}

// cleanBundlePath reports whether p is a clean, relative slash path that
// stays inside the bundle.
func cleanBundlePath(p string) bool {
	return p != "" && fs.ValidPath(p) && path.Clean(p) == p
}
