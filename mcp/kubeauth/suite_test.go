package kubeauth_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/kubepact/kubepact/api/v1alpha1"
	"github.com/kubepact/kubepact/test/kcm"
)

// The package's control plane: a real kube-apiserver and etcd, the
// operator's RBAC as `make manifests` generated it, and the operator's
// ServiceAccount (impersonated) sending the TokenReviews and
// SubjectAccessReviews, as /mcp does in the operator.
var (
	// admin is a client with the test's full authority, for setting up.
	admin client.Client
	// adminConfig is the rest.Config of admin.
	adminConfig *rest.Config
	// operatorConfig is the operator's ServiceAccount, impersonated.
	operatorConfig *rest.Config
	scheme         = runtime.NewScheme()
	skipReason     string
)

const (
	operatorNamespace = "kubepact-system"
	operatorSA        = "kubepact-operator"
)

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" && os.Getenv("USE_EXISTING_CLUSTER") != "true" {
		skipReason = "KUBEBUILDER_ASSETS is not set: run `make test`, or `make envtest-assets` and KUBEBUILDER_ASSETS=bin/k8s/<version>"
		return m.Run()
	}
	if os.Getenv("KUBEBUILDER_CONTROLPLANE_START_TIMEOUT") == "" {
		_ = os.Setenv("KUBEBUILDER_CONTROLPLANE_START_TIMEOUT", "60s")
	}
	ctrl.SetLogger(zap.New(zap.WriteTo(io.Discard)))
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		panic(err)
	}
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		panic(err)
	}
	env := &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join("..", "..", "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
	}
	cfg, err := env.Start()
	if err != nil {
		// KUBEBUILDER_ASSETS was set: an unusable control plane is a failure.
		fmt.Fprintf(os.Stderr, "envtest: starting the control plane: %v\n", err)
		return 1
	}
	defer func() {
		if err := env.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "envtest: stopping the control plane: %v\n", err)
		}
	}()
	defer stopKCM()
	adminConfig = cfg
	admin, err = client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		fmt.Fprintf(os.Stderr, "client: %v\n", err)
		return 1
	}
	ctx, cancel := context.WithCancel(context.Background()) //nolint:forbidigo // TestMain has no t.Context
	defer cancel()
	if err := installRBAC(ctx); err != nil {
		fmt.Fprintf(os.Stderr, "installing config/rbac: %v\n", err)
		return 1
	}
	operatorConfig = rest.CopyConfig(cfg)
	operatorConfig.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:" + operatorNamespace + ":" + operatorSA}
	operatorConfig.QPS = -1 // as ctrl.GetConfig: API priority and fairness, no client-side limit
	return m.Run()
}

// installRBAC applies config/rbac (ServiceAccount, the generated
// ClusterRole, bindings, leader-election Role) as the operator's install
// would.
func installRBAC(ctx context.Context) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: operatorNamespace}}
	if err := admin.Create(ctx, ns); err != nil {
		return err
	}
	files, err := filepath.Glob(filepath.Join("..", "..", "config", "rbac", "*.yaml"))
	if err != nil {
		return err
	}
	for _, f := range files {
		if filepath.Base(f) == "kustomization.yaml" {
			continue
		}
		raw, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(raw), 4096)
		for {
			u := &unstructured.Unstructured{}
			if err := dec.Decode(&u.Object); err != nil {
				if errors.Is(err, io.EOF) {
					break
				}
				return fmt.Errorf("%s: %w", f, err)
			}
			if len(u.Object) == 0 {
				continue
			}
			if err := admin.Create(ctx, u); err != nil {
				return fmt.Errorf("%s: %w", f, err)
			}
		}
	}
	return nil
}

// The kube-controller-manager of the package's control plane (it mints
// ServiceAccount tokens), started by the first test that needs it.
var (
	kcmOnce sync.Once
	kcmProc *kcm.Process
	kcmErr  error
)

func needKCM(t *testing.T) {
	t.Helper()
	needControlPlane(t)
	kcmOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second) //nolint:forbidigo // outlives the first test that asks
		defer cancel()
		kcmProc, kcmErr = kcm.Start(ctx, adminConfig, nil)
	})
	if kcmErr != nil {
		t.Fatal(kcmErr)
	}
}

func stopKCM() {
	if kcmProc != nil {
		_ = kcmProc.Stop()
	}
}

func needControlPlane(t testing.TB) {
	t.Helper()
	if skipReason != "" {
		t.Skip(skipReason)
	}
}

// newNamespace creates a namespace for one test.
func newNamespace(t testing.TB) string {
	t.Helper()
	needControlPlane(t)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "sc-"}}
	if err := admin.Create(t.Context(), ns); err != nil {
		t.Fatal(err)
	}
	return ns.Name
}

func create(t testing.TB, obj client.Object) {
	t.Helper()
	if err := admin.Create(t.Context(), obj); err != nil {
		t.Fatal(err)
	}
}
