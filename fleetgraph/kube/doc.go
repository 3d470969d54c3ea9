// Package kube feeds a fleetgraph.Builder from a Kubernetes API server: the
// live fleet the operator serves at /mcp and `kubepact mcp --fleet --k8s`
// reads on a laptop.
//
// A Feed keeps its own informer cache (controller-runtime's cache package)
// on ServiceContracts (kubepact.dev), Deployments, StatefulSets,
// DaemonSets, Services and, when discovery finds the CRD, Pacto's own
// pacto.trianalab.io Pacto CRs, read-only. It never watches Secrets,
// ConfigMaps or Pods. Transforms project every object down to the fields
// the graph needs before it reaches the cache (transform.go): no
// managedFields, no last-applied annotation, no pod template beyond the
// container images.
//
// Every event becomes upserts and deletes on the Builder (project.go):
//
//   - a ServiceContract with a resolved digest is a revision (identity and
//     summary from its status; dependencies, interfaces and readiness from
//     the bundle itself, read once per digest through a BundleLoader, which
//     in the operator reads the reconciler's on-disk digest cache);
//   - a workload that a ServiceContract's spec.targetRef names, or that
//     carries the kubepact.dev/service-contract annotation, is a target:
//     namespace, kind, name, the contract's service and digest, its
//     compliance from the contract's conditions, and as observed runtime
//     its images, replicas (ready/desired) and the Service named by
//     spec.serviceRef;
//   - a Pacto CR is a target read from its status (both status shapes:
//     the monorepo operator's and the standalone one's), as Pacto's own
//     --k8s source reads it.
//
// Health (health.go): a watch error, or a failed probe of a resource (a
// one-item metadata list, every ProbeInterval), makes the source partial
// with a limitation naming the resource; the records of that resource are
// kept as last seen, and the next good probe clears it. A limitation
// about one namespace carries it as its Scope (a restricted reader who
// cannot see the namespace is not shown it); one about the whole cluster
// is ClusterWide and shown to everyone. Each probe also asks discovery
// again, so a CRD (Pacto's or ours) installed after start is watched
// without a restart, and one removed takes its records out of the fleet.
// Nothing on the query path calls the API server: queries read snapshots
// only.
//
// The package is the only one below cmd and controllers that imports
// Kubernetes. It imports fleetgraph and bundle; never mcp, never
// fleetgraph/source (depguard in .golangci.yml enforces it).
package kube
