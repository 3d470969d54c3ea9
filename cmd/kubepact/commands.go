//go:build !sidecaronly

package main

import "github.com/spf13/cobra"

// shapeCommands are the subcommands beside sidecar and version: every
// shape and bundle command of the full binary. A build with -tags
// sidecaronly (commands_sidecaronly.go) leaves them, and the packages only
// they import (Kubernetes, controller-runtime, the fleet, authoring), out.
func shapeCommands() []*cobra.Command {
	return []*cobra.Command{
		newCheckCommand(),
		newLockCommand(),
		newMCPCommand(),
		newOperatorCommand(),
		newPackCommand(),
		newPushCommand(),
	}
}
