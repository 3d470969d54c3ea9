package payload

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/kubepact/kubepact/bundle"
	"github.com/kubepact/kubepact/internal/openapitools"
)

// writeBundle writes files into a temporary bundle directory and reads it.
func writeBundle(t testing.TB, files map[string]string) *Contract {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, err := bundle.LoadDir(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	c, err := Read(t.Context(), b, openapitools.Shapes)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func jsonNum(s string) any { return json.Number(s) }
