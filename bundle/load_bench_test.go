package bundle

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkLoadDir compares loading a bundle directory through os.DirFS
// (paths, as before) with loading it through an os.Root handle (as now),
// on a bundle of 200 small files in 10 folders.
func BenchmarkLoadDir(b *testing.B) {
	dir := b.TempDir()
	y := "pactoVersion: \"2.0\"\nservice:\n  name: bench\n  version: 1.0.0\n"
	if err := os.WriteFile(filepath.Join(dir, "pacto.yaml"), []byte(y), 0o644); err != nil {
		b.Fatal(err)
	}
	for i := range 200 {
		p := filepath.Join(dir, fmt.Sprintf("docs%d", i%10), fmt.Sprintf("f%03d.md", i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("# a doc\n\nsome words\n"), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("os.DirFS", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := loadFS(os.DirFS(dir), dir, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("os.Root", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := LoadDir(dir, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
}
