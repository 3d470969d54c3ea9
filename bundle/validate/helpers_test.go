package validate_test

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// repoRoot is the repository root as seen from this package's directory.
const repoRoot = "../.."

// bundleDirs lists every directory under root holding a pacto.yaml,
// relative to root with slashes.
func bundleDirs(t testing.TB, root string) []string {
	t.Helper()
	var dirs []string
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Name() == "pacto.yaml" {
			rel, rerr := filepath.Rel(root, filepath.Dir(p))
			if rerr != nil {
				return rerr
			}
			dirs = append(dirs, filepath.ToSlash(rel))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return dirs
}

// mapResolver resolves refs through a fixed table of bundle directories,
// the way a real resolver would hand back a pulled bundle.
type mapResolver map[string]fs.FS

func (m mapResolver) Resolve(_ context.Context, ref string) (fs.FS, error) {
	if f, ok := m[ref]; ok {
		return f, nil
	}
	return nil, fmt.Errorf("%s: not found", ref)
}

// compatResolver maps the OCI refs used by Pacto's demo onto the bundle
// directories of the local copy: …/pacto/NAME and …/pacto-demo/NAME on
// ghcr.io are bundles/NAME, partners.acme.com/pacto/NAME is partners/NAME.
// Versioned directories are not guessed: a ref that has no unversioned
// directory fails, as it would offline.
type compatResolver struct{ root string }

func (r compatResolver) Resolve(_ context.Context, ref string) (fs.FS, error) {
	name := ref[strings.LastIndexByte(ref, '/')+1:]
	var dir string
	switch {
	case strings.HasPrefix(ref, "oci://ghcr.io/trianalab/pacto/"), strings.HasPrefix(ref, "oci://ghcr.io/trianalab/pacto-demo/"):
		dir = filepath.Join(r.root, "bundles", name)
	case strings.HasPrefix(ref, "oci://partners.acme.com/pacto/"):
		dir = filepath.Join(r.root, "partners", name)
	default:
		return nil, fmt.Errorf("%s: unknown registry", ref)
	}
	if _, err := os.Stat(filepath.Join(dir, "pacto.yaml")); err != nil {
		return nil, fmt.Errorf("%s: no bundle in the local copy", ref)
	}
	return os.DirFS(dir), nil
}
