package kube

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubepact/kubepact/api/v1alpha1"
	"github.com/kubepact/kubepact/bundle/oci"
	"github.com/kubepact/kubepact/fleetgraph"
)

// Workload kinds a target can be.
const (
	KindDeployment  = "Deployment"
	KindStatefulSet = "StatefulSet"
	KindDaemonSet   = "DaemonSet"
	// KindPacto is the target kind of a Pacto CR, as Pacto's own --k8s
	// source names it.
	KindPacto = "kubernetes"
)

// nsName names a namespaced object.
type nsName struct{ ns, name string }

// wlKey names a workload.
type wlKey struct{ ns, kind, name string }

// workload is what the feed keeps of a Deployment, StatefulSet or
// DaemonSet: its images, replicas and contract annotation.
type workload struct {
	images         []string
	desired, ready int32
	contract       string // AnnotationServiceContract
}

func workloadOf(obj any) (wlKey, *workload, bool) {
	switch o := obj.(type) {
	case *appsv1.Deployment:
		desired := int32(1)
		if o.Spec.Replicas != nil {
			desired = *o.Spec.Replicas
		}
		return wlKey{o.Namespace, KindDeployment, o.Name}, newWorkload(&o.ObjectMeta, &o.Spec.Template, desired, o.Status.ReadyReplicas), true
	case *appsv1.StatefulSet:
		desired := int32(1)
		if o.Spec.Replicas != nil {
			desired = *o.Spec.Replicas
		}
		return wlKey{o.Namespace, KindStatefulSet, o.Name}, newWorkload(&o.ObjectMeta, &o.Spec.Template, desired, o.Status.ReadyReplicas), true
	case *appsv1.DaemonSet:
		return wlKey{o.Namespace, KindDaemonSet, o.Name}, newWorkload(&o.ObjectMeta, &o.Spec.Template, o.Status.DesiredNumberScheduled, o.Status.NumberReady), true
	}
	return wlKey{}, nil, false
}

func newWorkload(m *metav1.ObjectMeta, p *corev1.PodTemplateSpec, desired, ready int32) *workload {
	w := &workload{desired: desired, ready: ready, contract: m.Annotations[AnnotationServiceContract]}
	for _, c := range p.Spec.Containers {
		w.images = append(w.images, c.Image)
	}
	return w
}

// observedRuntime is a workload target's observedRuntime: what the
// workload and its Service look like now.
type observedRuntime struct {
	WorkloadKind    string       `json:"workloadKind"`
	Exists          bool         `json:"exists"`
	ContainerImages []string     `json:"containerImages,omitempty"`
	Replicas        *replicas    `json:"replicas,omitempty"`
	Service         *serviceView `json:"service,omitempty"`
}

type replicas struct {
	Desired int32 `json:"desired"`
	Ready   int32 `json:"ready"`
}

type serviceView struct {
	Name   string   `json:"name"`
	Exists bool     `json:"exists"`
	Type   string   `json:"type,omitempty"`
	Ports  []string `json:"ports,omitempty"` // name:port/protocol
}

// ociRef reads a resolved or requested bundle reference as the fleet
// writes it (oci://registry/repository[:tag][@digest]), and its domain
// (registry and organisation path); ok is false for anything else (a
// ConfigMap bundle's configmap/NAME).
func ociRef(s string) (ref, domain string, ok bool) {
	r, err := oci.ParseReference(s)
	if err != nil || s == "" {
		return "", "", false
	}
	domain = r.Registry
	if i := strings.LastIndex(r.Repository, "/"); i >= 0 {
		domain += "/" + r.Repository[:i]
	}
	return oci.Scheme + r.String(), domain, true
}

