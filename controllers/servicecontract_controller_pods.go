package controllers

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/kubepact/kubepact/api/v1alpha1"
	"github.com/kubepact/kubepact/controllers/injection"
)

// The Pod reporter reads injected Pods' metadata and nothing else: list
// and watch, no get, no write. It never patches a Pod: what each Pod runs
// was written on it by the webhook at admission.
//
// +kubebuilder:rbac:groups="",resources=pods,verbs=list;watch

// PodsControllerName names the controller that keeps status.pods.
const PodsControllerName = ControllerName + "-pods"

const indexPodContract = "metadata.annotations." + injection.AnnotationContract

// podReporter keeps status.pods of each ServiceContract: how many of the
// Pods the webhook injected for it run which bundle digest. It is its own
// controller beside the reconciler so that a Pod coming or going never
// costs a registry round trip; it writes status.pods alone (a merge patch
// of that one field), which the reconciler never writes.
type podReporter struct {
	client client.Client
	pods   cache.Cache
}

// podMeta is the metadata-only Pod the reporter's cache holds.
func podMeta() *metav1.PartialObjectMetadata {
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Pod"))
	return m
}

// setupPodReporter gives the reporter its own cache: Pods as metadata only
// (metadata.k8s.io PartialObjectMetadata), only those labelled
// kubepact.dev/injected=true, stripped to the fields the report reads.
func (r *ServiceContractReconciler) setupPodReporter(ctx context.Context, mgr ctrl.Manager) error {
	opts := cache.Options{
		HTTPClient:           mgr.GetHTTPClient(),
		Scheme:               mgr.GetScheme(),
		Mapper:               mgr.GetRESTMapper(),
		DefaultLabelSelector: labels.SelectorFromSet(labels.Set{injection.LabelInjected: "true"}),
		DefaultTransform:     slimPodMeta,
	}
	if len(r.Options.Namespaces) > 0 {
		opts.DefaultNamespaces = map[string]cache.Config{}
		for _, ns := range r.Options.Namespaces {
			opts.DefaultNamespaces[ns] = cache.Config{}
		}
	}
	pods, err := cache.New(mgr.GetConfig(), opts)
	if err != nil {
		return fmt.Errorf("the Pod cache: %w", err)
	}
	if err := pods.IndexField(ctx, podMeta(), indexPodContract, func(o client.Object) []string {
		if name := o.GetAnnotations()[injection.AnnotationContract]; name != "" {
			return []string{name}
		}
		return nil
	}); err != nil {
		return fmt.Errorf("indexing %s: %w", indexPodContract, err)
	}
	if err := mgr.Add(pods); err != nil {
		return err
	}
	rep := &podReporter{client: r.Client, pods: pods}
	toContract := handler.TypedEnqueueRequestsFromMapFunc(func(_ context.Context, o *metav1.PartialObjectMetadata) []reconcile.Request {
		name := o.GetAnnotations()[injection.AnnotationContract]
		if name == "" {
			return nil
		}
		return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: o.GetNamespace(), Name: name}}}
	})
	// A Pod's own status changes reach a metadata watch too (its
	// resourceVersion moves); only what the report reads passes.
	podChanged := predicate.TypedFuncs[*metav1.PartialObjectMetadata]{
		UpdateFunc: func(e event.TypedUpdateEvent[*metav1.PartialObjectMetadata]) bool {
			return reportedPod(e.ObjectOld) != reportedPod(e.ObjectNew)
		},
	}
	// The reporter reads status.digest: a new contract, or a digest
	// that moved, is reported again.
	digestChanged := predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		o, ok1 := e.ObjectOld.(*v1alpha1.ServiceContract)
		n, ok2 := e.ObjectNew.(*v1alpha1.ServiceContract)
		return !ok1 || !ok2 || o.Status.Digest != n.Status.Digest
	}}
	return ctrl.NewControllerManagedBy(mgr).
		Named(PodsControllerName).
		For(&v1alpha1.ServiceContract{}, builder.WithPredicates(digestChanged)).
		WatchesRawSource(source.Kind(pods, podMeta(), toContract, podChanged)).
		Complete(rep)
}

// reportedPod is what the report reads of a Pod.
type podFacts struct {
	contract, digest, surface string
	deleting                  bool
}

