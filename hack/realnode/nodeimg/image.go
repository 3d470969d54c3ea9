package main

import (
	"archive/tar"
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// pairs is a repeatable SRC:DST flag.
type pairs []string

func (p *pairs) String() string { return strings.Join(*p, ",") }

func (p *pairs) Set(s string) error {
	if a, b, ok := strings.Cut(s, ":"); !ok || a == "" || b == "" {
		return fmt.Errorf("%q is not FROM:TO", s)
	}
	*p = append(*p, s)
	return nil
}

const passwd = "root:x:0:0:root:/root:/bin/sh\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n"

// buildImage writes the image the flags describe and prints its reference
// and digest.
func buildImage(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("nodeimg image", flag.ContinueOnError)
	var files, links pairs
	ref := fs.String("name", "", "image reference, e.g. localhost/pause:local")
	out := fs.String("out", "", "docker-archive tarball to write")
	entrypoint := fs.String("entrypoint", "", "entrypoint, comma separated")
	user := fs.String("user", "", "user the image runs as (e.g. 65532:65532)")
	fs.Var(&files, "file", "SRC:DST: a local file copied to DST, mode 0755 (repeatable)")
	fs.Var(&links, "link", "DST:TARGET: a symbolic link (repeatable)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *ref == "" || *out == "" {
		return fmt.Errorf("-name and -out are required")
	}
	tag, err := name.ParseReference(*ref)
	if err != nil {
		return fmt.Errorf("-name %q: %w", *ref, err)
	}
	layerTar, err := layer(files, links)
	if err != nil {
		return err
	}
	l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar)), nil
	})
	if err != nil {
		return fmt.Errorf("making the layer: %w", err)
	}
	img, err := mutate.AppendLayers(empty.Image, l)
	if err != nil {
		return fmt.Errorf("appending the layer: %w", err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return fmt.Errorf("reading the image config: %w", err)
	}
	cf = cf.DeepCopy()
	cf.Architecture, cf.OS = "amd64", "linux"
	cf.Config = v1.Config{User: *user, Env: []string{"PATH=/bin:/usr/bin"}}
	if *entrypoint != "" {
		cf.Config.Entrypoint = strings.Split(*entrypoint, ",")
	}
	if img, err = mutate.ConfigFile(img, cf); err != nil {
		return fmt.Errorf("setting the image config: %w", err)
	}
	if err := tarball.WriteToFile(*out, tag, img); err != nil {
		return fmt.Errorf("writing %s: %w", *out, err)
	}
	d, err := img.Digest()
	if err != nil {
		return fmt.Errorf("digest: %w", err)
	}
	_, err = fmt.Fprintln(stdout, *ref, d)
	return err
}

// layer is the tar of the image's one layer: the directories every
// container expects, the files, the links and /etc/passwd.
func layer(files, links pairs) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	epoch := time.Unix(0, 0)
	dirs := map[string]bool{}
	write := func(h *tar.Header, body []byte) error {
		h.Name = strings.TrimPrefix(h.Name, "/")
		h.ModTime = epoch
		parts := strings.Split(h.Name, "/")
		for i := 1; i < len(parts); i++ {
			d := strings.Join(parts[:i], "/") + "/"
			if dirs[d] {
				continue
			}
			dirs[d] = true
			if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: d, Mode: 0o755, ModTime: epoch}); err != nil {
				return fmt.Errorf("layer: %w", err)
			}
		}
		if err := tw.WriteHeader(h); err != nil {
			return fmt.Errorf("layer: %s: %w", h.Name, err)
		}
		_, err := tw.Write(body)
		return err
	}
	for _, d := range []string{"tmp", "etc", "proc", "sys", "dev"} {
		if err := write(&tar.Header{Typeflag: tar.TypeDir, Name: d + "/", Mode: 0o755}, nil); err != nil {
			return nil, err
		}
		dirs[d+"/"] = true
	}
	for _, f := range files {
		src, dst, _ := strings.Cut(f, ":")
		b, err := os.ReadFile(src)
		if err != nil {
			return nil, fmt.Errorf("-file %s: %w", f, err)
		}
		if err := write(&tar.Header{Typeflag: tar.TypeReg, Name: dst, Mode: 0o755, Size: int64(len(b))}, b); err != nil {
			return nil, err
		}
	}
	for _, l := range links {
		dst, target, _ := strings.Cut(l, ":")
		if err := write(&tar.Header{Typeflag: tar.TypeSymlink, Name: dst, Linkname: target, Mode: 0o777}, nil); err != nil {
			return nil, err
		}
	}
	if err := write(&tar.Header{Typeflag: tar.TypeReg, Name: "etc/passwd", Mode: 0o644, Size: int64(len(passwd))}, []byte(passwd)); err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("layer: %w", err)
	}
	return buf.Bytes(), nil
}
