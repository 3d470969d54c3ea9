//go:build e2e

package e2e

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestReadmeBlocks needs no cluster: every block the story runs is in
// README.md, splits into commands, and names only placeholders the suite
// fills — so a README edit that the story could not run fails here first.
func TestReadmeBlocks(t *testing.T) {
	for _, name := range []string{"image", "install", "reach", "inject", "reach-sidecar", "upgrade", "uninstall"} {
		cmds := commands(readmeBlock(t, name))
		if len(cmds) == 0 {
			t.Errorf("README block %s has no command", name)
		}
		for _, c := range cmds {
			for _, p := range placeholder.FindAllString(c, -1) {
				if !slices.Contains(placeholders, p) {
					t.Errorf("README block %s: `%s` has placeholder %s, which the suite does not fill", name, oneLine(c), p)
				}
			}
		}
	}
}

func TestCommands(t *testing.T) {
	got := commands("# a comment\nkubectl get ns\n\nhelm install a b \\\n  --set x=1   # trailing\n  # indented comment\nexport T=$(echo x)\n")
	want := []string{"kubectl get ns", "helm install a b \\\n  --set x=1   # trailing", "export T=$(echo x)"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("commands (-want +got):\n%s", diff)
	}
	if got := oneLine(want[1]); got != "helm install a b --set x=1 # trailing" {
		t.Errorf("oneLine = %q", got)
	}
}

func TestParseClaudeAdd(t *testing.T) {
	cfg := parseClaudeAdd(t, []string{"mcp", "add", "--transport", "http", "kubepact", "http://127.0.0.1:8585/mcp", "--header", "Authorization: Bearer abc"})
	if cfg.url != "http://127.0.0.1:8585/mcp" || cfg.headers["Authorization"] != "Bearer abc" {
		t.Errorf("parseClaudeAdd = %+v", cfg)
	}
}
