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
// It is also the one place paths are confined: Confine checks a path below a
// root (a workspace) for a precise message, and every read then goes through
// an os.Root handle (OpenDirIn, LoadDirIn, LoadDir), so a directory or file
// swapped for a link between the check and the read is refused, not
// followed. References are read by bundle/oci's ParseBundleRef, the one
// parser of oci://, file:// and bare-path references.
//
// bundle/ is the Pacto format and nothing else: this package, contract (the
// model and its parser), archive (the layer's bytes), oci (the artifact and
// the registry), validate (Pacto's rules) and diff (the semantic diff).
// Product features built on the format live beside the other shapes'
// code: internal/openapitools (operations as tools), internal/authoring,
// internal/catalog, internal/payload.
//
// It must not import MCP or Kubernetes packages, nor any product feature:
// of internal/ it uses only the small JSON helpers (jsonobj, didyoumean,
// schemacycle). The MCP server, the sidecar and the operator all build on
// it.
package bundle
