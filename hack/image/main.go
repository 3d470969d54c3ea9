// Command image builds kubepact's container image without Docker: the same
// image the Dockerfile describes (a static binary at /kubepact, run as the
// numeric nonroot user 65532, no shell), appended onto an empty base with
// go-containerregistry and written as an OCI image layout.
//
// The one difference from `docker build` is the base: the Dockerfile starts
// from distroless static (pinned by digest), which also carries tzdata,
// root and nobody entries and its own CA bundle; here no base image can be
// pulled, so the layer carries the nonroot passwd and group entries and,
// with -ca-certs, the build machine's CA bundle.
//
//	go run ./hack/image -binary bin/kubepact-linux-amd64 -version v1.2.3 -out bin/image
//
// `make image` builds the binary and runs this. Its test (go test
// ./hack/image) builds the image in process, pushes it to a registry on
// loopback and checks what is inside.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"time"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("image", flag.ContinueOnError)
	fs.SetOutput(os.Stderr)
	var opts Options
	fs.StringVar(&opts.Binary, "binary", "", "static Linux kubepact binary (CGO_ENABLED=0) to put at /kubepact")
	fs.StringVar(&opts.Version, "version", "", "the version the binary was built with (-X main.version); the version label")
	fs.StringVar(&opts.Revision, "revision", "", "VCS revision label (optional)")
	fs.StringVar(&opts.Source, "source", DefaultSource, "source repository label")
	fs.StringVar(&opts.CACertificates, "ca-certs", "", "PEM CA bundle to place at /etc/ssl/certs/ca-certificates.crt (optional)")
	epoch := fs.Int64("source-date-epoch", 0, "creation time in Unix seconds (the last commit's time for reproducible builds)")
	out := fs.String("out", "", "directory to write the OCI image layout to (replaced if it is one)")
	tag := fs.String("tag", "", "reference name annotated on the image in the layout (default: the version)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q: every input is a flag", fs.Args())
	}
	if *out == "" {
		return fmt.Errorf("-out is required: the directory of the OCI image layout")
	}
	if *epoch < 0 {
		return fmt.Errorf("-source-date-epoch %d must be Unix seconds, 0 or more", *epoch)
	}
	opts.Created = time.Unix(*epoch, 0)
	if *tag == "" {
		*tag = opts.Version
	}
	img, err := Build(&opts)
	if err != nil {
		return err
	}
	if err := WriteLayout(*out, img, *tag); err != nil {
		return err
	}
	digest, err := img.Digest()
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "%s %s\n", *out, digest)
	return err
}
