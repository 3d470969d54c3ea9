package pactocompat

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLookup(t *testing.T) {
	with := t.TempDir()
	if err := os.Mkdir(filepath.Join(with, "pacto-demo"), 0o755); err != nil {
		t.Fatal(err)
	}
	without := t.TempDir()

	t.Setenv(Env, with)
	if dir, skip, err := Lookup(); err != nil || skip != "" || dir != filepath.Join(with, "pacto-demo") {
		t.Errorf("%s=%s: Lookup() = %q, %q, %v; want its pacto-demo", Env, with, dir, skip, err)
	}

	// Named but wrong: an error naming the variable, never a skip.
	t.Setenv(Env, without)
	if dir, skip, err := Lookup(); err == nil || dir != "" || skip != "" || !strings.Contains(err.Error(), Env+"="+without) {
		t.Errorf("%s=%s: Lookup() = %q, %q, %v; want an error naming the setting", Env, without, dir, skip, err)
	}

	// Unset: the default beside the repository, or one line saying where
	// it looked and what to set.
	t.Setenv(Env, "")
	dir, skip, err := Lookup()
	switch {
	case err != nil:
		t.Errorf("unset: %v", err)
	case dir == "" && (!strings.Contains(skip, Env) || strings.Contains(skip, "\n")):
		t.Errorf("unset and absent: skip reason %q; want one line naming %s", skip, Env)
	case dir != "" && filepath.Base(filepath.Dir(dir)) != "compat":
		t.Errorf("unset: found %s; want ../shared/compat/pacto-demo beside the repository", dir)
	}
}

func TestRepoRootIsTheModule(t *testing.T) {
	root, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "test", "pactocompat", "pactocompat.go")); err != nil {
		t.Errorf("repoRoot() = %s, which does not hold this package: %v", root, err)
	}
}
