// Package catalog resolves a contract catalog in Pacto's catalog format
// (schema pacto.dev/catalog/v1): the bundles named as roots, plus the whole
// closure of their dependencies, deduplicated by identity, with the edges
// between them, the dependencies that did not resolve, the conflicts and
// cycles left visible, and an envelope that says how complete the answer is
// ([Meta]: catalogId, completeness, bounds, limitations).
//
// Roots are oci:// references or local bundle directories, read through
// bundle/oci's one reference parser and one registry client. A tag is
// resolved to a manifest digest once per [Build]; everything after that is
// fetched by digest. A revision's identity is its service (domain and name)
// and its content (scheme and digest): a tag or a path is never identity.
//
// Every bound ([Bounds]: defaults and ceilings as Pacto has them) is checked
// before the resolver call it would cost, never after: a catalog that hits
// one stops resolving that branch, marks what it left out (BOUND_EXCEEDED)
// and says so in a limitation. A failure is reported by a sanitised reason
// code (NOT_FOUND, AUTH_FAILED, UNAVAILABLE, …) with a message of our own,
// never a registry's or transport's raw text. A local reference declared
// inside a registry bundle is refused: remote content must not make the
// catalog read local files.
//
// Resolution goes breadth first, one depth at a time: the references of a
// depth are resolved together, [Options].Concurrency at once, each on a
// context of its own (the registry client bounds every operation), and
// applied in declaration order, so the answer does not depend on which registry
// answered first, and a registry that stalls ends its own branch
// (UNAVAILABLE, with a limitation naming it and the timeout) and cancels
// no other; it is not asked again in that build, so it costs one timeout
// however many of its references the closure holds.
//
// A [Catalog] is immutable. [Live] keeps the current one behind an atomic
// pointer and rebuilds it on Refresh (and every interval in Run): a tag
// that moved resolves to a new digest, which yields a new catalogId. A
// Live from [NewResolvingLive] serves a RESOLVING placeholder until its
// first resolution ends, so a server can answer before its registries.
// Content already pulled is kept by digest, so a refresh of unchanged tags
// costs one manifest resolution per tag.
//
// The package imports bundle and its sub-packages and general libraries;
// never MCP and never Kubernetes (depguard in .golangci.yml enforces it).
package catalog
