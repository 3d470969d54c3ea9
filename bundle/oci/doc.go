// Package oci stores and fetches Pacto bundles as OCI artifacts, in exactly
// Pacto's format, so a bundle pushed by Pacto loads here and ours loads in
// Pacto.
//
// The format: an OCI image manifest with exactly one layer of media type
// LayerMediaType (the gzip'd tar written by package archive) and an image
// configuration carrying the labels io.pacto.name, io.pacto.version and
// io.pacto.pactoVersion. NewImage builds manifest and configuration
// deterministically and without the network, so the manifest digest, a
// bundle's identity, is known whether or not the bundle is ever pushed.
//
// ParseBundleRef is kubepact's one reader of bundle references: it tells
// oci:// from file:// and bare local paths, and ParseReference splits and
// checks registry, repository, tag and digest, for validation as for pulls.
//
// A Client pushes and pulls through oras-go: references are validated,
// tags are resolved to digests and everything after that is fetched and
// verified by digest, registry credentials come from a Docker config file or
// a .dockerconfigjson blob (what a Kubernetes pull Secret holds), plain HTTP
// is used only when asked, and an optional on-disk content cache keyed by
// digest means one digest is fetched once. Registry content is untrusted:
// manifest, configuration and layer reads are capped, and layers are
// extracted by archive.Extract under the client's limits.
//
// Every Client holds the one registry policy (policy.go): an allow-list
// of registries, checked before anything is resolved or dialled, and an
// address rule checked on the resolved IP when each connection is dialled
// — redirects and token services included — so that only a host named in
// the allow-list itself reaches a loopback, link-local, private or cloud
// metadata address. Each operation is bounded by one timeout. Options
// binds the policy's flags with the other registry flags and admits the
// registries a command was given.
//
// A failure is a *RegistryError: one classifier (errors.go) reads the
// libraries' errors by type and gives each Problem a sentence of our own
// with its remedy (the flag, and the chart value, that would change the
// outcome). The transport's, the TLS library's and the registry's own text
// stays in RegistryError.Err and goes to the client's Logger only.
// Every other failure wraps one of the sentinels (ErrInvalidArtifact,
// ErrTooLarge, ErrInvalidReference, …), so that package bundle/failure can
// name each one's Kind by type, for every surface.
//
// This package may import package archive, oras-go, the OCI spec types and
// logr; it must not import the rest of kubepact, MCP or Kubernetes.
package oci
