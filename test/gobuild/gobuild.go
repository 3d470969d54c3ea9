// Package gobuild builds kubepact's commands for tests the way a release
// is built (make build, make image, make demo and the Dockerfile): static
// (CGO_ENABLED=0), stripped (-ldflags "-s -w") and without build paths
// (-trimpath). The binary a test runs is then the one users run, and every
// test that builds one shares one set of compiled packages in the build
// cache with make build. A release build carries kubepact's patches to the
// go-sdk and segmentio/encoding (hack/sdkpatch), as make build does.
//
// It imports nothing from kubepact.
package gobuild

import (
	"os"
	"os/exec"
	"strings"
)

// LDFlags are the linker flags of a release before any -X stamp: no
// symbol table, no DWARF.
const LDFlags = "-s -w"

// Flags are the go build flags of a release, -ldflags aside.
var Flags = []string{"-trimpath"}

// Env is what a release build adds to the environment.
var Env = []string{"CGO_ENABLED=0"}

// sdkpatch is the command that runs a go command with the patches
// (hack/sdkpatch), named by import path so that it resolves from any
// directory of the module.
const sdkpatch = "github.com/kubepact/kubepact/hack/sdkpatch"

// Command returns the go build command that writes the package pkg (a
// path relative to dir, such as ./cmd/kubepact, or an import path) to out
// as a release build would, with the patches and extra linker flags
// (-X main.version=…) after the release's. dir "" is the current
// directory.
func Command(dir, out, pkg string, ldflags ...string) *exec.Cmd {
	cmd := exec.Command("go", append([]string{"run", sdkpatch, "-exec", "go"}, buildArgs(out, pkg, ldflags)...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), Env...)
	return cmd
}

// Stock is Command without the patches: the build of a go-sdk server
// that kubepact is measured against (test/sidecarfloor). It is built
// outside any workspace, the patched one that make test runs in included.
func Stock(dir, out, pkg string, ldflags ...string) *exec.Cmd {
	cmd := exec.Command("go", buildArgs(out, pkg, ldflags)...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), Env...), "GOWORK=off")
	return cmd
}

func buildArgs(out, pkg string, ldflags []string) []string {
	args := append([]string{"build"}, Flags...)
	return append(args, "-ldflags", strings.Join(append([]string{LDFlags}, ldflags...), " "), "-o", out, pkg)
}

// Tags adds build tags (such as sidecaronly, the slim sidecar build) to
// a command from Command or Stock: to go build itself, not to the go run
// that applies the patches.
func Tags(cmd *exec.Cmd, tags ...string) *exec.Cmd {
	for i, arg := range cmd.Args {
		if arg == "build" {
			cmd.Args = append(cmd.Args[:i+1:i+1], append([]string{"-tags", strings.Join(tags, ",")}, cmd.Args[i+1:]...)...)
			return cmd
		}
	}
	panic("gobuild.Tags: not a go build command: " + strings.Join(cmd.Args, " "))
}
