// Package v1alpha1 is the kubepact.dev/v1alpha1 API: the ServiceContract kind,
// which binds a Pacto bundle (from an OCI registry or a ConfigMap) to the
// workload that serves it, and reports in its status what the bundle resolved
// to, whether it is valid and whether its target exists.
//
// Condition types and reasons are exported constants here, so that the
// reconciler, tests and clients agree on them. The conditions follow kstatus:
// Ready is the summary, Reconciling is True while work is in progress, and
// Stalled is True when the reconciler cannot make progress without a change
// to the spec or to the world.
//
// This package imports apimachinery only. zz_generated.deepcopy.go is written
// by controller-gen (make generate) and must not be edited.
//
// +kubebuilder:object:generate=true
// +groupName=kubepact.dev
package v1alpha1
