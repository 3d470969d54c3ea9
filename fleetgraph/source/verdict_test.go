package source_test

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/kubepact/kubepact/fleetgraph"
	"github.com/kubepact/kubepact/fleetgraph/source"
)

// TestLocalRecollectVerdicts: a re-read takes the verdict of a bundle
// whose content is unchanged from the last read, and validates again one
// whose content changed, either way (valid to invalid and back).
func TestLocalRecollectVerdicts(t *testing.T) {
	const good = "openapi: 3.0.3\ninfo: {title: s, version: 1.0.0}\npaths:\n  /a:\n    get:\n      responses:\n        \"200\": {$ref: \"#/components/responses/R\"}\ncomponents:\n  responses:\n    R: {description: ok}\n"
	const bad = "openapi: 3.0.3\ninfo: {title: s, version: 1.0.0}\npaths:\n  /a:\n    get:\n      responses:\n        \"200\": {$ref: \"#/components/responses/Missing\"}\ncomponents:\n  responses:\n    R: {description: ok}\n"
	dir := t.TempDir()
	spec := func(name string) string { return filepath.Join(dir, name, "interfaces", "openapi.yaml") }
	write := func(path, s string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for name, s := range map[string]string{"alpha": good, "beta": bad} {
		write(filepath.Join(dir, name, "pacto.yaml"), "pactoVersion: \"2.0\"\nservice: {name: "+name+", version: 1.0.0, owner: {team: t}}\ninterfaces:\n  - {name: http, type: openapi, ref: interfaces/openapi.yaml, visibility: internal}\n")
		write(spec(name), s)
	}
	l := &source.LocalSource{Dir: dir}
	collect := func() map[string]*fleetgraph.Verdict {
		t.Helper()
		c, err := l.Collect(t.Context())
		if err != nil || len(c.Revisions) != 2 {
			t.Fatalf("collect: %v, %+v", err, c)
		}
		out := map[string]*fleetgraph.Verdict{}
		for _, r := range c.Revisions {
			out[r.Name] = r.Verdict()
		}
		return out
	}
	check := func(round string, got map[string]*fleetgraph.Verdict, wantValid map[string]bool) {
		t.Helper()
		for name, valid := range wantValid {
			v := got[name]
			if v == nil || v.Valid != valid || valid != (len(v.Findings) == 0) {
				t.Errorf("%s: %s: verdict %+v, want valid=%v", round, name, v, valid)
			}
		}
	}
	first := collect()
	check("first read", first, map[string]bool{"alpha": true, "beta": false})
	if second := collect(); !reflect.DeepEqual(second, first) {
		t.Errorf("unchanged re-read: verdicts %+v, first read %+v", second, first)
	}
	write(spec("alpha"), bad)
	write(spec("beta"), good)
	check("after both specs changed", collect(), map[string]bool{"alpha": false, "beta": true})
	write(spec("alpha"), good)
	check("after alpha changed back", collect(), map[string]bool{"alpha": true, "beta": true})
}
