// Package e2e is kubepact's end-to-end suite: the product installed as
// users install it, driven as users drive it. Its tests carry the build
// tag e2e and run one ordered story against one cluster:
//
//	image pushed → install (an earlier chart's CRD) → operator Ready →
//	ServiceContracts Ready → fleet tools answer at /mcp, filtered by the
//	caller's identity (the README's fleet-reader; a token with no RBAC
//	told it sees nothing) → upgrade (the CRD really changes) → a
//	Deployment gets its sidecar → the sidecar's tools call the service →
//	a gRPC service (examples/grpc/inventory) gets its sidecar, which
//	calls it over h2c on the Pod's loopback → a tag moves → the fleet and the status follow → uninstall leaves
//	nothing behind.
//
// The install, /mcp, inject, upgrade and uninstall commands are the
// README's own: readme_test.go runs the sh blocks behind <!-- e2e: NAME -->
// markers in README.md, command by command, with real kubectl and helm,
// and states the rule by which placeholders are filled.
//
// KUBEPACT_E2E picks the cluster the story runs against:
//
//   - envtest (`make test-e2e`): a real kube-apiserver, etcd and
//     kube-controller-manager on loopback, and a registry on loopback the
//     image is pushed to; the README's commands run against the API server
//     (those that need a kubelet are skipped, one line each); the operator
//     runs as the installed Deployment's container would — the entrypoint
//     of its image, pulled by digest, with its arguments (only addresses
//     and ports moved to loopback) — impersonating the chart's
//     ServiceAccount; the sidecar likewise, with the arguments the webhook
//     wrote into the Pod the kube-controller-manager created.
//   - cluster (`make test-e2e-kind`, hack/e2e-kind.sh): an existing cluster
//     (kind, where Docker exists) where the script installed the chart (its
//     image is loaded, not pushed); every other README command runs as
//     written, and everything is reached with `kubectl port-forward`.
//
// Where a kubelet runs the Pods (cluster), pods_test.go's steps add what
// only real Pods show: readiness through probes, the webhook reached
// through its Service, the native sidecar's start order, restart by the
// kubelet, memory limit and GOMEMLIMIT (read on the node when the test
// runs there), its reach limited to its own Pod, leader failover, and a
// rolling upgrade behind the Service with the PodDisruptionBudget. On
// envtest each is skipped with one line saying why.
//
// Unset, the tests skip and say how to run them. Assertions go through a
// real MCP client over HTTP and kubectl-level reads only.
//
// Only this package's tests import it; it imports nothing but test helpers
// and the API types from kubepact.
package e2e
