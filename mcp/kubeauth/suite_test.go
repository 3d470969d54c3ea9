package kubeauth_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/kubepact/kubepact/test/envtestsuite"
)

// The package's control plane (test/envtestsuite): a real kube-apiserver
// and etcd, the operator's RBAC as `make manifests` generated it, and the
// operator's ServiceAccount (impersonated) sending the TokenReviews and
// SubjectAccessReviews, as /mcp does in the operator.
var suite = new(envtestsuite.Suite)

func TestMain(m *testing.M) {
	os.Exit(suite.Main(m, envtestsuite.Options{Root: filepath.Join("..", "..")}, nil))
}
