package validate

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"
)

// errOutsideBundle marks a path that does not name a file inside the bundle.
var errOutsideBundle = errors.New("not a path inside the bundle")

// bundlePath turns a ref as written in pacto.yaml into an fs.FS path:
// slash-separated, relative, no "..". "./x" and "x" are the same file.
func bundlePath(ref string) (string, error) {
	if ref == "" || strings.HasPrefix(ref, "/") || strings.Contains(ref, "\\") || strings.Contains(ref, "://") {
		return "", errOutsideBundle
	}
	p := path.Clean(ref)
	if p == "." || !fs.ValidPath(p) {
		return "", errOutsideBundle
	}
	return p, nil
}

// readFile reads name from fsys, refusing files over limit bytes.
func readFile(fsys fs.FS, name string, limit int64) ([]byte, error) {
	if fsys == nil {
		return nil, fs.ErrNotExist
	}
	p, err := bundlePath(name)
	if err != nil {
		return nil, err
	}
	f, err := fsys.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.IsDir() {
		return nil, fmt.Errorf("%s is a directory", p)
	}
	if st.Size() > limit {
		return nil, fmt.Errorf("%s is %d bytes; the limit is %d", p, st.Size(), limit)
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s is larger than the limit of %d bytes", p, limit)
	}
	return data, nil
}

// missingMessage explains why a referenced file could not be read.
func missingMessage(what, ref string, err error) string {
	switch {
	case errors.Is(err, errOutsideBundle):
		return fmt.Sprintf("%s %q is not a path inside the bundle; use a relative path such as interfaces/openapi.yaml (no leading /, no .., no URL)", what, ref)
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Sprintf("%s %q does not exist in the bundle", what, ref)
	default:
		return fmt.Sprintf("%s %q cannot be read: %v", what, ref, err)
	}
}

// isNotFound reports whether err means the file is absent (or not a file
// of the bundle at all), as opposed to present but unreadable.
func isNotFound(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, errOutsideBundle)
}
