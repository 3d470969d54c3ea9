//go:build !sidecaronly

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kubepact/kubepact/mcp"
	"github.com/kubepact/kubepact/test/freeport"
	"github.com/kubepact/kubepact/test/testregistry"
)

// The README's commands that need no cluster, run from README.md itself
// (the blocks after <!-- readme-test: NAME -->), as a user types them:
// through bash, in a directory laid out as the command expects, with this
// build's kubepact first on PATH. `claude` (an MCP client these tests do
// not ship) is a script that records its arguments; the tests then run
// what it was given and connect to it with the go-sdk client. A value a
// command names that these tests must fill (the README's example
// registry host registry.example.com and its elided digest sha256:…) is
// filled as each test says; nothing else in a line is changed.

// readmeCommands is the block's lines without its comment lines.
func readmeCommands(t *testing.T, name string) []string {
	t.Helper()
	return slices.DeleteFunc(readmeBlock(t, name), func(l string) bool { return strings.HasPrefix(strings.TrimSpace(l), "#") })
}

// readmeEnv is the environment README lines run in: this build's kubepact
// and the recording claude first on PATH, and a home and cache of the
// test's own.
func readmeEnv(t *testing.T) (env []string, record string) {
	t.Helper()
	bin := t.TempDir()
	record = filepath.Join(t.TempDir(), "claude-args")
	script := "#!/bin/sh\nprintf '%s\\0' \"$@\" > \"$CLAUDE_RECORD\"\n"
	if err := os.WriteFile(filepath.Join(bin, "claude"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	path := bin + string(os.PathListSeparator) + filepath.Dir(kubepactBin) + string(os.PathListSeparator) + os.Getenv("PATH")
	return append(os.Environ(), "PATH="+path, "HOME="+t.TempDir(), "KUBEPACT_CACHE_DIR="+t.TempDir(), "CLAUDE_RECORD="+record), record
}

// readmeLine is line as bash runs it in dir (exec'd, so the process is
// the command's own).
func readmeLine(ctx context.Context, dir string, env []string, line string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, "bash", "-c", "exec "+line)
	cmd.Dir, cmd.Env = dir, env
	return cmd
}

// recorded runs a `claude mcp add` line and returns the arguments claude
// was given.
func recorded(t *testing.T, dir string, env []string, record, line string) []string {
	t.Helper()
	if out, err := readmeLine(t.Context(), dir, env, line).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", line, err, out)
	}
	raw, err := os.ReadFile(record)
	if err != nil {
		t.Fatalf("%s: claude was not run: %v", line, err)
	}
	return strings.Split(strings.TrimSuffix(string(raw), "\x00"), "\x00")
}

// serverInfo calls pacto_server_info.
func serverInfo(t *testing.T, cs *sdk.ClientSession) map[string]any {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "pacto_server_info", Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("pacto_server_info: %v %v", err, res)
	}
	var info map[string]any
	raw, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(raw, &info); err != nil {
		t.Fatal(err)
	}
	return info
}

