package source_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-logr/logr/funcr"

	"github.com/kubepact/kubepact/fleetgraph/source"
)

const (
	cacheGoodSpec = "openapi: 3.0.3\ninfo: {title: s, version: 1.0.0}\npaths:\n  /a:\n    get:\n      responses:\n        \"200\": {$ref: \"#/components/responses/R\"}\ncomponents:\n  responses:\n    R: {description: ok}\n"
	cacheBadSpec  = "openapi: 3.0.3\ninfo: {title: s, version: 1.0.0}\npaths:\n  /a:\n    get:\n      responses:\n        \"200\": {$ref: \"#/components/responses/Missing\"}\ncomponents:\n  responses:\n    R: {description: ok}\n"
)

// cacheFleet writes bundles alpha (valid), beta (invalid spec) and gamma
// (depends on alpha) under a new directory.
func cacheFleet(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for name, spec := range map[string]string{"alpha": cacheGoodSpec, "beta": cacheBadSpec, "gamma": cacheGoodSpec} {
		y := "pactoVersion: \"2.0\"\nservice: {name: " + name + ", version: 1.0.0, owner: {team: t}}\ninterfaces:\n  - {name: http, type: openapi, ref: interfaces/openapi.yaml, visibility: internal}\n"
		if name == "gamma" {
			y += "dependencies:\n  - {name: alpha, ref: oci://registry.example.com/alpha, required: true, compatibility: ^1.0.0}\n"
		}
		writeFile(t, filepath.Join(dir, name, "pacto.yaml"), y)
		writeFile(t, filepath.Join(dir, name, "interfaces", "openapi.yaml"), spec)
	}
	return dir
}