// revisionOf is a ServiceContract's revision as its status tells it:
// identity, version, owner, interface names, validity and findings. nil
// until the reconciler has resolved a digest and read a service name.
func revisionOf(sc *v1alpha1.ServiceContract, source string) *fleetgraph.Revision {
	st := &sc.Status
	if st.Digest == "" || st.Contract == nil || st.Contract.Service == "" {
		return nil
	}
	r := &fleetgraph.Revision{Name: st.Contract.Service, Version: st.Contract.Version, Owner: st.Contract.Owner,
		Digest: st.Digest, Interfaces: slices.Clone(st.Contract.Interfaces), Source: source, Scopes: []string{sc.Namespace}}
	if ref, domain, ok := ociRef(st.ResolvedRef); ok {
		r.Domain, r.ResolvedRef = domain, ref
	}
	if sc.Spec.Bundle.OCI != "" {
		if ref, _, ok := ociRef(sc.Spec.Bundle.OCI); ok {
			r.RequestedRef = ref
		}
	}
	if c := meta.FindStatusCondition(st.Conditions, v1alpha1.ConditionContractValid); c != nil && c.Status != metav1.ConditionUnknown {
		valid := c.Status == metav1.ConditionTrue
		r.Valid = &valid
	}
	r.Findings = findingsOf(st.Findings)
	if st.LastResolvedAt != nil {
		r.FetchedAt = st.LastResolvedAt.UTC()
	}
	return r
}

// unusableStatus says why a ServiceContract's status, once the
// reconciler resolved a digest, still makes no revision: no service name
// in its contract summary, or a resolved reference that is not one. Empty
// when the status is usable or not resolved yet.
func unusableStatus(sc *v1alpha1.ServiceContract) string {
	st := &sc.Status
	if st.Digest == "" {
		return ""
	}
	if st.Contract == nil || st.Contract.Service == "" {
		return "ServiceContract " + sc.Namespace + "/" + sc.Name + " has digest " + st.Digest + " but no service name in status.contract: it is left out of the fleet"
	}
	if sc.Spec.Bundle.ConfigMapRef == nil && st.ResolvedRef != "" {
		if _, _, ok := ociRef(st.ResolvedRef); !ok {
			return "ServiceContract " + sc.Namespace + "/" + sc.Name + " has status.resolvedRef " + strconv.Quote(st.ResolvedRef) + ", not an OCI reference (oci://registry/repository[:tag]@digest): its revision has no registry domain"
		}
	}
	return ""
}

func findingsOf(in []v1alpha1.Finding) []fleetgraph.Finding {
	var out []fleetgraph.Finding
	for _, f := range in {
		out = append(out, fleetgraph.Finding{Code: f.Code, Severity: strings.ToLower(f.Severity), Path: f.Path, Message: f.Message})
	}
	return out
}

// enrich completes a status revision with what only the bundle holds:
// interfaces with their types, capabilities, declared edges, readiness
// and workload. The status's identity and verdict stay.
func enrich(r, fromBundle *fleetgraph.Revision) *fleetgraph.Revision {
	if fromBundle == nil {
		return r
	}
	out := *r
	out.PactoVersion = fromBundle.PactoVersion
	out.Workload = fromBundle.Workload
	out.Interfaces = slices.Clone(fromBundle.Interfaces)
	out.Capabilities = slices.Clone(fromBundle.Capabilities)
	out.Edges = slices.Clone(fromBundle.Edges)
	out.Readiness = fromBundle.Readiness
	return &out
}

// complianceOf reads a ServiceContract's conditions as a compliance
// verdict: an invalid contract is Invalid, a missing target NonCompliant,
// a Ready contract Compliant, anything in between Unknown; NotEvaluated
// before the first reconcile.
func complianceOf(sc *v1alpha1.ServiceContract) fleetgraph.Status {
	conds := sc.Status.Conditions
	switch {
	case len(conds) == 0:
		return fleetgraph.StatusNotEvaluated
	case meta.IsStatusConditionFalse(conds, v1alpha1.ConditionContractValid):
		return fleetgraph.StatusInvalid
	case meta.IsStatusConditionFalse(conds, v1alpha1.ConditionTargetBound):
		return fleetgraph.StatusNonCompliant
	case meta.IsStatusConditionTrue(conds, v1alpha1.ConditionReady):
		return fleetgraph.StatusCompliant
	}
	return fleetgraph.StatusUnknown
}

