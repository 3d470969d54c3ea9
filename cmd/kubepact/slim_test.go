//go:build !sidecaronly

package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kubepact/kubepact/test/demoservice"
	"github.com/kubepact/kubepact/test/gobuild"
)

// sidecarOnlyTag is the build tag of the slim sidecar build: `kubepact`
// from the same source with only the sidecar and version commands
// (commands_sidecaronly.go), as `make build` writes bin/kubepact-sidecar.
const sidecarOnlyTag = "sidecaronly"

var (
	slimOnce sync.Once
	slimPath string
	slimErr  error
)

// slimSidecarBin builds the slim sidecar once per test binary, as a
// release build beside kubepactBin, and returns its path.
func slimSidecarBin(t testing.TB) string {
	t.Helper()
	slimOnce.Do(func() {
		slimPath = filepath.Join(filepath.Dir(kubepactBin), "kubepact-sidecar")
		build := gobuild.Command(repoRootTB(t), slimPath, "./cmd/kubepact")
		gobuild.Tags(build, sidecarOnlyTag)
		if out, err := build.CombinedOutput(); err != nil {
			slimErr = fmt.Errorf("%s: %w\n%s", strings.Join(build.Args, " "), err, out)
		}
	})
	if slimErr != nil {
		t.Fatalf("building the slim sidecar: %v", slimErr)
	}
	return slimPath
}

// kubernetesPackage reports whether an import path or module path is
// Kubernetes' (the API machinery, client-go, controller-runtime) or one
// of kubepact's packages that exist for the other shapes.
func kubernetesPackage(path string) bool {
	for _, prefix := range []string{"k8s.io/", "sigs.k8s.io/", "github.com/kubepact/kubepact/controllers", "github.com/kubepact/kubepact/api/",
		"github.com/kubepact/kubepact/fleetgraph/kube", "github.com/kubepact/kubepact/mcp/kubeauth"} {
		if strings.HasPrefix(path, prefix) {
			return true
		}
	}
	return false
}

// TestSlimSidecarLinksNoKubernetes: the slim sidecar build links no
// Kubernetes package, by the package graph (go list -deps -tags
// sidecaronly) and by the binary itself (go version -m: its build tag and
// the modules linked), where the full build links client-go — so the
// check can tell the two apart.
func TestSlimSidecarLinksNoKubernetes(t *testing.T) {
	deps := func(tags ...string) []string {
		args := append([]string{"list", "-deps"}, tags...)
		cmd := exec.CommandContext(t.Context(), "go", append(args, ".")...)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go %s: %v", strings.Join(cmd.Args[1:], " "), err)
		}
		return strings.Fields(string(out))
	}
	slim, full := deps("-tags", sidecarOnlyTag), deps()
	for _, pkg := range slim {
		if kubernetesPackage(pkg) {
			t.Errorf("the slim sidecar build (-tags %s) imports %s", sidecarOnlyTag, pkg)
		}
	}
	for _, want := range []string{"github.com/kubepact/kubepact/internal/sidecar", "github.com/kubepact/kubepact/mcp"} {
		if !slices.Contains(slim, want) {
			t.Errorf("the slim sidecar build does not import %s", want)
		}
	}
	if !slices.Contains(full, "k8s.io/client-go/rest") {
		t.Errorf("the full build does not import k8s.io/client-go/rest: this test no longer tells the two builds apart")
	}
	t.Logf("packages linked: full %d, slim sidecar %d", len(full), len(slim))

	modules := func(bin string) (tags string, mods []string) {
		out, err := exec.CommandContext(t.Context(), "go", "version", "-m", bin).Output()
		if err != nil {
			t.Fatalf("go version -m %s: %v", bin, err)
		}
		for line := range strings.Lines(string(out)) {
			f := strings.Fields(line)
			switch {
			case len(f) >= 2 && (f[0] == "dep" || f[0] == "=>"):
				mods = append(mods, f[1])
			case len(f) >= 2 && f[0] == "build" && strings.HasPrefix(f[1], "-tags="):
				tags = strings.TrimPrefix(f[1], "-tags=")
			}
		}
		return tags, mods
	}
	slimBin := slimSidecarBin(t)
	tags, mods := modules(slimBin)
	if tags != sidecarOnlyTag {
		t.Errorf("go version -m %s: build tags %q, want %q", slimBin, tags, sidecarOnlyTag)
	}
	for _, m := range mods {
		if kubernetesPackage(m + "/") {
			t.Errorf("the slim sidecar binary links module %s", m)
		}
	}
	if _, fullMods := modules(kubepactBin); !slices.Contains(fullMods, "k8s.io/client-go") {
		t.Errorf("go version -m of the full binary lists no k8s.io/client-go: this test no longer tells the two binaries apart")
	}
	assertReleaseBinary(t, slimBin)
	assertReleaseBinary(t, kubepactBin)
}

