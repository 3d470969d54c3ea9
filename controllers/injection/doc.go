// Package injection is the Pod injection webhook and the certificates it
// serves with.
//
// # Injector
//
// The webhook (Injector) runs on every replica, on the manager's webhook
// server: a Pod created in a namespace labelled kubepact.dev/injection=enabled
// with the annotation kubepact.dev/contract gets a native sidecar built by
// BuildSidecar, the one pure function that turns a Ready ServiceContract's
// pinned digest, the Pod's annotations and the operator's SidecarOptions
// into a sidecar.Config and its container, once the contract has a
// resolved, valid digest (a bound target is not needed, and a contract the
// reconciler has not resolved yet is waited for, briefly). It writes on the
// Pod the digest it pinned and the tool surface digest the reconciler
// recorded (the Annotation* and Label* names, read back by the reconciler's
// Pod report).
//
// The webhook fails open: anything that keeps a Pod from its sidecar — no
// such contract, no valid bundle, a namespace the operator does not watch,
// a cache or API server that does not answer, a hostNetwork Pod, a panic —
// admits it unchanged, with a warning and an Event; only
// kubepact.dev/inject-policy: required refuses. It answers for the review's
// own Pod alone: the contract is read by name in the Pod's namespace.
// Anything reaching its port may post reviews of its own making, so the
// reviews it reads are bounded in size, in bytes held at once and in how
// long a body may take.
//
// # Certificates
//
// CertRotator keeps the webhook's CA and serving certificate in one Secret
// and the caBundle of the MutatingWebhookConfiguration in step; its RBAC
// markers name that Secret and that configuration and nothing else.
//
// # Imports
//
// It may import api, bundle, internal and controller-runtime; never
// controllers (which imports it for the Pod names) or cmd, and mcp only
// through internal/sidecar (the tool surface of a Config).
//
// Its tests that need a control plane run on an envtest suite of their
// own (suite_test.go): the webhook and the reconciler as the operator's
// ServiceAccount, the real kube-controller-manager when Pods must exist.
package injection
