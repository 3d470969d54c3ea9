// Package e2e is kubepact's end-to-end suite: the product installed as
// users install it, driven as users drive it. Its tests carry the build
// tag e2e and run one ordered story against one cluster:
//
//	install → operator Ready → ServiceContracts Ready → fleet tools answer
//	at /mcp, filtered by the caller's identity → a Deployment gets its
//	sidecar → the sidecar's tools call the service → a tag moves → the
//	fleet and the status follow → uninstall leaves nothing behind.
//
// KUBEPACT_E2E picks the cluster the story runs against:
//
//   - envtest (`make test-e2e`): a real kube-apiserver, etcd and
//     kube-controller-manager on loopback; the chart rendered by real helm
//     and server-side applied; the operator as a `kubepact operator`
//     process impersonating the chart's ServiceAccount, with the arguments
//     the chart's Deployment gives it (only addresses and ports moved to
//     loopback); the sidecar as a process beside the demo service, started
//     with the arguments the webhook wrote into the Pod the
//     kube-controller-manager created.
//   - cluster (`make test-e2e-kind`, hack/e2e-kind.sh): an existing cluster
//     (kind, where Docker exists) where the chart is already installed;
//     everything is reached with `kubectl port-forward`.
//
// Unset, the tests skip and say how to run them. Assertions go through a
// real MCP client over HTTP and kubectl-level reads only.
//
// Only this package's tests import it; it imports nothing but test helpers
// and the API types from kubepact.
package e2e
