// Command nodeimg makes and serves the images the real-node e2e back end
// (hack/realnode) runs, with no registry and no Docker:
//
//	nodeimg image -name localhost/pause:local -out pause.tar -file bin/nodeimg:/nodeimg -entrypoint /nodeimg,pause
//	nodeimg pause      # a Pod sandbox: blocks until SIGTERM/SIGINT, reaping children
//	nodeimg registry   # an in-memory OCI distribution registry on :5000
//
// image writes a one-layer docker-archive tarball (what `ctr images
// import` reads) from local files, with an /etc/passwd naming root and the
// nonroot user 65532. The same static binary is the entrypoint of the
// pause and registry images, so one build serves the three.
package main

import (
	"fmt"
	"os"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "nodeimg:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("name a mode: image, pause or registry")
	}
	switch args[0] {
	case "image":
		return buildImage(args[1:], os.Stdout)
	case "pause":
		pause()
		return nil
	case "registry":
		return serveRegistry(":5000")
	default:
		return fmt.Errorf("mode %q is not one of image, pause, registry", args[0])
	}
}
