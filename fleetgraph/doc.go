// Package fleetgraph is kubepact's fleet read model: the operational graph of
// services, contract revisions, targets (where a revision runs) and the
// relationships between them, published as immutable, versioned snapshots.
//
// # Map
//
//   - keys.go: Pacto's three identities (service, revision, target keys) and
//     their escaping; reference parsing (domain, repository, tag, digest).
//   - model.go: the records a source or an informer feeds in ([Revision],
//     [Target]), statuses and attention categories.
//   - envelope.go: the completeness envelope every answer carries ([Meta]):
//     sources, limitations and sanitised error codes.
//   - pmap.go, sorted.go: the persistent (copy-on-write, sharded) maps and
//     the chunked sorted maps that let one change publish a new snapshot
//     without copying the fleet.
//   - index.go: the search posting lists (a sorted key set per filter
//     term) and the streams search intersects, smallest first.
//   - builder.go, snapshot.go: [Builder] takes incremental upserts and
//     deletes, coalesces bursts and publishes a [Snapshot] through an
//     atomic pointer.
//   - query.go, graph.go, status.go: pure, deterministic queries over one
//     snapshot (search with cursors, get, graph, status, explain). Status
//     walks attention lists the Builder keeps per code.
//   - view.go: restricted views ([Snapshot.Restrict]): the snapshot as a
//     reader who may see only some scopes (namespaces) sees it, with every
//     index rebuilt over the visible records, so totals, cursors, misses,
//     graphs and impact never reveal a hidden record.
//   - impact.go, impact_text.go: the semantic diff of two contract
//     revisions (package bundle/diff) projected onto a snapshot's
//     dependents, each with a risk (at risk when its range admits a
//     breaking version, excluded when it stops below), and the answer's
//     one-line headline.
//
// What feeds a Builder lives beside the core: fleetgraph/source holds the
// laptop and CI sources (local directories, OCI references, Pacto's
// target-state file, watched for changes) and the loader impact resolves
// refs with; the Kubernetes feed will be its sibling fleetgraph/kube.
//
// # Memory
//
// A snapshot stores derived data, not bundles: a revision keeps its
// identity, the fields queries filter on and its declared edges, never the
// parsed contract or its files. Relationships are stored as declared (the
// reference as written) and resolved against the snapshot when read, so a
// service arriving later resolves earlier edges without rewriting them.
// An edge resolves to the service its reference names (domain and
// repository), and by a dependency's alias only when the reference names
// none. The one stored result is the unresolved-edge attention list: the
// Builder rechecks an edge when a service of either name, or a digest it
// pins, appears or disappears.
//
// The indexes cost memory per record (on the 30,000-target benchmark
// fleet about 660 bytes a target, of 2.1 KiB retained in all): a target
// is one composite key shared by its posting lists, plus one entry per
// filter term and attention code it falls under.
//
// # Imports
//
// The package imports github.com/kubepact/kubepact/bundle and its
// sub-packages and a few general libraries (semver); never Kubernetes,
// never MCP and never its own sub-packages (TestImports enforces it). A
// feed lives in its own sub-package and drives a [Builder] through its
// upsert/delete methods.
package fleetgraph
