package invoke

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/kubepact/kubepact/bundle"
	"github.com/kubepact/kubepact/internal/openapitools"
)

// projectSpec projects one OpenAPI document through the public way in:
// a bundle directory whose pacto.yaml names it as the openapi interface
// iface, loaded and projected as the commands do.
func projectSpec(t testing.TB, name, file string, spec []byte, opts *openapitools.Options) (*openapitools.Capability, error) {
	t.Helper()
	return projectSpecs(t, []iface{{name: name, file: file, data: spec}}, nil, opts)
}

// iface is one openapi interface of a test bundle.
type iface struct {
	name, file string
	data       []byte
}

// projectSpecs projects a bundle of several openapi interfaces, in order;
// other holds more files of the bundle (documents they reference).
func projectSpecs(t testing.TB, ifaces []iface, other map[string][]byte, opts *openapitools.Options) (*openapitools.Capability, error) {
	t.Helper()
	dir := t.TempDir()
	for name, data := range other {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	contract := "pactoVersion: \"2.0\"\nservice: {name: svc, version: 1.0.0}\ninterfaces:\n"
	for _, in := range ifaces {
		contract += "  - {name: " + in.name + ", type: openapi, ref: " + in.file + "}\n"
		if err := os.WriteFile(filepath.Join(dir, in.file), in.data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "pacto.yaml"), []byte(contract), 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := bundle.LoadDir(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	return openapitools.Project(t.Context(), b, opts)
}

// testdataFiles reads every document of ../testdata, the projection's own
// test documents, some of which reference others.
func testdataFiles(t testing.TB) map[string][]byte {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join("..", "testdata"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, e := range entries {
		if !e.IsDir() {
			out[e.Name()] = testdata(t, e.Name())
		}
	}
	return out
}

// testdata reads ../testdata/<file>.
func testdata(t testing.TB, file string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// projectTestdata projects ../testdata/<file> as the one interface name,
// in a bundle holding the other test documents too.
func projectTestdata(t testing.TB, name, file string, opts *openapitools.Options) *openapitools.Capability {
	t.Helper()
	c, err := projectSpecs(t, []iface{{name: name, file: file, data: testdata(t, file)}}, testdataFiles(t), opts)
	if err != nil {
		t.Fatalf("project %s: %v", file, err)
	}
	return c
}

// projectStyles projects testdata/styles.yaml, the serialization styles.
func projectStyles(t *testing.T, opts *openapitools.Options) *openapitools.Capability {
	t.Helper()
	return projectTestdata(t, "styles", "styles.yaml", opts)
}

// projectDir loads and projects a bundle directory.
func projectDir(t *testing.T, dir string, opts *openapitools.Options) *openapitools.Capability {
	t.Helper()
	b, err := bundle.LoadDir(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	c, err := openapitools.Project(t.Context(), b, opts)
	if err != nil {
		t.Fatalf("Project: %v", err)
	}
	return c
}

// catalogCopy copies the catalog example into a temporary directory.
func catalogCopy(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS("../../../examples/bundles/catalog")); err != nil {
		t.Fatal(err)
	}
	return dir
}

func toolNames(c *openapitools.Capability) []string {
	var out []string
	for _, tl := range c.Tools {
		out = append(out, tl.Name)
	}
	return out
}

func withheldBy(c *openapitools.Capability, code string) map[string]string {
	out := map[string]string{}
	for _, w := range c.Withheld {
		if w.Code == code {
			out[w.Name] = w.Reason
		}
	}
	return out
}
