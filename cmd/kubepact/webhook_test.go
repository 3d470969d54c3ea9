package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubepact/kubepact/api/v1alpha1"
	"github.com/kubepact/kubepact/controllers"
	"github.com/kubepact/kubepact/test/demoservice"
	"github.com/kubepact/kubepact/test/testregistry"
)

// TestInjectedSidecarCommandLine runs the command line the injection
// webhook writes (controllers.BuildSidecar, the function the webhook calls)
// as a process, beside the demo service, against a registry holding the
// bundle: the arguments are ones the binary accepts, the digest-pinned
// bundle loads, and the tools reach the service.
func TestInjectedSidecarCommandLine(t *testing.T) {
	demo := httptest.NewServer(demoservice.New(nil))
	t.Cleanup(demo.Close)
	_, port, _ := strings.Cut(strings.TrimPrefix(demo.URL, "http://"), ":")

	reg := testregistry.New(t, nil)
	tag := reg.Host + "/bundles/catalog:1.4.0"
	out, stderr, code := runKubepact(t, "push", filepath.Join(repoRoot(t), "examples", "bundles", "catalog"), "oci://"+tag, "--plain-http")
	if code != 0 {
		t.Fatalf("push: exit %d: %s", code, stderr)
	}
	digest := strings.TrimSpace(out)

	// The ServiceContract as the reconciler leaves it once Ready, and the
	// Pod as the ReplicaSet controller sends it for admission.
	sc := &v1alpha1.ServiceContract{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "catalog"},
		Spec:       v1alpha1.ServiceContractSpec{Bundle: v1alpha1.BundleSource{OCI: "oci://" + tag}},
		Status:     v1alpha1.ServiceContractStatus{ResolvedRef: tag + "@" + digest, Digest: digest},
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{
			controllers.AnnotationContract: "catalog", controllers.AnnotationUpstreamPort: port,
		}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "catalog", Image: "example.invalid/catalog:1"}}},
	}
	mcpPort, healthPort := freePort(t), freePort(t)
	inj, err := controllers.BuildSidecar(sc, pod, controllers.SidecarOptions{
		PlainHTTP: true, MCPPort: int32(mcpPort), HealthPort: int32(healthPort),
	})
	if err != nil {
		t.Fatal(err)
	}
	args := inj.Container.Args
	if want := "--bundle=oci://" + reg.Host + "/bundles/catalog@" + digest; !slices.Contains(args, want) {
		t.Fatalf("args %q lack %s", args, want)
	}
	t.Logf("kubepact %s", strings.Join(args, " "))

	p := &sidecarProc{
		mcpURL: fmt.Sprintf("http://127.0.0.1:%d/mcp", mcpPort),
		health: "http://127.0.0.1:" + strconv.Itoa(healthPort),
	}
	p.launch(t, args, "sidecar ready (/readyz 200)", func() bool {
		resp, err := http.Get(p.health + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	cs := p.connect(t)
	res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "listProducts", Arguments: map[string]any{"limit": 2}})
	if err != nil || res.IsError {
		t.Fatalf("listProducts through the injected command line: %v %+v\n%s", err, res, p.stderr)
	}
	if !strings.Contains(p.stderr.String(), digest) {
		t.Errorf("the sidecar's log does not name the pinned digest %s:\n%s", digest, p.stderr)
	}

	// /readyz?verbose says which bundle and which tool surface the Pod
	// serves: the same bundle from a directory offers the same surface;
	// with writes allowed it is another.
	got := readyDetailsOf(t, p.health)
	if got.BundleDigest != digest || !strings.HasPrefix(got.ToolSurfaceDigest, "sha256:") || got.Tools != 6 {
		t.Errorf("/readyz?verbose = %+v, want bundle %s, a tool surface digest and 6 tools", got, digest)
	}
	local := readyDetailsOf(t, startSidecar(t, demo.URL).health)
	if local.BundleDigest != digest || local.ToolSurfaceDigest != got.ToolSurfaceDigest {
		t.Errorf("the same bundle from a directory: %+v, want the digests of %+v", local, got)
	}
	writes := readyDetailsOf(t, startSidecar(t, demo.URL, "--allow-writes").health)
	if writes.ToolSurfaceDigest == got.ToolSurfaceDigest {
		t.Errorf("with --allow-writes the tool surface digest did not change: %+v", writes)
	}
}

func readyDetailsOf(t *testing.T, health string) readyDetails {
	t.Helper()
	resp, err := http.Get(health + "/readyz?verbose")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var d readyDetails
	if err := json.NewDecoder(resp.Body).Decode(&d); err != nil {
		t.Fatalf("/readyz?verbose: %v", err)
	}
	return d
}