// TestSlimSidecarBehavesAsFull: the slim build's sidecar is `kubepact
// sidecar`: the same --help (every flag, its default and usage), the same
// refusals of bad flags (exit code and words), and, serving the catalog
// example, the same tools/list and the same answer to a call. Its other
// commands are not in it and say so, naming the full binary.
func TestSlimSidecarBehavesAsFull(t *testing.T) {
	slim := slimSidecarBin(t)
	// One environment for both builds: the cache directory is in --help.
	env := append(os.Environ(), "KUBEPACT_CACHE_DIR="+t.TempDir(), "HOME="+t.TempDir())
	runBin := func(bin string, args ...string) (string, int) {
		cmd := exec.CommandContext(t.Context(), bin, args...)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		code := 0
		var ee *exec.ExitError
		switch {
		case errors.As(err, &ee):
			code = ee.ExitCode()
		case err != nil:
			t.Fatalf("%s %v: %v", bin, args, err)
		}
		return string(out), code
	}
	catalog := filepath.Join(repoRoot(t), "examples", "bundles", "catalog")
	for _, args := range [][]string{
		{"sidecar", "--help"},
		{"version"},
		{"sidecar"}, // no --bundle
		{"sidecar", "--bundle", catalog, "--upstream", "http://10.0.0.1:8080", "--health-addr", "127.0.0.1:0"},
		{"sidecar", "--bundle", catalog, "--upstream", "http://127.0.0.1:8080", "--allow-remote-upstream"},
		{"sidecar", "--bundle", catalog, "--upstream", "http://127.0.0.1:8080", "--memory-limit-mib", "lots"},
	} {
		fullOut, fullCode := runBin(kubepactBin, args...)
		slimOut, slimCode := runBin(slim, args...)
		if slimCode != fullCode || slimOut != fullOut {
			t.Errorf("kubepact %s: slim exit %d, full exit %d; output (-full +slim):\n%s", strings.Join(args, " "), slimCode, fullCode, cmp.Diff(fullOut, slimOut))
		}
	}
	for _, name := range []string{"mcp", "operator", "check", "push"} {
		out, code := runBin(slim, name, "--help")
		if want := fmt.Sprintf("%q is not in this build: this is the slim sidecar build of kubepact, which runs only \"sidecar\" and \"version\"; run \"kubepact %s\" with the full kubepact binary", name, name); code != 2 || !strings.Contains(out, want) {
			t.Errorf("slim %s --help: exit %d %q; want exit 2 saying %q", name, code, out, want)
		}
	}
	if out, _ := runBin(slim, "--help"); strings.Contains(out, "operator") || !strings.Contains(out, "sidecar") {
		t.Errorf("slim --help lists other commands than sidecar and version:\n%s", out)
	}

	demo := httptest.NewServer(demoservice.New(nil))
	t.Cleanup(demo.Close)
	surface := func(bin string) (tools, call string) {
		p := startSidecarBin(t, bin, demo.URL)
		cs := p.connect(t)
		res, err := cs.ListTools(t.Context(), nil)
		if err != nil {
			t.Fatalf("%s tools/list: %v", bin, err)
		}
		raw, _ := json.MarshalIndent(res.Tools, "", " ")
		got, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "getProduct", Arguments: map[string]any{"productId": "p-0001"}})
		if err != nil || got.IsError {
			t.Fatalf("%s getProduct: %v %s", bin, err, toolJSON(got))
		}
		// The same answer, but for the time it took and the Date header.
		var answer map[string]any
		if err := json.Unmarshal([]byte(toolJSON(got)), &answer); err != nil {
			t.Fatal(err)
		}
		delete(answer, "durationMs")
		if h, ok := answer["headers"].(map[string]any); ok {
			delete(h, "Date")
		}
		same, _ := json.Marshal(answer)
		return string(raw), string(same)
	}
	fullTools, fullCall := surface(kubepactBin)
	slimTools, slimCall := surface(slim)
	if d := cmp.Diff(fullTools, slimTools); d != "" {
		t.Errorf("tools/list differs (-full +slim):\n%s", d)
	}
	if d := cmp.Diff(fullCall, slimCall); d != "" {
		t.Errorf("getProduct differs (-full +slim):\n%s", d)
	}
}
