//go:build sidecaronly

package main

import (
	"fmt"

	"github.com/spf13/cobra"
)

// fullOnly are the subcommands of the full binary that the slim sidecar
// build leaves out.
var fullOnly = []string{"check", "lock", "mcp", "operator", "pack", "push"}

// shapeCommands, in the slim sidecar build (go build -tags sidecaronly
// ./cmd/kubepact; `make build` writes it as bin/kubepact-sidecar), are
// hidden stand-ins for the full binary's other commands that only say
// where they are: that binary runs `sidecar` and `version`, from the same
// source as the full one, and links none of the other shapes' libraries
// (Kubernetes, controller-runtime, the fleet's informers), so an injected
// sidecar's process carries only what it runs (issue 27).
func shapeCommands() []*cobra.Command {
	cmds := make([]*cobra.Command, 0, len(fullOnly))
	for _, name := range fullOnly {
		cmds = append(cmds, &cobra.Command{
			Use:                name,
			Hidden:             true,
			DisableFlagParsing: true,
			RunE: func(*cobra.Command, []string) error {
				return &exitError{code: 2, msg: fmt.Sprintf("%q is not in this build: this is the slim sidecar build of kubepact, which runs only \"sidecar\" and \"version\"; run %q with the full kubepact binary (/kubepact in the image)", name, "kubepact "+name)}
			},
		})
	}
	return cmds
}
