// Package controllers holds kubepact's ServiceContract reconciler and what
// it reports: a contract's bundle resolved to a digest, validated, bound to
// its workload, the tool surface its injected sidecars serve, and which
// Pods run which digest.
//
// # Reconciler
//
// The reconciler reads like one spine (see Reconcile): resolve → validate →
// bind → summarize, each a named sub-step that returns a *stepError carrying
// the condition reason it maps to, and one deferred status patch. Transient
// failures (a registry that cannot be reached) keep the last good digest and
// summary and are retried with backoff; failures only a change can fix
// (an invalid contract, an unresolvable policy) are reported as Stalled and
// looked at again each interval.
//
// # Surface memo
//
// status.toolSurfaces holds, for each tool mode, the digest of the tools an
// injected sidecar in that mode serves from the resolved bundle: the
// sidecar Config the webhook writes (injection.SidecarOptions.Config),
// digested as sidecar.ToolSurface digests it, with the function the sidecar
// itself reports with; status.toolSurfaceDigest is mode all's. The modes a
// digest lacks are computed together from one projection of the bundle
// (sidecar.ToolSurfaces), one digest at a time, and remembered per digest
// and mode in a bounded memo.
//
// # Pod report
//
// The operator never writes a Pod: a second controller (podReporter)
// watches the injected Pods' metadata only, through a cache of its own
// restricted to the label the webhook sets (injection.LabelInjected), and
// keeps status.pods — which Pods run which digest, stale ones marked — with
// a patch of that field alone, so that Pods coming and going never cost a
// registry round trip.
//
// # The fleet
//
// The live fleet (the fleetgraph/kube feed, the snapshots it builds and
// /mcp answering from them) is not this package's: the operator command
// runs it on every replica beside the reconciler, and this package never
// imports mcp. Only the feed's RBAC marker (Pacto's CRs, read only) sits
// here, so that the operator's one ClusterRole is generated in one place.
//
// # RBAC
//
// What the reconciler may read is what its RBAC markers grant, and no
// more: it watches ServiceContracts and, as metadata only, the workloads
// and Services they target; it reads a pull Secret or a bundle ConfigMap by
// name with a direct GET (no list, no watch, no cache), lists and watches
// injected Pods' metadata, and writes only ServiceContract status and
// Events. `make manifests` turns the markers of this package,
// controllers/injection and mcp/kubeauth into config/rbac/role.yaml.
//
// # Not here
//
// The Pod injection webhook and its certificates are controllers/injection;
// Kubernetes identity for /mcp is mcp/kubeauth; the sidecar's container,
// configuration and runtime are internal/sidecar. This package imports
// controllers/injection only for the names the webhook writes on a Pod,
// and never cmd.
//
// The envtest suite of this package is the reconciler's: one API server,
// the generated RBAC, and the reconciler running as the operator's
// ServiceAccount. The webhook's tests run on a control plane of their own
// in controllers/injection, identity's in mcp/kubeauth.
package controllers