// connectStdio starts cmd as an MCP server on its standard streams.
func connectStdio(t *testing.T, cmd *exec.Cmd) *sdk.ClientSession {
	t.Helper()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "readme", Version: "v0"}, nil).Connect(t.Context(), &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("%v: %v\n%s", cmd.Args, err, stderr.String())
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// TestReadmeConnectLines runs "Connect your MCP client"'s two claude
// lines: the stdio one registers a command that, run as claude would,
// serves the authoring tools on the directory it was typed in; the HTTP
// one registers the URL `kubepact mcp -t http` serves by default, and a
// server started that way answers there (on a free port: another
// process on this machine may hold 8585).
func TestReadmeConnectLines(t *testing.T) {
	lines := readmeCommands(t, "connect")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "claude mcp add ") || !strings.HasPrefix(lines[1], "claude mcp add ") {
		t.Fatalf("the README's connect block is %q; want two claude mcp add lines", lines)
	}
	work := t.TempDir()
	env, record := readmeEnv(t)

	args := recorded(t, work, env, record, lines[0])
	dash := slices.Index(args, "--")
	if dash < 0 || dash+1 >= len(args) || args[dash+1] != "kubepact" || !slices.Equal(args[:2], []string{"mcp", "add"}) {
		t.Fatalf("%s gave claude %q; want mcp add NAME -- kubepact …", lines[0], args)
	}
	server := exec.CommandContext(t.Context(), kubepactBin, args[dash+2:]...)
	server.Env = env
	info := serverInfo(t, connectStdio(t, server))
	want, _ := filepath.EvalSymlinks(work)
	if got, _ := filepath.EvalSymlinks(fmt.Sprint(info["workspace"])); got != want || !strings.Contains(fmt.Sprint(info["tools"]), "pacto_create") {
		t.Errorf("the server claude was given serves workspace %v and tools %v; want %s and the authoring tools", info["workspace"], info["tools"], want)
	}

	args = recorded(t, work, env, record, lines[1])
	if len(args) < 2 || !slices.Equal(args[:2], []string{"mcp", "add"}) || !slices.Contains(args, "--transport") {
		t.Fatalf("%s gave claude %q", lines[1], args)
	}
	u, err := url.Parse(args[len(args)-1])
	if err != nil || u.Scheme != "http" || u.Host != net.JoinHostPort(mcp.DefaultListen, strconv.Itoa(mcp.DefaultPort)) || u.Path != mcp.Endpoint {
		t.Fatalf("%s registers %q; `kubepact mcp -t http` serves http://%s%s", lines[1], args[len(args)-1],
			net.JoinHostPort(mcp.DefaultListen, strconv.Itoa(mcp.DefaultPort)), mcp.Endpoint)
	}
	port := freeport.Port(t)
	httpServer := exec.CommandContext(t.Context(), kubepactBin, "mcp", "-t", "http", "--port", strconv.Itoa(port), "--workspace", work)
	httpServer.Env = env
	var stderr syncBuffer
	httpServer.Stderr = &stderr
	if err := httpServer.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = httpServer.Process.Kill(); _ = httpServer.Wait() })
	u.Host = net.JoinHostPort(u.Hostname(), strconv.Itoa(port))
	cs := connectHTTP(t, u.String(), &stderr)
	if info := serverInfo(t, cs); !strings.Contains(fmt.Sprint(info["transport"]), "kind:http") {
		t.Errorf("the server at %s says its transport is %v", u, info["transport"])
	}
}

