// Package githubspec finds GitHub's REST API description (npm package
// @octokit/openapi, generated/api.github.com.json) for the tests and
// benchmarks that measure kubepact at GitHub's scale, and makes a bundle
// of it. The document is not in the repository: `make` installs the
// package under .cache/octokit, and KUBEPACT_GITHUB_SPEC names another
// copy. A test that needs it skips, in one line, when it is absent.
package githubspec

import (
	"os"
	"path/filepath"
	"testing"
)

// EnvVar names the document's path when it is not at the default place.
const EnvVar = "KUBEPACT_GITHUB_SPEC"

// DefaultPath is where `make` installs the document, from the repository
// root.
const DefaultPath = ".cache/octokit/node_modules/@octokit/openapi/generated/api.github.com.json"

// Path returns the document's path, or skips tb when there is none.
func Path(tb testing.TB) string {
	tb.Helper()
	if p := os.Getenv(EnvVar); p != "" {
		if _, err := os.Stat(p); err != nil {
			tb.Fatalf("%s=%s: %v", EnvVar, p, err)
		}
		return p
	}
	dir, err := os.Getwd()
	if err != nil {
		tb.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			p := filepath.Join(dir, DefaultPath)
			if _, err := os.Stat(p); err == nil {
				return p
			}
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	tb.Skipf("GitHub's REST spec is not installed (run make, or set %s to api.github.com.json of npm @octokit/openapi)", EnvVar)
	return ""
}

// Bundle returns the files of a bundle serving the document: pacto.yaml
// and openapi.json.
func Bundle(tb testing.TB) map[string][]byte {
	tb.Helper()
	data, err := os.ReadFile(Path(tb))
	if err != nil {
		tb.Fatal(err)
	}
	return map[string][]byte{
		"pacto.yaml": []byte(`pactoVersion: "2.0"
service:
  name: github
  version: 1.0.0
interfaces:
  - name: api
    type: openapi
    ref: openapi.json
`),
		"openapi.json": data,
	}
}