func reportedPod(o *metav1.PartialObjectMetadata) podFacts {
	a := o.GetAnnotations()
	return podFacts{a[injection.AnnotationContract], a[injection.AnnotationBundleDigest], a[injection.AnnotationToolSurface], o.GetDeletionTimestamp() != nil}
}

// slimPodMeta keeps of a Pod's metadata what the report and the cache
// need: its name, namespace, identity, resourceVersion, deletion and
// kubepact's own annotations and label.
func slimPodMeta(in any) (any, error) {
	m, ok := in.(*metav1.PartialObjectMetadata)
	if !ok {
		return in, nil
	}
	out := &metav1.PartialObjectMetadata{TypeMeta: m.TypeMeta, ObjectMeta: metav1.ObjectMeta{
		Name: m.Name, Namespace: m.Namespace, UID: m.UID, ResourceVersion: m.ResourceVersion,
		DeletionTimestamp: m.DeletionTimestamp,
	}}
	if v, ok := m.Labels[injection.LabelInjected]; ok {
		out.Labels = map[string]string{injection.LabelInjected: v}
	}
	for _, k := range []string{injection.AnnotationContract, injection.AnnotationBundleDigest, injection.AnnotationToolSurface} {
		if v, ok := m.Annotations[k]; ok {
			if out.Annotations == nil {
				out.Annotations = map[string]string{}
			}
			out.Annotations[k] = v
		}
	}
	return out, nil
}

// Reconcile writes status.pods from the Pod cache, when it changed.
func (p *podReporter) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	obj := &v1alpha1.ServiceContract{}
	if err := p.client.Get(ctx, req.NamespacedName, obj); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("PodList"))
	if err := p.pods.List(ctx, list, client.InNamespace(req.Namespace), client.MatchingFields{indexPodContract: req.Name}); err != nil {
		return ctrl.Result{}, fmt.Errorf("listing injected Pods: %w", err)
	}
	want := podsReport(obj.Status.Digest, list.Items)
	if equality.Semantic.DeepEqual(obj.Status.Pods, want) {
		return ctrl.Result{}, nil
	}
	before := obj.DeepCopy()
	obj.Status.Pods = want
	return ctrl.Result{}, client.IgnoreNotFound(p.client.Status().Patch(ctx, obj, client.MergeFrom(before)))
}

// unknownDigest groups injected Pods that carry no digest annotation.
const unknownDigest = "unknown"

// podsReport counts pods by the bundle digest their sidecar was pinned to
// (injection.AnnotationBundleDigest), against current, the contract's digest: the
// current digest first, then by count, each naming its first Pods in name
// order; nil without Pods. Pods being deleted are left out. It is bounded
// by v1alpha1.MaxPodDigests and MaxPodNames; Total and Stale count all.
func podsReport(current string, pods []metav1.PartialObjectMetadata) *v1alpha1.PodsStatus {
	by := map[string]*v1alpha1.DigestPods{}
	out := &v1alpha1.PodsStatus{}
	for i := range pods {
		f := reportedPod(&pods[i])
		if f.deleting {
			continue
		}
		d := cmp.Or(f.digest, unknownDigest)
		e := by[d]
		if e == nil {
			e = &v1alpha1.DigestPods{Digest: d, Current: d == current && current != ""}
			by[d] = e
		}
		if e.ToolSurfaceDigest == "" {
			e.ToolSurfaceDigest = f.surface
		}
		e.Count++
		e.Pods = append(e.Pods, pods[i].Name)
		out.Total++
		if !e.Current {
			out.Stale++
		}
	}
	if out.Total == 0 {
		return nil
	}
	for _, e := range by {
		slices.Sort(e.Pods)
		e.Pods = e.Pods[:min(len(e.Pods), v1alpha1.MaxPodNames)]
		out.Digests = append(out.Digests, *e)
	}
	slices.SortFunc(out.Digests, func(a, b v1alpha1.DigestPods) int {
		if a.Current != b.Current {
			if a.Current {
				return -1
			}
			return 1
		}
		return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Digest, b.Digest))
	})
	out.Digests = out.Digests[:min(len(out.Digests), v1alpha1.MaxPodDigests)]
	return out
}
