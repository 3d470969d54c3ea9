// Package gobuild builds kubepact's commands for tests the way a release
// is built (make build, make image, make demo and the Dockerfile): static
// (CGO_ENABLED=0), stripped (-ldflags "-s -w") and without build paths
// (-trimpath). The binary a test runs is then the one users run, and every
// test that builds one shares one set of compiled packages in the build
// cache with make build.
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

// Command returns the go build command that writes the package pkg (a
// path relative to dir, such as ./cmd/kubepact, or an import path) to out
// as a release build would, with extra linker flags (-X main.version=…)
// after the release's. dir "" is the current directory.
func Command(dir, out, pkg string, ldflags ...string) *exec.Cmd {
	args := append([]string{"build"}, Flags...)
	args = append(args, "-ldflags", strings.Join(append([]string{LDFlags}, ldflags...), " "), "-o", out, pkg)
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), Env...)
	return cmd
}
