// Package pactocompat finds the optional copy of Pacto's own demo bundles
// that kubepact's compatibility tests read: the directory $PACTO_COMPAT_DIR
// names, else ../shared/compat beside the repository when it is there. It
// holds pacto-demo/ (Pacto's demo bundles, fleet targets and traces).
//
// The data is not part of the repository, so a clone on its own passes
// without it: a compatibility test that cannot find it skips with one line
// saying where it looked and how to point at it. A directory that
// $PACTO_COMPAT_DIR names but that does not hold pacto-demo/ fails the test
// instead: an explicit setting that is wrong is a mistake, not an absence.
// Behaviour kubepact owns is tested on the repository's own testdata, never
// only here.
//
// Only tests import this package; it imports nothing from kubepact.
package pactocompat

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Env names the compatibility directory (the one holding pacto-demo/).
const Env = "PACTO_COMPAT_DIR"

// module is the repository's module path, which marks its root.
const module = "github.com/kubepact/kubepact"

// Demo returns the pacto-demo directory of the compatibility data, or
// skips t with one line when there is none.
func Demo(t testing.TB) string {
	t.Helper()
	dir, why, err := Lookup()
	switch {
	case err != nil:
		t.Fatal(err)
	case why != "":
		t.Skip(why)
	}
	return dir
}

// Lookup returns the pacto-demo directory of the compatibility data; or,
// when there is none and none was asked for, "" and the reason as one
// line; or an error when $PACTO_COMPAT_DIR names a directory without it.
func Lookup() (dir, skip string, err error) {
	if named := os.Getenv(Env); named != "" {
		demo := filepath.Join(named, "pacto-demo")
		if st, err := os.Stat(demo); err != nil || !st.IsDir() {
			return "", "", fmt.Errorf("%s=%s holds no pacto-demo directory: point it at the directory that holds Pacto's demo bundles as pacto-demo/, or unset it to skip the compatibility tests", Env, named)
		}
		return demo, "", nil
	}
	root, err := repoRoot()
	if err != nil {
		return "", "", err
	}
	def := filepath.Join(filepath.Dir(root), "shared", "compat")
	demo := filepath.Join(def, "pacto-demo")
	if st, err := os.Stat(demo); err != nil || !st.IsDir() {
		return "", fmt.Sprintf("Pacto compatibility data not found (%s unset, no %s beside the repository): set %s to a directory holding Pacto's demo bundles as pacto-demo/ to run this test", Env, def, Env), nil
	}
	return demo, "", nil
}

// repoRoot is the nearest directory above the working directory (a test's
// package directory) whose go.mod declares kubepact's module.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("finding the repository root: %w", err)
	}
	for {
		if declares(filepath.Join(dir, "go.mod")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("finding the repository root: no go.mod of " + module + " above the working directory")
		}
		dir = parent
	}
}

// declares reports whether the go.mod file at path declares kubepact's
// module (nested modules such as hack/k8s-bins declare their own).
func declares(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if line := strings.TrimSpace(sc.Text()); strings.HasPrefix(line, "module ") {
			return strings.Trim(strings.TrimSpace(strings.TrimPrefix(line, "module ")), `"`) == module
		}
	}
	return false
}
