// Package chart holds the tests of the Helm chart in charts/kubepact, run
// through real binaries and a real API server: helm lint --strict, the
// helm-unittest suites, the rendered manifests applied to envtest's
// kube-apiserver (CRDs for real, everything else with server-side dry-run),
// the naming contract other suites rely on, and the rendered RBAC held to
// the operator's read-only promise.
//
// The helm binaries come from $KUBEPACT_HELM and $KUBEPACT_HELM_UNITTEST
// (`make test` builds and sets them); the control plane from
// $KUBEBUILDER_ASSETS. A test skips, saying so, only when its variable is
// unset; a binary that is named but does not run is a failure.
package chart