func writeFile(t *testing.T, path, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// startAnswers starts over dir with a fresh LocalSource (nothing in
// memory: a process start) and returns what it answered, as JSON: every
// revision (identity, verdict, findings, edges) and the limitations.
func startAnswers(t *testing.T, dir, cacheDir string, log *[]string) []byte {
	t.Helper()
	l := &source.LocalSource{Dir: dir, CacheDir: cacheDir, Log: funcr.New(func(_, args string) { *log = append(*log, args) }, funcr.Options{})}
	c, err := l.Collect(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal([]any{c.Revisions, c.Limitations, c.Partial})
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

func cacheFile(t *testing.T, cacheDir string) string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(cacheDir, "local-*.json"))
	if len(m) != 1 {
		t.Fatalf("cache files %v, want one", m)
	}
	return m[0]
}

// TestLocalCacheWarmStart: a start with the cache a first start wrote
// answers byte for byte what a start without any cache answers, logs
// nothing, and leaves the file as it was (nothing to learn).
func TestLocalCacheWarmStart(t *testing.T) {
	dir, cacheDir := cacheFleet(t), t.TempDir()
	var log []string
	none := startAnswers(t, dir, "", &log)
	cold := startAnswers(t, dir, cacheDir, &log)
	file := cacheFile(t, cacheDir)
	written, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(file)
	warm := startAnswers(t, dir, cacheDir, &log)
	if !bytes.Equal(cold, none) || !bytes.Equal(warm, none) {
		t.Errorf("answers differ:\nno cache %s\ncold     %s\nwarm     %s", none, cold, warm)
	}
	if !strings.Contains(string(none), `"valid":false`) || !strings.Contains(string(none), `"valid":true`) {
		t.Errorf("the fleet must hold a valid and an invalid bundle: %s", none)
	}
	if len(log) != 0 {
		t.Errorf("logged %q", log)
	}
	after, _ := os.ReadFile(file)
	st2, _ := os.Stat(file)
	if !bytes.Equal(after, written) || !st2.ModTime().Equal(st.ModTime()) {
		t.Errorf("a warm start over unchanged bundles rewrote the cache")
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("cache file mode %v, want 0600", st.Mode().Perm())
	}
}

// TestLocalCacheChangedBundle: a bundle whose content changed since the
// cache was written is validated again (valid to invalid, invalid to
// valid, and a file added), and its identity computed again: the warm
// start answers what a start without a cache answers.
func TestLocalCacheChangedBundle(t *testing.T) {
	dir, cacheDir := cacheFleet(t), t.TempDir()
	var log []string
	startAnswers(t, dir, cacheDir, &log)
	writeFile(t, filepath.Join(dir, "alpha", "interfaces", "openapi.yaml"), cacheBadSpec)
	writeFile(t, filepath.Join(dir, "beta", "interfaces", "openapi.yaml"), cacheGoodSpec)
	writeFile(t, filepath.Join(dir, "gamma", "README.md"), "gamma\n")
	warm := startAnswers(t, dir, cacheDir, &log)
	none := startAnswers(t, dir, "", &log)
	if !bytes.Equal(warm, none) {
		t.Errorf("after a change, a warm start answers\n%s\nand a start without a cache\n%s", warm, none)
	}
	again := startAnswers(t, dir, cacheDir, &log)
	if !bytes.Equal(again, none) {
		t.Errorf("the rewritten cache answers\n%s\nwant\n%s", again, none)
	}
	if len(log) != 0 {
		t.Errorf("logged %q", log)
	}
}

// TestLocalCacheHostileFile: a cache file that is garbage, too large, of
// another format or build, cut short, or altered is ignored with one log
// line and rewritten; the start answers what it answers without a cache.
func TestLocalCacheHostileFile(t *testing.T) {
	dir := cacheFleet(t)
	var none []string
	want := startAnswers(t, dir, "", &none)
	good := func(t *testing.T) (string, []byte) {
		cacheDir := t.TempDir()
		var log []string
		startAnswers(t, dir, cacheDir, &log)
		f := cacheFile(t, cacheDir)
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		return f, raw
	}
	for name, spoil := range map[string]func(f string, raw []byte) error{
		"garbage": func(f string, _ []byte) error { return os.WriteFile(f, []byte("\x00\xffnot a cache"), 0o600) },
		"empty":   func(f string, _ []byte) error { return os.WriteFile(f, nil, 0o600) },
		"huge":    func(f string, _ []byte) error { return os.Truncate(f, 65<<20) },
		"other format": func(f string, raw []byte) error {
			return os.WriteFile(f, bytes.Replace(raw, []byte("/v1 "), []byte("/v0 "), 1), 0o600)
		},
		"other build": func(f string, raw []byte) error {
			head, body, _ := bytes.Cut(raw, []byte("\n"))
			fs := strings.Fields(string(head))
			return os.WriteFile(f, []byte(fs[0]+" 00000000000000000000000000000000 "+fs[2]+"\n"+string(body)), 0o600)
		},
		"cut short": func(f string, raw []byte) error { return os.WriteFile(f, raw[:len(raw)-10], 0o600) },
		"altered verdict": func(f string, raw []byte) error {
			return os.WriteFile(f, bytes.Replace(raw, []byte(`"valid":false`), []byte(`"valid":true`), 1), 0o600)
		},
		"a directory": func(f string, _ []byte) error {
			if err := os.Remove(f); err != nil {
				return err
			}
			return os.Mkdir(f, 0o700)
		},
	} {
		t.Run(name, func(t *testing.T) {
			f, raw := good(t)
			if err := spoil(f, raw); err != nil {
				t.Fatal(err)
			}
			var log []string
			got := startAnswers(t, dir, filepath.Dir(f), &log)
			if !bytes.Equal(got, want) {
				t.Errorf("answers\n%s\nwant\n%s", got, want)
			}
			if len(log) == 0 || !strings.Contains(log[0], "Fleet cache file ignored") {
				t.Errorf("log %q, want a line saying the file was ignored", log)
			}
			if name == "a directory" {
				return // not replaceable by a file; the start goes on without it
			}
			if len(log) != 1 {
				t.Errorf("log %q, want one line", log)
			}
			log = nil
			if got := startAnswers(t, dir, filepath.Dir(f), &log); !bytes.Equal(got, want) || len(log) != 0 {
				t.Errorf("after the rewrite: log %q, answers\n%s", log, got)
			}
		})
	}
}
