package kube

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/kubepact/kubepact/api/v1alpha1"
)

// AnnotationServiceContract on a workload names the ServiceContract, in
// the workload's namespace, whose service it runs, for a workload no
// ServiceContract's spec.targetRef names (a canary, a second region).
const AnnotationServiceContract = "kubepact.dev/service-contract"

// maxPactoFindings bounds the findings kept from a Pacto CR's status.
const maxPactoFindings = 20

// slimMeta keeps the identity of an object and the one annotation the
// feed reads; labels, owner references, managedFields and every other
// annotation (kubectl's last-applied copy of the whole object among them)
// are dropped before the object reaches the cache.
func slimMeta(m *metav1.ObjectMeta) metav1.ObjectMeta {
	out := metav1.ObjectMeta{Name: m.Name, Namespace: m.Namespace, UID: m.UID, ResourceVersion: m.ResourceVersion, Generation: m.Generation}
	if v, ok := m.Annotations[AnnotationServiceContract]; ok {
		out.Annotations = map[string]string{AnnotationServiceContract: v}
	}
	return out
}

// slimPod keeps the container names and images of a pod template.
func slimPod(p *corev1.PodTemplateSpec) corev1.PodTemplateSpec {
	var out corev1.PodTemplateSpec
	for _, c := range p.Spec.Containers {
		out.Spec.Containers = append(out.Spec.Containers, corev1.Container{Name: c.Name, Image: c.Image})
	}
	return out
}

// transform returns the cache transform of the feed's types: each object
// replaced by a new one holding only what project.go reads. Anything else
// (a tombstone) passes unchanged.
func transform(in any) (any, error) {
	switch o := in.(type) {
	case *appsv1.Deployment:
		return &appsv1.Deployment{ObjectMeta: slimMeta(&o.ObjectMeta),
			Spec:   appsv1.DeploymentSpec{Replicas: o.Spec.Replicas, Template: slimPod(&o.Spec.Template)},
			Status: appsv1.DeploymentStatus{Replicas: o.Status.Replicas, ReadyReplicas: o.Status.ReadyReplicas}}, nil
	case *appsv1.StatefulSet:
		return &appsv1.StatefulSet{ObjectMeta: slimMeta(&o.ObjectMeta),
			Spec:   appsv1.StatefulSetSpec{Replicas: o.Spec.Replicas, Template: slimPod(&o.Spec.Template)},
			Status: appsv1.StatefulSetStatus{Replicas: o.Status.Replicas, ReadyReplicas: o.Status.ReadyReplicas}}, nil
	case *appsv1.DaemonSet:
		return &appsv1.DaemonSet{ObjectMeta: slimMeta(&o.ObjectMeta),
			Spec:   appsv1.DaemonSetSpec{Template: slimPod(&o.Spec.Template)},
			Status: appsv1.DaemonSetStatus{DesiredNumberScheduled: o.Status.DesiredNumberScheduled, NumberReady: o.Status.NumberReady}}, nil
	case *corev1.Service:
		s := &corev1.Service{ObjectMeta: slimMeta(&o.ObjectMeta), Spec: corev1.ServiceSpec{Type: o.Spec.Type}}
		for _, p := range o.Spec.Ports {
			s.Spec.Ports = append(s.Spec.Ports, corev1.ServicePort{Name: p.Name, Port: p.Port, Protocol: p.Protocol})
		}
		return s, nil
	case *v1alpha1.ServiceContract:
		sc := &v1alpha1.ServiceContract{ObjectMeta: slimMeta(&o.ObjectMeta), Spec: o.Spec, Status: o.Status}
		sc.Status.Conditions = nil
		for _, c := range o.Status.Conditions { // the messages are the reconciler's prose
			sc.Status.Conditions = append(sc.Status.Conditions, metav1.Condition{Type: c.Type, Status: c.Status, Reason: c.Reason})
		}
		return sc, nil
	case *unstructured.Unstructured:
		return slimPacto(o), nil
	case toolscache.DeletedFinalStateUnknown:
		return in, nil
	}
	return in, nil
}

// pactoStatusFields are the status fields of a Pacto CR the feed reads,
// from both status shapes.
var pactoStatusFields = []string{"contractStatus", "contract", "findings", "evaluationCoverage", "observedRuntime", "lastReconciledAt", "summary", "contractVersion"}

// slimPacto keeps a Pacto CR's identity and the status fields the feed
// reads; the spec, conditions, schemas and configuration values go.
func slimPacto(o *unstructured.Unstructured) *unstructured.Unstructured {
	out := &unstructured.Unstructured{Object: map[string]any{}}
	out.SetAPIVersion(o.GetAPIVersion())
	out.SetKind(o.GetKind())
	out.SetName(o.GetName())
	out.SetNamespace(o.GetNamespace())
	out.SetUID(o.GetUID())
	out.SetResourceVersion(o.GetResourceVersion())
	st, _ := o.Object["status"].(map[string]any)
	if st == nil {
		return out
	}
	keep := map[string]any{}
	for _, k := range pactoStatusFields {
		if v, ok := st[k]; ok {
			keep[k] = v
		}
	}
	if f, ok := keep["findings"].([]any); ok && len(f) > maxPactoFindings {
		keep["findings"] = f[:maxPactoFindings]
	}
	out.Object["status"] = keep
	return out
}
