//go:build e2e

package e2e

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubepact/kubepact/api/v1alpha1"
	"github.com/kubepact/kubepact/test/gobuild"
)

// ModeEnv selects the back end: envtest or cluster.
const ModeEnv = "KUBEPACT_E2E"

// The install as the chart's naming contract has it (default values,
// release kubepact).
const (
	releaseName      = "kubepact"
	installNamespace = "kubepact-system"
	operatorName     = "kubepact-operator"
	webhookConfig    = "kubepact-injector"
	webhookSecret    = "kubepact-webhook-cert"
	crdName          = "servicecontracts.kubepact.dev"
)

// backend is where the story runs: it owns the cluster and the way
// processes and ports are reached. The story runs the README's commands
// against it and holds the rest.
type backend interface {
	// admin is a client with the installer's authority, for the test's
	// own objects and kubectl-level reads.
	admin() client.Client
	// registry is the OCI registry holding the bundles and images: push
	// is the host the test pushes to, pull the same registry as the
	// cluster reaches it.
	registry() (push, pull string)
	// shell is how the README's commands reach the cluster, and which
	// of them it cannot run.
	shell(t *testing.T) shellHost
	// cannotInstall says why the README's image, install and upgrade
	// commands do not run here ("": they run).
	cannotInstall() string
	// installed makes what the install installed run as the cluster
	// would, and returns the objects it installed.
	installed(t *testing.T) []*unstructured.Unstructured
	// waitOperatorReady returns once the operator's /readyz answers 200.
	waitOperatorReady(t *testing.T)
	// operatorMCP is the URL of the operator's /mcp.
	operatorMCP(t *testing.T) string
	// mcpURL is where the URL the README's commands reach /mcp at is
	// served here.
	mcpURL(t *testing.T, readmeURL string) string
	// beforeUpgrade puts back what the back end changed in the install
	// for its own sake; upgraded makes the upgraded install run, as a
	// rollout would.
	beforeUpgrade(t *testing.T)
	upgraded(t *testing.T)
	// operatorGone: `helm uninstall` deleted the operator's Deployment.
	operatorGone(t *testing.T)
	// cli is the kubepact binary the story runs commands with.
	cli(t *testing.T) string
	// demoContainer is the container of the catalog Deployment: the demo
	// service; served counts the requests it has served (-1: unknown).
	demoContainer(t *testing.T) corev1.Container
	served() int
	// grpcContainer is the container of the inventory Deployment: the
	// demo gRPC service (hack/grpcdemo), its port named grpc; "" and a
	// reason when this back end has none. grpcServed counts the GetItem
	// calls it has served (-1: unknown).
	grpcContainer(t *testing.T) (corev1.Container, string)
	grpcServed() int
	// sidecar makes the sidecar injected into pod serve and returns its
	// /mcp URL.
	sidecar(t *testing.T, pod *corev1.Pod) string
	// realPods says why Pods do not really run here ("": a kubelet runs
	// them, so probes, restarts, Services and port-forward are real).
	realPods() string
	// forwardPort makes port of target (pod/NAME or svc/NAME in ns) reachable
	// from the test and returns its host:port; only where realPods is "".
	forwardPort(t *testing.T, ns, target, port string) string
}

var scheme = kruntime.NewScheme()

func init() {
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		panic(err)
	}
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		panic(err)
	}
}

// newBackend starts the back end KUBEPACT_E2E names, or skips.
func newBackend(t *testing.T) backend {
	t.Helper()
	switch mode := os.Getenv(ModeEnv); mode {
	case "envtest":
		return newEnvtestBackend(t)
	case "cluster":
		return newClusterBackend(t)
	case "":
		t.Skipf("%s is not set: run `make test-e2e` (envtest: a real API server here) or `make test-e2e-kind` (kind; needs Docker), or set %s=envtest|cluster", ModeEnv, ModeEnv)
	default:
		t.Fatalf("%s=%q is not accepted; use envtest or cluster", ModeEnv, mode)
	}
	return nil
}

// repoRoot is the repository's top directory.
func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// kubepactBin builds the kubepact binary once for the suite.
var kubepactBin = sync.OnceValues(func() (string, error) {
	if p := os.Getenv("KUBEPACT_BIN"); p != "" {
		return p, nil
	}
	dir, err := os.MkdirTemp("", "kubepact-e2e-bin-")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "kubepact")
	cmd := gobuild.Command(repoRoot(), bin, "./cmd/kubepact")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building kubepact: %w\n%s", err, out)
	}
	return bin, nil
})

func kubepact(t *testing.T) string {
	t.Helper()
	bin, err := kubepactBin()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// run runs a command and fails the test when it fails; it returns stdout.
func run(t *testing.T, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), name, args...)
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, errb.String())
	}
	return out.String()
}

// eventually polls cond until it returns nil. The deadline bounds a hung
// component; it measures nothing.
func eventually(t *testing.T, what string, timeout time.Duration, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s: %v", what, timeout, err)
		}
		select {
		case <-t.Context().Done():
			t.Fatalf("%s: %v (last: %v)", what, t.Context().Err(), err)
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// syncBuffer collects a process's output for failure messages.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.b.Len() < 4<<20 {
		s.b.Write(p)
	}
	return len(p), nil
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// errNotYet is what a poll returns while waiting.
var errNotYet = errors.New("not yet")
