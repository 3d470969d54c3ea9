//go:build e2e

package e2e

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The README's cluster story is run from README.md itself, so that it
// cannot drift from what users read. A fenced sh block right after a line
//
//	<!-- e2e: NAME -->
//
// is block NAME. Its commands (a line, with its `\` continuation lines;
// comment lines skipped) run one by one through bash, each with the
// environment the commands before it exported, against the back end's
// cluster, with the real kubectl and helm first on PATH.
//
// The substitution rule: a `<…>` placeholder in a command is filled from
// what the suite knows (placeholders below): `<registry>` is its registry,
// and a digest or version placeholder is what the last `make image-push`
// printed. A placeholder the suite does not know fails the step, so a new
// one in the README must be added here. Nothing else in a command is
// changed.
//
// A back end may skip a command it cannot run (envtest has no kubelet:
// `rollout status`, `port-forward`); each skip is logged as one line
// saying why. A command ending in `&` runs in the background until the
// story ends and is ready once it prints a line. `claude` (an MCP client
// the suite does not ship) is a script that records its arguments; the
// story connects the MCP clients it does run with exactly those.

// readmeBlock returns block name of README.md.
func readmeBlock(t *testing.T, name string) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(repoRoot(), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	marker := "<!-- e2e: " + name + " -->"
	_, after, ok := strings.Cut(string(raw), "\n"+marker+"\n")
	if !ok {
		t.Fatalf("README.md has no %q: the suite runs the README's %s commands from the sh block after it", marker, name)
	}
	after = strings.TrimLeft(after, "\n")
	body, ok := strings.CutPrefix(after, "```sh\n")
	if !ok {
		t.Fatalf("README.md: %q is not followed by a ```sh block", marker)
	}
	body, _, ok = strings.Cut(body, "\n```")
	if !ok {
		t.Fatalf("README.md: the sh block after %q does not end", marker)
	}
	return body + "\n"
}

// commands splits a block into its commands: a line and the lines its
// trailing backslashes continue, blank and comment lines left out.
func commands(block string) []string {
	var out []string
	var cur strings.Builder
	for line := range strings.Lines(block) {
		line = strings.TrimRight(line, "\n")
		if cur.Len() == 0 && (strings.TrimSpace(line) == "" || strings.HasPrefix(strings.TrimSpace(line), "#")) {
			continue
		}
		cur.WriteString(line)
		if strings.HasSuffix(line, `\`) {
			cur.WriteString("\n")
			continue
		}
		out = append(out, cur.String())
		cur.Reset()
	}
	if cur.Len() > 0 {
		out = append(out, cur.String())
	}
	return out
}

// oneLine is a command as one line, for logs and matching.
func oneLine(cmd string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(cmd, "\\\n", " ")), " ")
}

// placeholders are the README's placeholders the suite fills (the
// substitution rule above): its registry, and what the last `make
// image-push` printed.
var placeholders = []string{"<registry>", "<the image's digest>", "<its digest>", "<new version>"}

var (
	placeholder = regexp.MustCompile(`<[^<>\n]+>`)
	// What `make image-push` prints (hack/image).
	pushedLine = regexp.MustCompile(`(?m)^pushed (\S+):([^\s@]+)@(sha256:[0-9a-f]{64})$`)
)

// shellHost is what a back end gives the README's commands.
type shellHost struct {
	// kubeconfig reaches the cluster as its administrator.
	kubeconfig string
	// kubectl and helm are the binaries `kubectl` and `helm` run.
	kubectl, helm string
	// env is more of the environment (the test registry's plain HTTP).
	env []string
	// skip says why the back end cannot run a command ("" runs it).
	skip func(cmd string) string
}

// readme runs README blocks for one story, keeping what the commands
// exported and what the suite learned for the placeholders.
type readme struct {
	root  *testing.T // background commands live as long as it
	host  shellHost
	tools string // PATH entry: kubectl, helm, claude
	state string // the exported environment, as `export -p` writes it
	env   []string

	mu     sync.Mutex
	values map[string]string
	// claude is where the claude stand-in writes its arguments.
	claude string
	// helmOut is the standard output of the last helm command (NOTES.txt).
	helmOut string
}

func newReadme(t *testing.T, host shellHost, registry string) *readme {
	t.Helper()
	dir := t.TempDir()
	r := &readme{root: t, host: host, tools: filepath.Join(dir, "bin"), state: filepath.Join(dir, "exported.sh"), claude: filepath.Join(dir, "claude-args"),
		values: map[string]string{"<registry>": registry}}
	if err := os.MkdirAll(r.tools, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, target := range map[string]string{"kubectl": host.kubectl, "helm": host.helm} {
		p, err := exec.LookPath(target)
		if err != nil {
			t.Fatalf("%s for the README's commands: %v", name, err)
		}
		if err := os.Symlink(p, filepath.Join(r.tools, name)); err != nil {
			t.Fatal(err)
		}
	}
	// claude is an MCP client CLI the suite does not ship: this records
	// the arguments the README gives it, and the story connects its own
	// MCP clients with them.
	stub := "#!/bin/sh\n# The e2e suite's claude: records its arguments, one per NUL.\nprintf '%s\\0' \"$@\" > \"$KUBEPACT_E2E_CLAUDE_ARGS\"\n"
	if err := os.WriteFile(filepath.Join(r.tools, "claude"), []byte(stub), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(r.state, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(dir, "home")
	r.env = append([]string{
		"PATH=" + r.tools + string(os.PathListSeparator) + os.Getenv("PATH"),
		"KUBECONFIG=" + host.kubeconfig,
		"KUBECACHEDIR=" + filepath.Join(home, "kube-cache"),
		"HELM_CACHE_HOME=" + filepath.Join(home, "helm-cache"), "HELM_CONFIG_HOME=" + filepath.Join(home, "helm-config"), "HELM_DATA_HOME=" + filepath.Join(home, "helm-data"),
		"DOCKER_CONFIG=" + filepath.Join(home, "docker"),
		"KUBEPACT_E2E_CLAUDE_ARGS=" + r.claude,
	}, host.env...)
	return r
}

// set gives a placeholder its value.
func (r *readme) set(name, value string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.values[name] = value
}

// fill substitutes cmd's placeholders, or fails naming the unknown one.
func (r *readme) fill(t *testing.T, cmd string) string {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	var unknown, unset []string
	out := placeholder.ReplaceAllStringFunc(cmd, func(p string) string {
		v, ok := r.values[p]
		switch {
		case !slices.Contains(placeholders, p):
			unknown = append(unknown, p)
		case !ok:
			unset = append(unset, p)
		}
		return v
	})
	switch {
	case len(unknown) > 0:
		t.Fatalf("README command %q: the suite fills no placeholder %s (the substitution rule is in test/e2e/readme_test.go; a new placeholder needs a value there)", oneLine(cmd), strings.Join(unknown, ", "))
	case len(unset) > 0:
		t.Fatalf("README command %q: no value for %s yet: the command that prints it (make image-push) did not run before it", oneLine(cmd), strings.Join(unset, ", "))
	}
	return out
}

// run runs block name in dir with extra environment, command by command;
// after is called after each command that ran (nil: nothing).
func (r *readme) run(t *testing.T, name, dir string, extra []string, after func(cmd, stdout string)) {
	t.Helper()
	for _, cmd := range commands(readmeBlock(t, name)) {
		line := oneLine(cmd)
		if why := r.host.skip(cmd); why != "" {
			t.Logf("README %s: skipped `%s`: %s", name, line, why)
			continue
		}
		filled := r.fill(t, cmd)
		if bg, ok := strings.CutSuffix(strings.TrimSpace(filled), "&"); ok {
			r.background(t, name, line, bg, dir, extra)
			continue
		}
		stdout := r.command(t, name, line, filled, dir, extra)
		r.learn(stdout)
		if strings.HasPrefix(line, "helm ") {
			r.helmOut = stdout
		}
		if after != nil {
			after(line, stdout)
		}
	}
}

// script is cmd run by bash after the variables the commands before it
// exported; a variable cmd exports (`export NAME=…`) is kept for the
// commands after it.
func (r *readme) script(cmd string) string {
	var b strings.Builder
	b.WriteString("set -euo pipefail\nsource " + shellQuote(r.state) + "\n" + cmd + "\n")
	for _, m := range exportedName.FindAllStringSubmatch(cmd, -1) {
		fmt.Fprintf(&b, "printf 'export %%s=%%q\\n' %s \"${%s}\" >> %s\n", m[1], m[1], shellQuote(r.state))
	}
	return b.String()
}

// exportedName is a variable a command exports.
var exportedName = regexp.MustCompile(`(?m)^\s*export\s+([A-Za-z_][A-Za-z0-9_]*)=`)

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// environ is the environment of a README command: the suite's, without
// what `make test-e2e` passes down to the makes it starts (a user's shell
// has none of it), then the shell's and the block's.
func (r *readme) environ(extra []string) []string {
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool {
		name, _, _ := strings.Cut(kv, "=")
		return name == "MAKEFLAGS" || name == "MFLAGS" || name == "MAKELEVEL" || name == "MAKEOVERRIDES"
	})
	return append(append(env, r.env...), extra...)
}

// command runs one command and fails the step, with its output, if it
// fails; it returns its standard output.
func (r *readme) command(t *testing.T, block, line, cmd, dir string, extra []string) string {
	t.Helper()
	c := exec.CommandContext(t.Context(), "bash", "-c", r.script(cmd))
	c.Dir = dir
	c.Env = r.environ(extra)
	var stdout, stderr bytes.Buffer
	c.Stdout, c.Stderr = &stdout, &stderr
	start := time.Now()
	err := c.Run()
	t.Logf("README %s: $ %s  (%s)\n%s%s", block, line, time.Since(start).Round(100*time.Millisecond), indent(stdout.String()), indent(stderr.String()))
	if err != nil {
		t.Fatalf("README %s: `%s` failed: %v\n%s", block, line, err, stderr.String())
	}
	return stdout.String()
}

// background starts a command ending in & and waits until it prints a
// line; it runs until the story ends.
func (r *readme) background(t *testing.T, block, line, cmd, dir string, extra []string) {
	t.Helper()
	c := exec.Command("bash", "-c", "set -euo pipefail\nsource "+shellQuote(r.state)+"\nexec "+cmd)
	c.Dir = dir
	c.Env = r.environ(extra)
	c.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	out, err := c.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr syncBuffer
	c.Stderr = &stderr
	if err := c.Start(); err != nil {
		t.Fatalf("README %s: `%s`: %v", block, line, err)
	}
	r.root.Cleanup(func() {
		_ = c.Process.Signal(syscall.SIGTERM)
		_ = c.Wait()
	})
	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			select {
			case ready <- sc.Text():
			default:
			}
		}
	}()
	select {
	case first := <-ready:
		t.Logf("README %s: $ %s  (in the background)\n%s", block, line, indent(first))
	case <-time.After(60 * time.Second):
		t.Fatalf("README %s: `%s` printed nothing within 60s: %s", block, line, stderr.String())
	}
}

// learn takes the placeholders' values from what a command printed.
func (r *readme) learn(stdout string) {
	if m := pushedLine.FindAllStringSubmatch(stdout, -1); len(m) > 0 {
		last := m[len(m)-1]
		r.set("<the image's digest>", last[3])
		r.set("<its digest>", last[3])
		r.set("<new version>", last[2])
	}
}

// exported is a variable the commands exported so far.
func (r *readme) exported(t *testing.T, name string) string {
	t.Helper()
	c := exec.CommandContext(t.Context(), "bash", "-c", "source "+shellQuote(r.state)+"; printf %s \"${"+name+":-}\"")
	out, err := c.Output()
	if err != nil {
		t.Fatalf("reading %s from the README's exported environment: %v", name, err)
	}
	return string(out)
}

// claudeArgs are the arguments the README last gave claude.
func (r *readme) claudeArgs(t *testing.T) []string {
	t.Helper()
	raw, err := os.ReadFile(r.claude)
	if err != nil {
		t.Fatalf("the README's claude command did not run: %v", err)
	}
	return strings.Split(strings.TrimSuffix(string(raw), "\x00"), "\x00")
}

// mcpClientConfig is what `claude mcp add --transport http NAME URL
// --header H…` configures.
type mcpClientConfig struct {
	url     string
	headers map[string]string
}

func parseClaudeAdd(t *testing.T, args []string) mcpClientConfig {
	t.Helper()
	cfg := mcpClientConfig{headers: map[string]string{}}
	if len(args) < 2 || args[0] != "mcp" || args[1] != "add" {
		t.Fatalf("the README runs claude %q; the suite knows `claude mcp add`", args)
	}
	var positional []string
	for i := 2; i < len(args); i++ {
		switch a := args[i]; {
		case a == "--transport" && i+1 < len(args):
			if args[i+1] != "http" {
				t.Fatalf("claude mcp add --transport %s: the operator serves Streamable HTTP", args[i+1])
			}
			i++
		case a == "--header" && i+1 < len(args):
			k, v, ok := strings.Cut(args[i+1], ":")
			if !ok {
				t.Fatalf("claude mcp add --header %q is not Name: value", args[i+1])
			}
			cfg.headers[strings.TrimSpace(k)] = strings.TrimSpace(v)
			i++
		case strings.HasPrefix(a, "-"):
			t.Fatalf("claude mcp add %s: the suite does not know this flag", a)
		default:
			positional = append(positional, a)
		}
	}
	if len(positional) != 2 {
		t.Fatalf("claude mcp add %q: want a name and a URL", args)
	}
	cfg.url = positional[1]
	return cfg
}

func indent(s string) string {
	if strings.TrimSpace(s) == "" {
		return ""
	}
	var b strings.Builder
	for line := range strings.Lines(strings.TrimRight(s, "\n")) {
		fmt.Fprintf(&b, "    %s", line)
	}
	return b.String() + "\n"
}
