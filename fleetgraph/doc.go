// Package fleetgraph is kubepact's fleet read model: the operational graph of
// services, contract revisions, targets (where a revision runs) and the
// relationships between them, published as immutable, versioned snapshots.
//
// # Map
//
//   - Identities and records. Pacto's three identities (service, revision
//     and target keys, with their escaping and reference parsing) and the
//     records a feed hands in: a [Revision] (one contract revision, its
//     declared edges and where its bundle can be read again) and a [Target]
//     (where a revision runs), with their statuses and attention
//     categories.
//   - Building and publishing. A [Builder] takes incremental upserts and
//     deletes, coalesces bursts and publishes an immutable [Snapshot]
//     through an atomic pointer; persistent, sharded copy-on-write maps let
//     one change publish a new snapshot without copying the fleet.
//   - Queries. Pure, deterministic answers over one snapshot: search (posting
//     lists per filter term, intersected smallest first, with cursors),
//     get, locate, graph, status (attention lists the Builder keeps per
//     code) and explain; a miss names the nearest candidates.
//   - Impact. The semantic diff of two contract revisions (bundle/diff)
//     projected onto a snapshot's dependents, each with a risk, and the
//     answer's one-line headline.
//   - Restricted views. [Snapshot.Restrict] is the snapshot as a reader who
//     may see only some scopes (namespaces) sees it, every index rebuilt
//     over the visible records, so totals, cursors, misses, graphs and
//     impact never reveal a hidden record.
//   - The envelope. Every answer carries [Meta]: the sources, their
//     limitations and sanitised error codes, and how complete it is.
//
// What feeds a Builder lives beside the core: fleetgraph/source holds the
// laptop and CI sources (local directories, OCI references, Pacto's
// target-state file, watched for changes) and the loader impact resolves
// refs with; fleetgraph/kube feeds it from a Kubernetes API server.
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
// filter term and attention code it falls under. The inbound index (the
// resolved edges into each service, which dependents and impact walk)
// holds 40 bytes a resolved edge, and each edge keeps the key of the
// service it names: at 10,000 services and 50,000 edges the two add
// about 6 MiB to the snapshot's 67 MiB.
//
// # Imports
//
// The package imports github.com/kubepact/kubepact/bundle and its
// sub-packages and a few general libraries (semver); never Kubernetes,
// never MCP and never its own sub-packages (depguard in .golangci.yml
// enforces it). A feed lives in its own sub-package and drives a
// [Builder] through its upsert/delete methods.
package fleetgraph
