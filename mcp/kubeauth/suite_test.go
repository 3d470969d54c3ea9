package kubeauth_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubepact/kubepact/test/envtestsuite"
)

// The package's control plane (test/envtestsuite): a real kube-apiserver
// and etcd, the operator's RBAC as `make manifests` generated it, and the
// operator's ServiceAccount (impersonated) sending the TokenReviews and
// SubjectAccessReviews, as /mcp does in the operator.
var (
	suite *envtestsuite.Suite
	// admin is a client with the test's full authority, for setting up.
	admin client.Client
	// adminConfig is the rest.Config of admin.
	adminConfig *rest.Config
	// operatorConfig is the operator's ServiceAccount, impersonated.
	operatorConfig *rest.Config
	scheme         *runtime.Scheme
)

const (
	operatorNamespace = envtestsuite.OperatorNamespace
	operatorSA        = envtestsuite.OperatorSA
)

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	ctx, cancel := context.WithCancel(context.Background()) //nolint:forbidigo // TestMain has no t.Context
	defer cancel()
	var err error
	suite, err = envtestsuite.Start(ctx, envtestsuite.Options{Root: filepath.Join("..", "..")})
	if err != nil {
		// KUBEBUILDER_ASSETS was set: an unusable control plane is a failure.
		fmt.Fprintf(os.Stderr, "%v\n", err)
		return 1
	}
	scheme = suite.Scheme
	if suite.Skipped() {
		return m.Run()
	}
	defer suite.Stop()
	admin, adminConfig, operatorConfig = suite.Admin, suite.AdminConfig, suite.OperatorConfig
	return m.Run()
}