// connectHTTP connects to a server that is starting, until it answers.
func connectHTTP(t *testing.T, endpoint string, stderr *syncBuffer) *sdk.ClientSession {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		cs, err := sdk.NewClient(&sdk.Implementation{Name: "readme", Version: "v0"}, nil).Connect(t.Context(),
			&sdk.StreamableClientTransport{Endpoint: endpoint, MaxRetries: -1}, nil)
		if err == nil {
			t.Cleanup(func() { _ = cs.Close() })
			return cs
		}
		if time.Now().After(deadline) {
			t.Fatalf("nothing answered at %s: %v\n%s", endpoint, err, stderr.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestReadmeServiceLines runs "Calling a service through its contract"'s
// two lines. The first, verbatim from the repository root's layout,
// serves the catalog's read operations as tools. The second pulls the
// bundle by digest from a registry: registry.example.com is a TLS
// registry on loopback (trusted through SSL_CERT_FILE) holding the
// catalog, sha256:… is the digest `kubepact push` printed for it; its
// tools go to --base-url, which a call's failure names.
func TestReadmeServiceLines(t *testing.T) {
	lines := readmeCommands(t, "service")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "kubepact mcp examples/bundles/catalog ") || !strings.Contains(lines[1], "oci://registry.example.com/") || !strings.Contains(lines[1], "@sha256:…") {
		t.Fatalf("the README's service block is %q", lines)
	}
	work := t.TempDir()
	catalog := filepath.Join(repoRoot(t), "examples", "bundles", "catalog")
	if err := os.CopyFS(filepath.Join(work, "examples", "bundles", "catalog"), os.DirFS(catalog)); err != nil {
		t.Fatal(err)
	}
	env, _ := readmeEnv(t)
	names := listedTools(t, connectStdio(t, readmeLine(t.Context(), work, env, lines[0])))
	for _, want := range []string{"getProduct", "listProducts", "getHealth"} {
		if !slices.Contains(names, want) {
			t.Errorf("%s: tools %v lack %s", lines[0], names, want)
		}
	}
	if slices.Contains(names, "createProduct") {
		t.Errorf("%s offers createProduct without --allow-writes: %v", lines[0], names)
	}

	reg := testregistry.New(t, &testregistry.Options{TLS: true})
	host := strings.TrimPrefix(reg.URL, "https://")
	env = append(env, "SSL_CERT_FILE="+reg.CertFile)
	ref := "oci://" + host + "/bundles/catalog:1.4.0"
	push := exec.CommandContext(t.Context(), kubepactBin, "push", catalog, ref)
	push.Env = env
	out, err := push.Output()
	if err != nil {
		t.Fatalf("kubepact push %s: %v", ref, err)
	}
	digest := regexp.MustCompile(`sha256:[0-9a-f]{64}`).FindString(string(out))
	if digest == "" {
		t.Fatalf("kubepact push printed %q, no digest", out)
	}
	line := strings.Replace(strings.Replace(lines[1], "registry.example.com", host, 1), "sha256:…", digest, 1)
	cs := connectStdio(t, readmeLine(t.Context(), work, env, line))
	if names := listedTools(t, cs); !slices.Contains(names, "getProduct") {
		t.Fatalf("%s: tools %v lack getProduct", line, names)
	}
	base := regexp.MustCompile(`--base-url (\S+)`).FindStringSubmatch(lines[1])
	res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "getHealth", Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	if len(base) != 2 || !res.IsError || !strings.Contains(resultText(res), base[1]) {
		t.Errorf("getHealth through %s answered %q; want a failure naming %v, the --base-url (nothing serves it here)", line, resultText(res), base)
	}
}

// TestReadmeFleetLine runs "Understanding a fleet"'s first line verbatim
// in a directory holding what it names: ./contracts (the example
// bundles) and targets.yaml (the example target state). The second line
// elides its references (oci://…) and is not run.
func TestReadmeFleetLine(t *testing.T) {
	lines := readmeCommands(t, "fleet")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "kubepact mcp --fleet --local ./contracts --target-state targets.yaml") {
		t.Fatalf("the README's fleet block is %q", lines)
	}
	work := t.TempDir()
	if err := os.CopyFS(filepath.Join(work, "contracts"), os.DirFS(filepath.Join(repoRoot(t), "examples", "bundles"))); err != nil {
		t.Fatal(err)
	}
	targets, err := os.ReadFile(filepath.Join(repoRoot(t), "examples", "fleet", "targets.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(work, "targets.yaml"), targets, 0o600); err != nil {
		t.Fatal(err)
	}
	env, _ := readmeEnv(t)
	cs := connectStdio(t, readmeLine(t.Context(), work, env, lines[0]))
	res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "pacto_fleet_search", Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("pacto_fleet_search: %v %v", err, res)
	}
	var found struct {
		Meta struct {
			Completeness string `json:"completeness"`
			Sources      []struct {
				Kind, Status string
			} `json:"sources"`
		} `json:"meta"`
		Total int `json:"total"`
	}
	raw, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(raw, &found); err != nil {
		t.Fatal(err)
	}
	if found.Total != 3 || found.Meta.Completeness != "complete" || len(found.Meta.Sources) != 2 {
		t.Errorf("%s: %d services, %s, sources %+v; want the 3 example services, complete, from the directory and the target state", lines[0], found.Total, found.Meta.Completeness, found.Meta.Sources)
	}
}

// resultText is a tool result's text content.
func resultText(res *sdk.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// TestMakeHelpNamesEveryReadmeTarget runs `make help` (README:
// "Development", "every target") and wants in it every target the README
// tells a user to run with make, described.
func TestMakeHelpNamesEveryReadmeTarget(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(repoRoot(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), "make", "help")
	cmd.Dir = repoRoot(t)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("make help: %v", err)
	}
	help := regexp.MustCompile(`\x1b\[[0-9;]*m`).ReplaceAllString(string(out), "")
	described := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^  ([a-z][a-z0-9-]*)\s+\S`).FindAllStringSubmatch(help, -1) {
		described[m[1]] = true
	}
	named := regexp.MustCompile("(?m)(?:^|`)make ([a-z][a-z0-9-]*)").FindAllStringSubmatch(string(readme), -1)
	if len(named) < 10 {
		t.Fatalf("found only %d make commands in README.md", len(named))
	}
	for _, m := range named {
		if !described[m[1]] {
			t.Errorf("README.md tells users to run make %s, which make help does not list", m[1])
		}
	}
}
