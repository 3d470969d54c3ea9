// Package kubeauth is Kubernetes identity for the operator's /mcp: who a
// bearer token is (TokenReview) and which namespaces of the fleet that
// caller may see (SubjectAccessReview on ServiceContracts), each answer
// kept a short while in a bounded TTL LRU, and TokenReviews of tokens not
// seen lately bounded by rate. KubeIdentity is the mcp.Authenticator and
// mcp.Scoper the operator hands to mcp.
//
// It also holds the operator's choice of /mcp authentication (Mode,
// ModeFor): Kubernetes identity, OAuth (mcp/oauth's tokens, scoped by the
// same SubjectAccessReviews), a static token, or none, and which of
// them a listener beyond loopback accepts.
//
// # Imports
//
// It may import mcp, fleetgraph, api and client-go; never controllers or
// cmd. Its RBAC markers are read by `make manifests`. Its tests run on an
// envtest control plane of their own (suite_test.go): the generated RBAC,
// the operator's ServiceAccount sending the reviews.
package kubeauth
