// Package source feeds a fleetgraph.Builder from laptop and CI sources:
// bundle directories below a local root ([LocalSource]), published
// bundles by OCI reference ([OCISource]) and Pacto's
// pacto.dev/fleet-targets/v1 target-state file ([TargetStateSource]).
//
// A [Feed] keeps a builder in step with a fixed set of sources: each
// [Feed.Collect] re-reads them, with the caller's context, and publishes
// the difference as one snapshot; [Feed.Watch] re-collects the local ones
// when they change. A [LocalSource] re-read loads every bundle again but
// compresses (for its identity) and validates only the ones whose content
// it did not see in its last read; with a CacheDir the identities and
// verdicts are kept in a file, keyed by content and by build, so a start
// over unchanged bundles skips that work too (cache.go).
//
// [RefLoader] loads the two bundles pacto_impact compares: oci:// refs
// through the registry client, local directories confined to a workspace.
//
// It imports fleetgraph, bundle and its sub-packages; never
// Kubernetes and never MCP.
package source
