package main

import (
	"archive/tar"
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// The image written is what `ctr images import` is given: read it back
// as a docker-archive and check its config and its one layer's files.
func TestBuildImage(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "tool")
	if err := os.WriteFile(bin, []byte("#!/bin/true\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "img.tar")
	var stdout bytes.Buffer
	err := buildImage([]string{"-name", "localhost/tool:local", "-out", out, "-file", bin + ":/bin/tool",
		"-link", "/bin/sh:tool", "-entrypoint", "/bin/tool,serve", "-user", "65532:65532"}, &stdout)
	if err != nil {
		t.Fatal(err)
	}
	if got := stdout.String(); !strings.HasPrefix(got, "localhost/tool:local sha256:") {
		t.Errorf("printed %q, want the reference and the digest", got)
	}
	tag, err := name.NewTag("localhost/tool:local")
	if err != nil {
		t.Fatal(err)
	}
	img, err := tarball.ImageFromPath(out, &tag)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"/bin/tool", "serve"}, cf.Config.Entrypoint); diff != "" {
		t.Errorf("entrypoint (-want +got):\n%s", diff)
	}
	if cf.Config.User != "65532:65532" || cf.OS != "linux" || cf.Architecture != "amd64" {
		t.Errorf("user %q, platform %s/%s; want 65532:65532 on linux/amd64", cf.Config.User, cf.OS, cf.Architecture)
	}
	layers, err := img.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("layers %d (%v), want 1", len(layers), err)
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	got := map[string]string{}
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(tr)
		got[h.Name] = string(h.Typeflag) + " " + h.Linkname + string(body)
	}
	want := map[string]string{
		"tmp/": "5 ", "etc/": "5 ", "proc/": "5 ", "sys/": "5 ", "dev/": "5 ", "bin/": "5 ",
		"bin/tool":   "0 #!/bin/true\n",
		"bin/sh":     "2 tool",
		"etc/passwd": "0 " + passwd,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("layer (-want +got):\n%s", diff)
	}
}

func TestBuildImageRefusesBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"-out", "x.tar"},
		{"-name", "localhost/x:local", "-out", filepath.Join(t.TempDir(), "x.tar"), "-file", "/nonexistent/file:/x"},
		{"-name", "localhost/x:local", "-out", "x.tar", "-file", "nocolon"},
	} {
		if err := buildImage(args, io.Discard); err == nil {
			t.Errorf("buildImage(%q) succeeded, want an error", args)
		}
	}
}
