// Package bundle loads Pacto bundles — a pacto.yaml with the interface specs,
// schemas, docs and skills it ships — from a directory or an oci:// reference,
// and gives each one a content identity.
//
// A Bundle's identity is the OCI manifest digest it has once pushed, or would
// have if pushed: a local directory and the same files in a registry share
// one identity, because both are computed from the same reproducible layer
// (see bundle/archive) and the same manifest (see bundle/oci).
//
// The package owns the bundle's file set (.pactoignore), its skills, and the
// validate.Resolver that follows references to other bundles. The contract
// model lives in bundle/contract, validation in bundle/validate.
//
// It must not import MCP or Kubernetes packages: the MCP server, the sidecar
// and the operator all build on it.
package bundle
