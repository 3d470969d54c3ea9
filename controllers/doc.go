// Package controllers holds kubepact's Kubernetes controllers: the
// ServiceContract reconciler, which resolves a contract's bundle to a digest,
// validates it, binds it to its workload and reports all of it in status.
//
// The reconciler reads like one spine (see Reconcile): resolve → validate →
// bind → summarize, each a named sub-step that returns a *stepError carrying
// the condition reason it maps to, and one deferred status patch. Transient
// failures (a registry that cannot be reached) keep the last good digest and
// summary and are retried with backoff; failures only a change can fix
// (an invalid contract, an unresolvable policy) are reported as Stalled and
// looked at again each interval.
//
// What it may read is what its RBAC markers grant, and no more: it watches
// ServiceContracts and, as metadata only, the workloads and Services they
// target; it reads a pull Secret or a bundle ConfigMap by name with a direct
// GET (no list, no watch, no cache), lists and watches injected Pods'
// metadata, and writes only ServiceContract status and Events. `make manifests` turns the markers into config/rbac/role.yaml.
//
// Beside the reconciler sit the live fleet's Runnables (fleet.go), which run
// on every replica (NeedLeaderElection is false): FleetBuilder publishes the
// snapshots the fleetgraph/kube feed builds, and MCPServer answers the fleet
// tools from them at /mcp. The feed keeps its own informer cache on whole
// workloads and Services, projected down to what the graph reads, and on
// Pacto's pacto.trianalab.io CRs when installed (get, list and watch only).
// The sidecar injection webhook (Injector) runs on every replica, on the
// manager's webhook server: a Pod created in a namespace labelled
// kubepact.dev/injection=enabled with the annotation kubepact.dev/contract
// gets a native sidecar built by BuildSidecar, the one pure function that
// turns a Ready ServiceContract's pinned digest, the Pod's annotations and
// the operator's SidecarOptions into a container once the contract has a
// resolved, valid digest (a bound target is not needed, and a contract the
// reconciler has not resolved yet is waited for, briefly). The webhook fails
// open: anything that keeps a Pod from its sidecar — no such contract, no
// valid bundle, a namespace the operator does not watch, a cache or API
// server that does not answer, a hostNetwork Pod, a panic — admits it
// unchanged, with a warning and an Event; only kubepact.dev/inject-policy:
// required refuses. It answers for the review's own Pod alone: the contract
// is read by name in the Pod's namespace. Anything reaching its port may
// post reviews of its own making, so the reviews it reads are bounded in
// size, in bytes held at once and in how long a body may take
// (injector_bounds.go). The webhook also
// writes on the Pod the digest it pinned and the digest of the tool
// surface the sidecar will serve, which the reconciler computed once per
// digest (ToolSurface: the bundle projected with the arguments SidecarArgs
// writes, digested by the function the sidecar itself reports with). The
// operator never writes a Pod: a second controller (podReporter) watches
// the injected Pods' metadata only, through a cache of its own restricted
// to the label the webhook sets, and keeps status.pods — which Pods run
// which digest, stale ones marked — with a patch of that field alone, so
// that Pods coming and going never cost a registry round trip. CertRotator keeps
// the webhook's CA and serving certificate in one Secret and the caBundle
// of the MutatingWebhookConfiguration in step; its RBAC markers name that
// Secret and that configuration and nothing else.
//
// This package may import anything in the module except cmd.
package controllers
