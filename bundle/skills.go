package bundle

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"
)

// SkillsDir is the bundle folder holding agent skills: Markdown domain
// guides, one per file.
const SkillsDir = "skills"

// maxSkillBytes bounds one skill read: skills reach an agent's context.
const maxSkillBytes = 1 << 20

// ListSkills returns the bare names (file names without ".md") of the
// bundle's skills, sorted. A bundle without a skills folder has none: the
// result is an empty, non-nil slice.
func ListSkills(fsys fs.FS) ([]string, error) {
	entries, err := fs.ReadDir(fsys, SkillsDir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return []string{}, nil
		}
		return nil, fmt.Errorf("listing skills: %w", err)
	}
	names := []string{}
	for _, e := range entries {
		if !e.Type().IsRegular() || !strings.HasSuffix(e.Name(), ".md") {
			continue
		}
		name := strings.TrimSuffix(e.Name(), ".md")
		if name == "" || strings.HasPrefix(name, ".") {
			continue // not a name ReadSkill accepts: hidden, or no name at all
		}
		names = append(names, name)
	}
	slices.Sort(names)
	return names, nil
}

// ReadSkill returns the Markdown of the skill with the given bare name. The
// name must be a bare file name, with or without ".md" — no separators, no
// leading dot — so a read never leaves the skills folder.
func ReadSkill(fsys fs.FS, name string) (string, error) {
	bare := strings.TrimSuffix(name, ".md")
	if bare == "" || strings.ContainsAny(bare, `/\`) || strings.HasPrefix(bare, ".") || !cleanBundlePath(bare) {
		return "", fmt.Errorf("skill name %q is not accepted: give a bare name such as %q, without folders or a leading dot", name, "refund-a-payment")
	}
	p := path.Join(SkillsDir, bare+".md")
	// A look by name first: opening a FIFO would block. Then one open, the
	// same checks on what was opened, and a bounded read: a skill swapped
	// between the look and the read (for a huge file, say) is judged by
	// what is actually read.
	f, err := openRegular(fsys, p)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			names, lerr := ListSkills(fsys)
			if lerr != nil || len(names) == 0 {
				return "", fmt.Errorf("skill %q not found: this bundle has no skills", bare)
			}
			return "", fmt.Errorf("skill %q not found; the bundle has: %s", bare, strings.Join(names, ", "))
		}
		if errors.Is(err, errNotRegular) {
			return "", fmt.Errorf("skill %q is not a regular file", bare)
		}
		return "", fmt.Errorf("reading skill %q: %w", bare, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "", fmt.Errorf("reading skill %q: %w", bare, err)
	}
	if !st.Mode().IsRegular() {
		return "", fmt.Errorf("skill %q is not a regular file", bare)
	}
	if st.Size() > maxSkillBytes {
		return "", fmt.Errorf("skill %q is %d bytes; at most %d are served", bare, st.Size(), maxSkillBytes)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxSkillBytes+1))
	if err != nil {
		return "", fmt.Errorf("reading skill %q: %w", bare, err)
	}
	if len(data) > maxSkillBytes {
		return "", fmt.Errorf("skill %q is over %d bytes; at most %d are served", bare, maxSkillBytes, maxSkillBytes)
	}
	return string(data), nil
}

// openRegular opens name when, looked at by name, it is a regular file; any
// other kind is refused without opening it.
func openRegular(fsys fs.FS, name string) (fs.File, error) {
	st, err := fs.Stat(fsys, name)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, errNotRegular
	}
	return fsys.Open(name)
}

var errNotRegular = errors.New("not a regular file")

func errorsIsNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }
