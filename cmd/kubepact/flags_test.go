//go:build !sidecaronly

package main

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/kubepact/kubepact/test/freeport"
)

// TestInapplicableFlagsRefused runs the binary with flags that cannot
// apply to its command line — read by nothing it runs, or contradicted by
// another flag — and wants each refused before anything starts (exit 2),
// naming the flag, why, and what to do; never accepted and ignored.
func TestInapplicableFlagsRefused(t *testing.T) {
	catalog := filepath.Join(repoRoot(t), "examples", "bundles", "catalog")
	fleet := []string{"--fleet", "--local", filepath.Join(repoRoot(t), "examples", "bundles")}
	stdio := "applies to the HTTP transport, and this server speaks stdio (the default): add -t http to serve Streamable HTTP, or drop "
	noBundle := "configures the tools generated from BUNDLE, and no BUNDLE is given: name one first"
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"port on stdio", []string{"mcp", "--port", "9000"}, "--port " + stdio + "--port"},
		{"listen on stdio", []string{"mcp", "--listen", "127.0.0.1"}, "--listen " + stdio},
		{"token on stdio", []string{"mcp", "--auth-token-file", "/dev/null"}, "--auth-token-file " + stdio},
		{"limits on stdio", []string{"mcp", "--max-sessions", "5"}, "--max-sessions " + stdio},
		{"drain on stdio", []string{"mcp", "-t", "stdio", "--drain-timeout", "1s"}, "--drain-timeout " + stdio},
		{"the removed drain alias", []string{"mcp", "--shutdown-timeout", "1s"}, "unknown flag: --shutdown-timeout"},
		{"allowed host on stdio", []string{"mcp", "--allowed-host", "mcp.example.com"}, "--allowed-host " + stdio},
		{"tools lock without a bundle", []string{"mcp", "--tools-lock", "catalog.lock.json"}, "--tools-lock " + noBundle},
		{"base URL without a bundle", []string{"mcp", "--base-url", "http://127.0.0.1:8080"}, "--base-url " + noBundle},
		{"allow writes without a bundle", []string{"mcp", "--allow-writes"}, "--allow-writes " + noBundle},
		{"credentials without a bundle", []string{"mcp", "--auth", "bearerAuth=x"}, "--auth " + noBundle},
		{"read-only with allow-writes", []string{"mcp", catalog, "--read-only", "--allow-writes"},
			"--allow-writes exposes the generated tools that write, and --read-only registers no tool that can write: choose one of them"},
		{"confirmation without writes", []string{"mcp", catalog, "--confirm-writes", "always"},
			"--confirm-writes chooses which write operations ask for confirmation, and without --allow-writes only GET and HEAD operations are exposed, which never ask: add --allow-writes, or drop --confirm-writes"},
		{"pins without discovery", []string{"mcp", catalog, "--tool-pin", "getHealth"},
			"--tool-pin offers operations as tools of their own beside the discovery tools, and --tool-mode all offers every operation as a tool already: add --tool-mode discover (or auto), or drop --tool-pin"},
		{"freshness without the fleet", []string{"mcp", "--freshness", "24h"}, "--freshness applies to the fleet tools, which are off: add --fleet"},
		{"retention without the fleet", []string{"mcp", "--snapshot-retention", "1m"}, "--snapshot-retention applies to the fleet tools"},
		{"catalog bound without a root", []string{"mcp", "--catalog-max-depth", "3"}, "--catalog-max-depth applies to the catalog, which is off: add --root REF"},
		{"unauthenticated remote on loopback", []string{"mcp", "-t", "http", "--allow-unauthenticated-remote"},
			"--allow-unauthenticated-remote permits listening beyond loopback without a token, and here there is nothing to permit"},
		{"cache dir with no cache (mcp)", []string{"mcp", "--cache-dir", "/tmp/c", "--no-cache"}, "--cache-dir names the content cache, and --no-cache turns the cache off: drop one of them"},
		{"cache dir with no cache (check)", []string{"check", catalog, "--cache-dir", "/tmp/c", "--no-cache"}, "--cache-dir names the content cache"},
		{"cache dir with no cache (lock)", []string{"lock", catalog, "-o", "-", "--cache-dir", "/tmp/c", "--no-cache"}, "--cache-dir names the content cache"},
		{"cache dir with no cache (push)", []string{"push", catalog, "oci://127.0.0.1:1/kubepact/catalog:1", "--cache-dir", "/tmp/c", "--no-cache"}, "--cache-dir names the content cache"},
		{"the fleet family without a source", []string{"mcp", "--families", "fleet,payload"},
			"--families: the fleet family needs at least one source: set --local (directories scanned for bundles), --oci (oci:// references of published bundles) or --target-state"},
		{"remote upstream allowed on loopback", []string{"sidecar", "--bundle", catalog, "--upstream", "http://127.0.0.1:8080", "--allow-remote-upstream"},
			"--allow-remote-upstream permits an --upstream beyond the pod, and --upstream is loopback: drop --allow-remote-upstream"},
		{"sidecar confirmation without writes", []string{"sidecar", "--bundle", catalog, "--upstream", "http://127.0.0.1:8080", "--confirm-writes", "never"},
			"--confirm-writes chooses which write operations ask for confirmation"},
		{"sidecar cache dir with no cache", []string{"sidecar", "--bundle", catalog, "--upstream", "http://127.0.0.1:8080", "--cache-dir", "/tmp/c", "--no-cache"},
			"--cache-dir names the content cache"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := tc.args
			if args[0] == "mcp" {
				args = append(args, "--workspace", t.TempDir())
			}
			if args[0] == "sidecar" {
				args = append(args, "--health-addr", "127.0.0.1:0", "--port", "0")
			}
			stderr, code := runRefused(t, args...)
			if code != 2 || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want exit 2 and %q", code, stderr, tc.want)
			}
		})
	}

	// What applies is still accepted: each of these serves stdio until its
	// input ends (here at once), then exits 0.
	for _, args := range [][]string{
		{"mcp", "--read-only"},
		{"mcp", catalog, "--allow-writes", "--confirm-writes", "never"},
		append([]string{"mcp", "--freshness", "1h", "--snapshot-retention", "1m"}, fleet...),
		{"mcp", "--no-cache"},
		{"mcp", "--max-request-bytes", "65536"}, // bounds a stdio line too
		{"mcp", "--families", "fleet,payload", "--local", filepath.Join(repoRoot(t), "examples", "bundles")}, // the fleet family named, with a source
	} {
		if _, stderr, code := runKubepact(t, append(args, "--workspace", t.TempDir())...); code != 0 {
			t.Errorf("%v: exit %d, %s; want it served", args, code, stderr)
		}
	}
}

// runRefused runs the binary with a command line it must refuse at once,
// and returns its stderr and exit code; one that is still running after
// 20 s (it took the command line and serves) is stopped, with code -1.
func runRefused(t *testing.T, args ...string) (stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, kubepactBin, args...)
	cmd.Env = append(os.Environ(), "KUBEPACT_CACHE_DIR="+t.TempDir(), "HOME="+t.TempDir())
	var errb bytes.Buffer
	cmd.Stderr = &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		t.Errorf("kubepact %v took the command line and was still serving after 20 s", args)
		return errb.String(), -1
	case errors.As(err, &ee):
		return errb.String(), ee.ExitCode()
	case err != nil:
		t.Fatalf("running kubepact %v: %v", args, err)
	}
	return errb.String(), 0
}

// TestFlagUsageRendersAsWritten: pflag takes the first back-quoted word of
// a usage string as the flag's value name (--tools-lock `kubepact lock`),
// so no usage string of any command may quote with back quotes, and every
// value name is the type's, or a placeholder in capitals.
func TestFlagUsageRendersAsWritten(t *testing.T) {
	placeholder := regexp.MustCompile(`^[A-Z][A-Z_|]*$`)
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		for _, fs := range []*pflag.FlagSet{c.LocalFlags(), c.PersistentFlags()} {
			fs.VisitAll(func(f *pflag.Flag) {
				name, _ := pflag.UnquoteUsage(f)
				if strings.Contains(f.Usage, "`") && !placeholder.MatchString(name) {
					t.Errorf("%s --%s: its usage renders with the value name %q: %q", c.CommandPath(), f.Name, name, f.Usage)
				}
			})
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRootCommand())
}

// TestBusyAddressInWords: an address another process holds is refused in
// words that name it and the flag that moves it, for each listener of the
// HTTP shapes, not with Go's "listen tcp …: bind: address already in use".
func TestBusyAddressInWords(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	busy := ln.Addr().String()
	_, port, _ := net.SplitHostPort(busy)
	catalog := filepath.Join(repoRoot(t), "examples", "bundles", "catalog")
	free := strconv.Itoa(freeport.Port(t))
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"mcp -t http", []string{"mcp", "-t", "http", "--port", port, "--workspace", t.TempDir()},
			"cannot listen on " + busy + ": it is already in use by another process: stop that process, or choose another address with --listen and --port"},
		{"sidecar", []string{"sidecar", "--bundle", catalog, "--upstream", "http://127.0.0.1:8080", "--port", port, "--health-addr", "127.0.0.1:" + free},
			"cannot listen on " + busy + ": it is already in use by another process: stop that process, or choose another address with --listen and --port"},
		{"sidecar probes", []string{"sidecar", "--bundle", catalog, "--upstream", "http://127.0.0.1:8080", "--port", free, "--health-addr", busy},
			"cannot listen on " + busy + ": it is already in use by another process: stop that process, or choose another address with --health-addr"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stderr, code := runRefused(t, tc.args...)
			if code != 2 || !strings.Contains(stderr, tc.want) || strings.Contains(stderr, "bind:") {
				t.Errorf("exit %d, stderr %q; want exit 2 and %q", code, stderr, tc.want)
			}
		})
	}
}

// TestFileErrorsInWords: a file named on the command line that cannot be
// used is said in words, naming the flag, not with the operating system's
// "open …: no such file or directory".
func TestFileErrorsInWords(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing")
	junk := filepath.Join(t.TempDir(), "bundle.tar.gz")
	if err := os.WriteFile(junk, []byte("not gzip"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"token file", []string{"mcp", "-t", "http", "--port", strconv.Itoa(freeport.Port(t)), "--auth-token-file", missing, "--workspace", t.TempDir()},
			"--auth-token-file: " + missing + " does not exist"},
		{"workspace", []string{"mcp", "--workspace", missing}, missing + " does not exist"},
		{"packed bundle", []string{"sidecar", "--bundle", junk, "--upstream", "http://127.0.0.1:8080", "--health-addr", "127.0.0.1:0", "--port", strconv.Itoa(freeport.Port(t))},
			"--bundle " + junk + " is a file, but not a packed bundle (the gzip'd tar \"kubepact pack\" writes): give a packed bundle, or the bundle's directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stderr, code := runRefused(t, tc.args...)
			if code != 2 || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want exit 2 and %q", code, stderr, tc.want)
			}
			for _, raw := range []string{"no such file or directory", "lstat ", "open ", "unexpected EOF", "archive: "} {
				if strings.Contains(stderr, raw) {
					t.Errorf("stderr %q carries the operating system's or a library's text %q", stderr, raw)
				}
			}
		})
	}
}

// TestHelpStatesEachDefaultOnce reads every command's --help as a user
// does, from the binary: pflag appends "(default …)" itself, so a usage
// string that states its default too renders it twice; and a flag whose
// zero value stands for a default (--registry-timeout) shows that
// default, not nothing.
func TestHelpStatesEachDefaultOnce(t *testing.T) {
	for _, command := range []string{"mcp", "sidecar", "operator", "check", "lock", "push", "pack"} {
		out, err := exec.CommandContext(t.Context(), kubepactBin, command, "--help").CombinedOutput()
		if err != nil {
			t.Fatalf("kubepact %s --help: %v\n%s", command, err, out)
		}
		for line := range strings.Lines(string(out)) {
			if strings.Count(line, "(default") > 1 {
				t.Errorf("kubepact %s --help states a default twice: %s", command, strings.TrimSpace(line))
			}
			if strings.Contains(line, "--registry-timeout duration") && !strings.Contains(line, "(default 30s)") {
				t.Errorf("kubepact %s --help does not say what --registry-timeout is by default: %s", command, strings.TrimSpace(line))
			}
		}
	}
}

// TestOutputFailuresInWords: a file lock or pack cannot write (-o in a
// directory that does not exist, under a file, or a directory itself) is
// refused in words naming that file and its directory, never the
// operating system's text about the temporary file beside it the atomic
// write goes through ("open /x/.out.tmp-123: no such file or directory"),
// and nothing is left behind.
func TestOutputFailuresInWords(t *testing.T) {
	catalog := filepath.Join(repoRoot(t), "examples", "bundles", "catalog")
	dir := t.TempDir()
	file := filepath.Join(dir, "a-file")
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing")
	for _, tc := range []struct {
		name, out, want string
	}{
		{"directory missing", filepath.Join(missing, "out"), "cannot write " + filepath.Join(missing, "out") + ": the directory " + missing + " does not exist: create it, or choose another file with -o; nothing was written"},
		{"under a file", filepath.Join(file, "out"), "cannot write " + filepath.Join(file, "out") + ": a part of " + file + " is a file, not a directory: choose another file with -o; nothing was written"},
		{"a directory", dir, "cannot write " + dir + ": it is a directory: give -o the path of a file to write; nothing was written"},
	} {
		for _, args := range [][]string{{"lock", catalog, "-o", tc.out}, {"pack", catalog, "-o", tc.out}} {
			t.Run(args[0]+" "+tc.name, func(t *testing.T) {
				_, stderr, code := runKubepact(t, args...)
				if code != 2 || strings.TrimSpace(stderr) != "kubepact: "+tc.want {
					t.Errorf("exit %d, stderr %q; want exit 2 and %q", code, stderr, tc.want)
				}
				for _, raw := range []string{"no such file or directory", ": not a directory", "file exists", "open ", "rename ", ".tmp-"} {
					if strings.Contains(stderr, raw) {
						t.Errorf("stderr %q carries the operating system's text %q", stderr, raw)
					}
				}
			})
		}
	}
	if entries, err := os.ReadDir(dir); err != nil || len(entries) != 1 {
		t.Errorf("the refused writes left files behind in %s: %v %v", dir, entries, err)
	}
}

// TestLockBaseURLOnlyWhereNeeded: the lock pins the bundle's own servers
// URL, so `kubepact lock --base-url` with a spec that declares an absolute
// one would be accepted and ignored; it is refused saying so. Where the
// spec declares none (a relative servers URL), --base-url is what lets
// the tools be projected, and the lock is written.
func TestLockBaseURLOnlyWhereNeeded(t *testing.T) {
	catalog := filepath.Join(repoRoot(t), "examples", "bundles", "catalog")
	_, stderr, code := runKubepact(t, "lock", catalog, "-o", "-", "--base-url", "http://127.0.0.1:9")
	want := "kubepact: --base-url is not used here: the bundle's spec declares its servers URL (http://127.0.0.1:8080), which the lock pins, and --base-url only stands in for a spec that declares none: drop --base-url"
	if code != 2 || strings.TrimSpace(stderr) != want {
		t.Errorf("lock --base-url of a bundle with its own servers URL: exit %d, %q; want 2 and %q", code, stderr, want)
	}

	relative := filepath.Join(t.TempDir(), "catalog")
	if err := os.CopyFS(relative, os.DirFS(catalog)); err != nil {
		t.Fatal(err)
	}
	spec := filepath.Join(relative, "interfaces", "openapi.yaml")
	raw, err := os.ReadFile(spec)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(spec, bytes.Replace(raw, []byte("url: http://127.0.0.1:8080"), []byte("url: /"), 1), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := runKubepact(t, "lock", relative, "-o", "-"); code != 2 || !strings.Contains(stderr, "--base-url") {
		t.Errorf("lock of a spec with a relative servers URL, without --base-url: exit %d, %q; want it to ask for --base-url", code, stderr)
	}
	if stdout, stderr, code := runKubepact(t, "lock", relative, "-o", "-", "--base-url", "http://127.0.0.1:9"); code != 0 || !strings.Contains(stdout, `"lockDigest"`) {
		t.Errorf("lock --base-url of a spec with a relative servers URL: exit %d, %s", code, stderr)
	}
}