// targetOf is the target of a workload bound to a ServiceContract; w and
// svc are nil when the workload or Service does not exist (yet).
func targetOf(k wlKey, sc *v1alpha1.ServiceContract, w *workload, svc *corev1.Service, svcName, source string) *fleetgraph.Target {
	st := &sc.Status
	t := &fleetgraph.Target{Scope: k.ns, Kind: k.kind, Name: k.name, Service: sc.Name, Digest: st.Digest,
		Compliance: complianceOf(sc), Findings: findingsOf(st.Findings), Source: source}
	if st.Contract != nil && st.Contract.Service != "" {
		t.Service = st.Contract.Service
	}
	if ref, domain, ok := ociRef(st.ResolvedRef); ok {
		t.ResolvedRef, t.Domain = ref, domain
	}
	if ref, domain, ok := ociRef(sc.Spec.Bundle.OCI); ok {
		t.RequestedRef = ref
		if t.Domain == "" {
			t.Domain = domain
		}
	}
	if st.LastResolvedAt != nil {
		t.ReconciledAt = st.LastResolvedAt.UTC()
	}
	rt := observedRuntime{WorkloadKind: k.kind}
	if w != nil {
		rt.Exists, rt.ContainerImages, rt.Replicas = true, w.images, &replicas{Desired: w.desired, Ready: w.ready}
	}
	if svcName != "" {
		rt.Service = &serviceView{Name: svcName}
		if svc != nil {
			rt.Service.Exists, rt.Service.Type = true, string(svc.Spec.Type)
			for _, p := range svc.Spec.Ports {
				rt.Service.Ports = append(rt.Service.Ports, p.Name+":"+itoa(p.Port)+"/"+string(p.Protocol))
			}
		}
	}
	t.ObservedRuntime, _ = json.Marshal(rt) // plain structs: cannot fail
	return t
}

func itoa(n int32) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// pactoTarget reads a Pacto CR as a target, from either status shape:
// the monorepo operator's (contractStatus, contract{serviceName,
// resolvedRef}, findings, evaluationCoverage, observedRuntime,
// lastReconciledAt) or the standalone operator's (contractStatus,
// summary{total, passed, failed}). A CR its operator has not evaluated yet
// is NotEvaluated.
func pactoTarget(u *unstructured.Unstructured, source string) *fleetgraph.Target {
	t := &fleetgraph.Target{Scope: u.GetNamespace(), Kind: KindPacto, Name: u.GetName(), Service: u.GetName(), Source: source}
	st, _ := u.Object["status"].(map[string]any)
	if s, _, _ := unstructured.NestedString(st, "contract", "serviceName"); s != "" {
		t.Service = s
	}
	if s, _, _ := unstructured.NestedString(st, "contractStatus"); fleetgraph.Status(s).Valid() {
		t.Compliance = fleetgraph.Status(s)
	}
	if s, _, _ := unstructured.NestedString(st, "contract", "resolvedRef"); s != "" {
		if ref, domain, ok := ociRef(s); ok {
			t.ResolvedRef, t.Domain = ref, domain
			if _, d, found := strings.Cut(ref, "@"); found {
				t.Digest = d
			}
		}
	}
	if c, ok := st["evaluationCoverage"].(map[string]any); ok {
		t.Coverage = &fleetgraph.Coverage{Evaluated: intOf(c["evaluated"]), Required: intOf(c["required"])}
	} else if s, ok := st["summary"].(map[string]any); ok && s["total"] != nil { // the standalone shape
		t.Coverage = &fleetgraph.Coverage{Evaluated: intOf(s["passed"]) + intOf(s["failed"]), Required: intOf(s["total"])}
	}
	if fs, ok := st["findings"].([]any); ok {
		for _, f := range fs {
			m, _ := f.(map[string]any)
			code, _ := m["code"].(string)
			if code == "" {
				continue
			}
			sev, _ := m["severity"].(string)
			cat, _ := m["category"].(string)
			msg, _ := m["message"].(string)
			path, _ := m["contractPath"].(string)
			t.Findings = append(t.Findings, fleetgraph.Finding{Code: code, Severity: sev, Category: cat, Message: msg, Path: path})
		}
	}
	if rt, ok := st["observedRuntime"]; ok {
		t.ObservedRuntime, _ = json.Marshal(rt) // decoded from JSON: encodes again
	}
	if s, _, _ := unstructured.NestedString(st, "lastReconciledAt"); s != "" {
		if at, err := time.Parse(time.RFC3339, s); err == nil {
			t.EvidenceAt, t.ReconciledAt = at.UTC(), at.UTC()
		}
	}
	return t
}

// intOf reads a JSON number as unstructured decoding leaves it.
func intOf(v any) int {
	switch n := v.(type) {
	case int64:
		return int(n)
	case float64:
		return int(n)
	case int:
		return n
	}
	return 0
}
