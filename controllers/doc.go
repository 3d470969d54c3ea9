// Package controllers holds kubepact's Kubernetes controllers: the
// ServiceContract reconciler, which resolves a contract's bundle to a digest,
// validates it, binds it to its workload and reports all of it in status.
//
// The reconciler reads like one spine (see Reconcile): resolve → validate →
// bind → summarize, each a named sub-step that returns a *stepError carrying
// the condition reason it maps to, and one deferred status patch. Transient
// failures (a registry that cannot be reached) keep the last good digest and
// summary and are retried with backoff; failures only a change can fix
// (an invalid contract, an unresolvable policy) are reported as Stalled and
// looked at again each interval.
//
// What it may read is what its RBAC markers grant, and no more: it watches
// ServiceContracts and, as metadata only, the workloads and Services they
// target; it reads a pull Secret or a bundle ConfigMap by name with a direct
// GET (no list, no watch, no cache), and writes only ServiceContract status
// and Events. `make manifests` turns the markers into config/rbac/role.yaml.
//
// This package may import anything in the module except cmd.
package controllers
