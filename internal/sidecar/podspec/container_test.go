package podspec

import (
	"slices"
	"testing"

	"github.com/kubepact/kubepact/internal/sidecar"
)

// TestContainerRunsTheSlimBuild: the injected container runs the slim
// sidecar build by path, with `kubepact sidecar`'s arguments, so the
// image's entrypoint (the full binary) is not what an injected Pod runs.
func TestContainerRunsTheSlimBuild(t *testing.T) {
	cfg := sidecar.DefaultConfig()
	cfg.Bundle, cfg.Upstream = "/var/run/kubepact/bundle/bundle.tar.gz", "http://127.0.0.1:8080"
	c := Container(cfg, ContainerSpec{Name: "kubepact", Image: "example.invalid/kubepact:v1", RunAsUser: 65532})
	if !slices.Equal(c.Command, []string{"/kubepact-sidecar"}) {
		t.Errorf("command %q, want [/kubepact-sidecar]", c.Command)
	}
	if !slices.Equal(c.Args, cfg.Args()) || len(c.Args) == 0 || c.Args[0] != "sidecar" {
		t.Errorf("args %q, want the config's %q starting with sidecar", c.Args, cfg.Args())
	}
}
