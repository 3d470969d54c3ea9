//go:build !sidecaronly

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// readmeBlock returns the command lines of the README's code block that
// follows the marker <!-- readme-test: NAME -->, as a user copies them.
func readmeBlock(t *testing.T, name string) []string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(repoRoot(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	marker := "<!-- readme-test: " + name + " -->"
	_, rest, ok := strings.Cut(string(raw), marker+"\n")
	if !ok {
		t.Fatalf("README.md has no %s marker", marker)
	}
	sc := bufio.NewScanner(strings.NewReader(rest))
	if !sc.Scan() || !strings.HasPrefix(sc.Text(), "```") {
		t.Fatalf("the README's %s marker is not followed by a code block", marker)
	}
	var lines []string
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "```") {
			return lines
		}
		if strings.TrimSpace(line) != "" {
			lines = append(lines, line)
		}
	}
	t.Fatalf("the README's %s code block is not closed", marker)
	return nil
}

// TestReadmeLockLines runs the README's three `kubepact lock` lines, as
// written and in order, in a directory holding a copy of the example:
// the lock written to a file, a server held to it, the lock written into
// the bundle.
func TestReadmeLockLines(t *testing.T) {
	lines := readmeBlock(t, "lock")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "kubepact lock ") || !strings.HasPrefix(lines[1], "kubepact mcp ") || !strings.HasPrefix(lines[2], "kubepact lock ") {
		t.Fatalf("the README's lock block is %q; want lock, mcp, lock", lines)
	}
	work := t.TempDir()
	if err := os.CopyFS(filepath.Join(work, "examples", "bundles", "catalog"), os.DirFS(filepath.Join(repoRoot(t), "examples", "bundles", "catalog"))); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "PATH="+filepath.Dir(kubepactBin)+string(os.PathListSeparator)+os.Getenv("PATH"),
		"HOME="+t.TempDir(), "KUBEPACT_CACHE_DIR="+t.TempDir())
	shell := func(ctx context.Context, line string) *exec.Cmd {
		cmd := exec.CommandContext(ctx, "bash", "-c", "exec "+line)
		cmd.Dir, cmd.Env = work, env
		return cmd
	}
	run := func(line string) {
		t.Helper()
		out, err := shell(t.Context(), line).CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", line, err, out)
		}
	}

	run(lines[0])
	fileLock, err := os.ReadFile(filepath.Join(work, "catalog.lock.json"))
	if err != nil {
		t.Fatalf("%s wrote no catalog.lock.json: %v", lines[0], err)
	}

	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := shell(ctx, lines[1])
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "readme", Version: "v0"}, nil).Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("%s: %v\n%s", lines[1], err, stderr.String())
	}
	names := listedTools(t, cs)
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "pacto_server_info", Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("pacto_server_info: %v %v", err, res)
	}
	_ = cs.Close()
	var info struct {
		GeneratedTools struct {
			Lock struct {
				Source  string   `json:"source"`
				Locked  int      `json:"locked"`
				Drifted []string `json:"drifted"`
			} `json:"lock"`
		} `json:"generatedTools"`
	}
	raw, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(raw, &info); err != nil {
		t.Fatal(err)
	}
	if l := info.GeneratedTools.Lock; l.Source != "catalog.lock.json" || l.Locked != 7 || len(l.Drifted) != 0 || !slices.Contains(names, "getProduct") {
		t.Errorf("%s: tools %v, lock %+v; want the read tools, held to catalog.lock.json (7 pinned, none drifted)", lines[1], names, l)
	}

	run(lines[2])
	bundleLock, err := os.ReadFile(filepath.Join(work, "examples", "bundles", "catalog", "tools.lock.json"))
	if err != nil {
		t.Fatalf("%s wrote no tools.lock.json into the bundle: %v", lines[2], err)
	}
	if !bytes.Equal(bundleLock, fileLock) {
		t.Errorf("the lock written into the bundle differs from the one written to catalog.lock.json")
	}
}
