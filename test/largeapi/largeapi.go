// Package largeapi finds the real large API description the scale tests and
// benchmarks serve: GitHub's REST API (npm @octokit/openapi 23.0.2,
// generated/api.github.com.json, 1,223 operations, 13 MB), installed by
// `make github-spec` from this folder's package-lock.json, and makes a
// bundle of it. It is test-only data: nothing downloads at test time, and a
// test that needs it skips with one line when it is absent.
package largeapi

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// EnvGitHubSpec names the file of GitHub's REST API description; `make test`
// sets it. Unset, GitHubSpecPath looks in the module's
// .cache/octokit, where `make github-spec` installs it.
const EnvGitHubSpec = "KUBEPACT_GITHUB_SPEC"

// defaultRel is where `make github-spec` puts the description, relative to
// the module root.
const defaultRel = ".cache/octokit/node_modules/@octokit/openapi/generated/api.github.com.json"

// GitHubSpecPath returns the path of GitHub's REST API description, or
// skips tb with one line saying how to install it.
func GitHubSpecPath(tb testing.TB) string {
	tb.Helper()
	path := os.Getenv(EnvGitHubSpec)
	if path == "" {
		root, err := moduleRoot()
		if err != nil {
			tb.Skipf("GitHub's REST spec not found (%v); run `make github-spec` or set %s", err, EnvGitHubSpec)
		}
		path = filepath.Join(root, defaultRel)
	}
	if _, err := os.Stat(path); err != nil {
		tb.Skipf("GitHub's REST spec not installed at %s; run `make github-spec` or set %s to api.github.com.json of npm @octokit/openapi", path, EnvGitHubSpec)
	}
	return path
}

// GitHubSpec returns the bytes of GitHub's REST API description, or skips tb.
func GitHubSpec(tb testing.TB) []byte {
	tb.Helper()
	path := GitHubSpecPath(tb)
	data, err := os.ReadFile(path)
	if err != nil {
		tb.Fatalf("read GitHub's REST spec: %v", err)
	}
	return data
}

// GitHubContract is the pacto.yaml of the bundle GitHubBundle makes: one
// openapi interface, api, whose spec is openapi.json.
const GitHubContract = `pactoVersion: "2.0"
service:
  name: github
  version: 1.0.0
interfaces:
  - name: api
    type: openapi
    ref: openapi.json
`

// GitHubBundle returns the files of a bundle serving GitHub's REST API
// description (pacto.yaml and openapi.json), or skips tb.
func GitHubBundle(tb testing.TB) map[string][]byte {
	tb.Helper()
	return map[string][]byte{"pacto.yaml": []byte(GitHubContract), "openapi.json": GitHubSpec(tb)}
}

// GitHubBundleDir writes GitHubBundle to a new temporary directory and
// returns it, or skips tb.
func GitHubBundleDir(tb testing.TB) string {
	tb.Helper()
	files := GitHubBundle(tb)
	dir := tb.TempDir()
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			tb.Fatal(err)
		}
	}
	return dir
}

// moduleRoot walks up from the working directory to the folder holding go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}
