// Command image builds kubepact's container image without Docker: the same
// image the Dockerfile describes (a static binary at /kubepact and the slim
// sidecar build at /kubepact-sidecar, run as the numeric nonroot user
// 65532, no shell), appended onto an empty base with
// go-containerregistry and written as an OCI image layout.
//
// The one difference from `docker build` is the base: the Dockerfile starts
// from distroless static (pinned by digest), which also carries tzdata,
// root and nobody entries and its own CA bundle; here no base image can be
// pulled, so the layer carries the nonroot passwd and group entries and,
// with -ca-certs, the build machine's CA bundle.
//
//	go run ./hack/image -binary bin/kubepact-linux-amd64 -sidecar-binary bin/kubepact-sidecar-linux-amd64 -version v1.2.3 -out bin/image
//	go run ./hack/image ... -out bin/image -push registry.example.com/kubepact:v1.2.3
//
// With -push it then copies the image from the layout to that registry
// (oras-go; credentials from the Docker config, -plain-http for a registry
// without TLS) and prints the digest to install it by (`--set
// image.digest=sha256:…`). `make image` builds the binary and runs this;
// `make image-push IMAGE_REPO=…` pushes too. Its test (go test
// ./hack/image) builds the image in process, pushes it to a registry on
// loopback and checks what is inside.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
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
	fs.StringVar(&opts.SidecarBinary, "sidecar-binary", "", "the slim sidecar build of the same source (-tags sidecaronly), same architecture, to put at /kubepact-sidecar (optional; injected sidecars run it)")
	fs.StringVar(&opts.Version, "version", "", "the version the binary was built with (-X main.version); the version label")
	fs.StringVar(&opts.Revision, "revision", "", "VCS revision label (optional)")
	fs.StringVar(&opts.Source, "source", DefaultSource, "source repository label")
	fs.StringVar(&opts.CACertificates, "ca-certs", "", "PEM CA bundle to place at /etc/ssl/certs/ca-certificates.crt (optional)")
	epoch := fs.Int64("source-date-epoch", 0, "creation time in Unix seconds (the last commit's time for reproducible builds)")
	out := fs.String("out", "", "directory to write the OCI image layout to (replaced if it is one)")
	tag := fs.String("tag", "", "reference name annotated on the image in the layout (default: the version)")
	var push PushOptions
	fs.StringVar(&push.To, "push", "", "after writing the layout, push the image to host[:port]/repository[:tag] (tag default: -tag)")
	fs.BoolVar(&push.PlainHTTP, "plain-http", false, "with -push: talk plain HTTP to the registry (a trusted network only)")
	fs.StringVar(&push.DockerConfig, "docker-config", "", "with -push: Docker config file holding the registry's credentials (default ~/.docker/config.json)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q: every input is a flag", fs.Args())
	}
	if *out == "" {
		return fmt.Errorf("-out is required: the directory of the OCI image layout")
	}
	if push.To == "" && (push.PlainHTTP || push.DockerConfig != "") {
		return fmt.Errorf("-plain-http and -docker-config apply to a push: give -push host[:port]/repository too")
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
	if _, err := fmt.Fprintf(stdout, "%s %s\n", *out, digest); err != nil || push.To == "" {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	pushed, err := Push(ctx, *out, *tag, &push)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "pushed %s:%s@%s\ninstall it with: --set image.repository=%s --set image.digest=%s\n", pushed.Repository, pushed.Tag, pushed.Digest, pushed.Repository, pushed.Digest)
	return err
}
