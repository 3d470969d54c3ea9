package controllers

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"time"

	"github.com/opencontainers/go-digest"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kubepact/kubepact/api/v1alpha1"
	"github.com/kubepact/kubepact/bundle"
	"github.com/kubepact/kubepact/bundle/contract"
	"github.com/kubepact/kubepact/bundle/failure"
	"github.com/kubepact/kubepact/bundle/oci"
	"github.com/kubepact/kubepact/bundle/validate"
)

// The reconciler's permissions; `make manifests` writes them to
// config/rbac/role.yaml. Secrets and ConfigMaps are read by name only.
//
// +kubebuilder:rbac:groups=kubepact.dev,resources=servicecontracts,verbs=get;list;watch
// +kubebuilder:rbac:groups=kubepact.dev,resources=servicecontracts/status,verbs=get;patch
// +kubebuilder:rbac:groups=apps,resources=deployments;statefulsets;daemonsets,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=services,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=secrets;configmaps,verbs=get
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

const (
	// ControllerName names the controller in logs, metrics and Events.
	ControllerName = "servicecontract"

	indexTarget  = ".spec.targetRef"
	indexService = ".spec.serviceRef"

	// waitRequeue is how soon an object that waits for something read by
	// name only (a pull Secret, a bundle ConfigMap) is looked at again.
	waitRequeue = 30 * time.Second
	// defaultInterval applies when spec.interval is unset (the API server
	// defaults it; a client that bypasses defaulting still gets this).
	defaultInterval = 10 * time.Minute
)

// ServiceContractReconciler reconciles ServiceContract objects.
type ServiceContractReconciler struct {
	// Client reads ServiceContracts and workload metadata from the cache and
	// patches status.
	Client client.Client
	// APIReader reads pull Secrets and bundle ConfigMaps by name, straight
	// from the API server: they are never listed, watched or cached.
	APIReader client.Reader
	// Recorder emits Events on ServiceContracts.
	Recorder events.EventRecorder
	// Options tune registry access and concurrency.
	Options ReconcilerOptions

	anon *oci.Client
	// surfaces memoizes the tool surface of each digest (see recordSurface).
	surfaces surfaceMemo
}

// ReconcilerOptions tune a ServiceContractReconciler. The zero value is
// HTTPS registries, no on-disk cache, default archive limits and two workers.
type ReconcilerOptions struct {
	// Registry is the one registry and cache option group every kubepact
	// command uses (PlainHTTP, CacheDir, NoCache, Limits bounding each
	// bundle's files). Its credential fields, ConfigPath and SecretFile,
	// are refused: the reconciler takes credentials only from each
	// ServiceContract's spec.pullSecretRef, so no namespace pulls with
	// credentials it was not given.
	Registry oci.Options
	// MaxConcurrentReconciles bounds parallel reconciles (default 2).
	MaxConcurrentReconciles int
	// Namespaces are the namespaces watched (the operator's --namespace);
	// empty: all. The injected-Pod report watches Pods in these only.
	Namespaces []string
}

// Validate refuses options the reconciler cannot honour, naming the field.
func (o *ReconcilerOptions) Validate() error {
	for _, f := range []struct {
		field string
		set   bool
	}{{"ConfigPath", o.Registry.ConfigPath != ""}, {"SecretFile", o.Registry.SecretFile != ""}} {
		if f.set {
			return fmt.Errorf("the operator does not accept Registry.%s: it takes registry credentials only from each ServiceContract's spec.pullSecretRef (a docker-registry Secret in the object's namespace), so that no namespace pulls with credentials it was not given", f.field)
		}
	}
	return nil
}

// SetupWithManager registers the reconciler, its field indexes and its
// watches with mgr. Workloads and Services are watched as metadata only.
func (r *ServiceContractReconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager) error {
	if err := r.Options.Validate(); err != nil {
		return err
	}
	var err error
	// An anonymous client: it never reads the operator's own Docker config.
	r.anon, err = r.Options.Registry.ClientWithCredentials(nil)
	if err != nil {
		return err
	}
	idx := mgr.GetFieldIndexer()
	if err := idx.IndexField(ctx, &v1alpha1.ServiceContract{}, indexTarget, func(o client.Object) []string {
		sc := o.(*v1alpha1.ServiceContract)
		return []string{sc.Spec.TargetRef.Kind + "/" + sc.Spec.TargetRef.Name}
	}); err != nil {
		return fmt.Errorf("indexing %s: %w", indexTarget, err)
	}
	if err := idx.IndexField(ctx, &v1alpha1.ServiceContract{}, indexService, func(o client.Object) []string {
		sc := o.(*v1alpha1.ServiceContract)
		if sc.Spec.ServiceRef == nil {
			return nil
		}
		return []string{sc.Spec.ServiceRef.Name}
	}); err != nil {
		return fmt.Errorf("indexing %s: %w", indexService, err)
	}
	workers := r.Options.MaxConcurrentReconciles
	if workers <= 0 {
		workers = 2
	}
	b := ctrl.NewControllerManagedBy(mgr).
		Named(ControllerName).
		For(&v1alpha1.ServiceContract{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		WithOptions(controller.Options{MaxConcurrentReconciles: workers})
	for kind, obj := range map[string]client.Object{"Deployment": &appsv1.Deployment{}, "StatefulSet": &appsv1.StatefulSet{}, "DaemonSet": &appsv1.DaemonSet{}} {
		b = b.Watches(obj, r.enqueueFor(indexTarget, func(name string) string { return kind + "/" + name }),
			builder.OnlyMetadata, builder.WithPredicates(existencePredicate()))
	}
	b = b.Watches(&corev1.Service{}, r.enqueueFor(indexService, func(name string) string { return name }),
		builder.OnlyMetadata, builder.WithPredicates(existencePredicate()))
	if err := b.Complete(r); err != nil {
		return err
	}
	return r.setupPodReporter(ctx, mgr)
}

// existencePredicate passes only creations and deletions: binding checks
// existence, so updates of a workload are of no interest.
func existencePredicate() predicate.Predicate {
	return predicate.Funcs{UpdateFunc: func(_ event.UpdateEvent) bool { return false }}
}

// enqueueFor maps a workload or Service to the ServiceContracts of its
// namespace that name it, through the field index.
func (r *ServiceContractReconciler) enqueueFor(index string, key func(name string) string) handler.EventHandler {
	return handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []reconcile.Request {
		var list v1alpha1.ServiceContractList
		if err := r.Client.List(ctx, &list, client.InNamespace(o.GetNamespace()), client.MatchingFields{index: key(o.GetName())}); err != nil {
			logf.FromContext(ctx).Error(err, "listing ServiceContracts by index", "index", index)
			return nil
		}
		reqs := make([]reconcile.Request, 0, len(list.Items))
		for i := range list.Items {
			reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
		}
		return reqs
	})
}

func workloadMeta(kind string) *metav1.PartialObjectMetadata {
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(appsv1.SchemeGroupVersion.WithKind(kind))
	return m
}

// Reconcile is the spine: resolve the bundle, validate it, bind it to its
// target, then summarize; the status is patched once, on the way out.
func (r *ServiceContractReconciler) Reconcile(ctx context.Context, req ctrl.Request) (result ctrl.Result, retErr error) {
	obj := &v1alpha1.ServiceContract{}
	if err := r.Client.Get(ctx, req.NamespacedName, obj); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if obj.Spec.Suspend {
		logf.FromContext(ctx).V(1).Info("suspended, not reconciling")
		return ctrl.Result{}, nil
	}
	before := obj.DeepCopy()
	defer func() {
		if err := r.patchStatus(ctx, before, obj); err != nil {
			retErr = errors.Join(retErr, err)
		}
	}()
	obj.Status.ObservedGeneration = obj.Generation

	res, err := r.resolve(ctx, obj)
	if err != nil {
		return r.finish(obj, asStepError(err, v1alpha1.ConditionBundleResolved, v1alpha1.ReasonRegistryUnavailable))
	}
	validErr := r.validate(ctx, obj, res)
	if validErr == nil {
		r.recordSurface(ctx, obj, res)
	} else {
		// The surface belongs to status.digest, now an invalid bundle.
		clearSurface(obj)
	}
	bindErr := r.bind(ctx, obj)
	return r.finish(obj, cmpErr(validErr, bindErr))
}

// cmpErr returns the first step failure, for Ready to report.
func cmpErr(errs ...error) *stepError {
	for _, err := range errs {
		if err != nil {
			return asStepError(err, v1alpha1.ConditionReady, v1alpha1.ReasonProgressing)
		}
	}
	return nil
}

// resolved is a bundle fetched and pinned to its digest.
type resolved struct {
	ref    string
	digest digest.Digest
	fsys   fs.FS
	client *oci.Client
	// bundle is the same bundle, loaded, for the tool surface.
	bundle *bundle.Bundle
}

// resolve fetches the bundle the spec names and pins it to a digest. A tag
// that now names another digest than the last one is followed and reported.
func (r *ServiceContractReconciler) resolve(ctx context.Context, obj *v1alpha1.ServiceContract) (*resolved, error) {
	if cm := obj.Spec.Bundle.ConfigMapRef; cm != nil {
		return r.resolveConfigMap(ctx, obj, cm.Name)
	}
	ref, err := oci.ParseReference(obj.Spec.Bundle.OCI)
	if err != nil {
		return nil, newStepError(v1alpha1.ConditionBundleResolved, v1alpha1.ReasonInvalidReference, stalled, "spec.bundle.oci: %v", err)
	}
	c, err := r.clientFor(ctx, obj)
	if err != nil {
		return nil, err
	}
	pulled, err := c.Pull(ctx, ref)
	if err != nil {
		return nil, classifyPull(ref, err)
	}
	bundleResolved.WithLabelValues("oci").Inc()
	res := &resolved{ref: pulled.Reference.String(), digest: pulled.Digest, fsys: pulled.FS, client: c, bundle: pulledBundle(pulled)}
	reason, msg := v1alpha1.ReasonSucceeded, fmt.Sprintf("resolved %s", res.ref)
	if prev := obj.Status.Digest; ref.Tag != "" && ref.Digest == "" && prev != "" && prev != string(pulled.Digest) && sameTag(obj.Status.ResolvedRef, ref) {
		reason = v1alpha1.ReasonTagMoved
		msg = fmt.Sprintf("tag %s moved from %s to %s", ref.Tag, prev, pulled.Digest)
		tagMoves.Inc()
		r.Recorder.Eventf(obj, nil, corev1.EventTypeNormal, v1alpha1.ReasonTagMoved, "Resolve", "%s", msg)
	}
	r.pin(obj, res, reason, msg)
	return res, nil
}

// sameTag reports whether the last resolved reference names the same
// registry, repository and tag as ref (so a new digest means the tag moved).
func sameTag(last string, ref oci.Reference) bool {
	prev, err := oci.ParseReference(last)
	return err == nil && prev.Registry == ref.Registry && prev.Repository == ref.Repository && prev.Tag == ref.Tag
}

// classifyPull maps a pull failure to its condition reason and retry
// through pullReasons: what the registry said for certain stalls; a
// registry that could not be reached is transient.
func classifyPull(ref oci.Reference, err error) error {
	row := pullReasons[failure.Classify(err)]
	return &stepError{v1alpha1.ConditionBundleResolved, cmp.Or(row.reason, v1alpha1.ReasonRegistryUnavailable), row.kind, fmt.Errorf("pulling %s: %w", ref, err)}
}

// resolveConfigMap reads a bundle kept in a ConfigMap, by name.
func (r *ServiceContractReconciler) resolveConfigMap(ctx context.Context, obj *v1alpha1.ServiceContract, name string) (*resolved, error) {
	cm := &corev1.ConfigMap{}
	if err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: obj.Namespace, Name: name}, cm); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, newStepError(v1alpha1.ConditionBundleResolved, v1alpha1.ReasonConfigMapNotFound, waiting, "ConfigMap %s not found", name)
		}
		return nil, fmt.Errorf("reading ConfigMap %s: %w", name, err)
	}
	layer, ok := cm.BinaryData[v1alpha1.ConfigMapBundleKey]
	if !ok {
		return nil, newStepError(v1alpha1.ConditionBundleResolved, v1alpha1.ReasonConfigMapNotFound, stalled,
			"ConfigMap %s has no binaryData key %q (write it with: kubepact pack DIR -o %s)", name, v1alpha1.ConfigMapBundleKey, v1alpha1.ConfigMapBundleKey)
	}
	b, err := bundle.LoadLayer(layer, &bundle.LoadOptions{Limits: r.Options.Registry.Limits})
	if err != nil {
		return nil, newStepError(v1alpha1.ConditionBundleResolved, v1alpha1.ReasonBundleUnreadable, stalled, "ConfigMap %s: %v", name, err)
	}
	bundleResolved.WithLabelValues("configmap").Inc()
	res := &resolved{ref: "configmap/" + name, digest: b.Identity, fsys: b.FS, client: r.anon, bundle: b}
	r.pin(obj, res, v1alpha1.ReasonSucceeded, "read "+res.ref)
	return res, nil
}

// pin records a resolved bundle in status.
func (r *ServiceContractReconciler) pin(obj *v1alpha1.ServiceContract, res *resolved, reason, msg string) {
	obj.Status.ResolvedRef = res.ref
	obj.Status.Digest = string(res.digest)
	now := metav1.Now()
	obj.Status.LastResolvedAt = &now
	setCondition(obj, v1alpha1.ConditionBundleResolved, metav1.ConditionTrue, reason, msg)
}

// clientFor returns the registry client for obj: the anonymous one, or one
// carrying the credentials of the pull Secret it names, read by name.
func (r *ServiceContractReconciler) clientFor(ctx context.Context, obj *v1alpha1.ServiceContract) (*oci.Client, error) {
	ref := obj.Spec.PullSecretRef
	if ref == nil {
		return r.anon, nil
	}
	s := &corev1.Secret{}
	if err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: obj.Namespace, Name: ref.Name}, s); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, newStepError(v1alpha1.ConditionBundleResolved, v1alpha1.ReasonPullSecretNotFound, waiting, "pull Secret %s not found", ref.Name)
		}
		return nil, fmt.Errorf("reading pull Secret %s: %w", ref.Name, err)
	}
	cfg, ok := s.Data[corev1.DockerConfigJsonKey]
	if !ok {
		return nil, newStepError(v1alpha1.ConditionBundleResolved, v1alpha1.ReasonPullSecretNotFound, stalled,
			"pull Secret %s has no %s key (create it with kubectl create secret docker-registry)", ref.Name, corev1.DockerConfigJsonKey)
	}
	c, err := r.Options.Registry.ClientWithCredentials(cfg)
	if err != nil {
		return nil, newStepError(v1alpha1.ConditionBundleResolved, v1alpha1.ReasonPullSecretNotFound, stalled, "pull Secret %s: %v", ref.Name, err)
	}
	return c, nil
}

// validate runs the three validation layers, following references through
// the same registry client (fail closed), and records the contract summary
// and findings.
func (r *ServiceContractReconciler) validate(ctx context.Context, obj *v1alpha1.ServiceContract, res *resolved) error {
	resolver := bundle.NewResolver(&bundle.ResolverOptions{Client: res.client, Limits: r.Options.Registry.Limits})
	result := validate.Validate(ctx, res.fsys, &validate.Options{Resolver: resolver})
	obj.Status.Contract = summarize(res.fsys)
	obj.Status.Findings, obj.Status.FindingsTotal = findings(result)
	if result.Valid() {
		setCondition(obj, v1alpha1.ConditionContractValid, metav1.ConditionTrue, v1alpha1.ReasonSucceeded,
			fmt.Sprintf("valid (%d warnings)", len(result.Warnings)))
		return nil
	}
	reason := v1alpha1.ReasonValidationFailed
	for _, f := range result.Errors {
		if f.Code == validate.CodePolicyRefUnresolved {
			reason = v1alpha1.ReasonPolicyUnresolved
			break
		}
	}
	first := result.Errors[0]
	return newStepError(v1alpha1.ConditionContractValid, reason, stalled, "%d validation errors; first: %s %s: %s",
		len(result.Errors), first.Code, first.Path, first.Message)
}

// summarize reads the contract facts status shows; nil when the contract
// does not parse (the findings say why).
func summarize(fsys fs.FS) *v1alpha1.ContractSummary {
	raw, err := fs.ReadFile(fsys, contract.FileName)
	if err != nil {
		return nil
	}
	c, err := contract.Parse(raw)
	if err != nil {
		return nil
	}
	s := &v1alpha1.ContractSummary{
		Service:      c.Service.Name,
		Version:      c.Service.Version,
		Dependencies: int32(min(len(c.Dependencies), 1<<30)),
	}
	if o := c.Service.Owner; o != nil {
		s.Owner = o.Team
		if s.Owner == "" {
			s.Owner = o.DRI
		}
	}
	for i, in := range c.Interfaces {
		if i == 64 {
			break
		}
		s.Interfaces = append(s.Interfaces, in.Name)
	}
	for _, in := range c.Interfaces {
		if in.Type == "grpc" {
			s.GRPCInterface = in.Name
			break
		}
	}
	s.HTTPInterface, s.HTTPPort = httpPort(fsys, c)
	return s
}

// findings keeps the first MaxFindings findings, errors first, and the total.
func findings(res validate.Result) ([]v1alpha1.Finding, int32) {
	total := len(res.Errors) + len(res.Warnings)
	out := make([]v1alpha1.Finding, 0, min(total, v1alpha1.MaxFindings))
	add := func(sev string, fs []validate.Finding) {
		for _, f := range fs {
			if len(out) == v1alpha1.MaxFindings {
				return
			}
			out = append(out, v1alpha1.Finding{Severity: sev, Path: f.Path, Code: f.Code, Message: truncate(f.Message, 1024)})
		}
	}
	add(v1alpha1.SeverityError, res.Errors)
	add(v1alpha1.SeverityWarning, res.Warnings)
	if len(out) == 0 {
		out = nil
	}
	return out, int32(min(total, 1<<30))
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}

// bind checks that the target workload, and the Service when one is named,
// exist (from the metadata cache).
func (r *ServiceContractReconciler) bind(ctx context.Context, obj *v1alpha1.ServiceContract) error {
	t := obj.Spec.TargetRef
	if err := r.Client.Get(ctx, types.NamespacedName{Namespace: obj.Namespace, Name: t.Name}, workloadMeta(t.Kind)); err != nil {
		if apierrors.IsNotFound(err) {
			return r.unbound(obj, newStepError(v1alpha1.ConditionTargetBound, v1alpha1.ReasonTargetNotFound, waiting, "%s %s not found", t.Kind, t.Name))
		}
		return fmt.Errorf("reading %s %s: %w", t.Kind, t.Name, err)
	}
	bound := fmt.Sprintf("%s/%s", t.Kind, t.Name)
	if s := obj.Spec.ServiceRef; s != nil {
		svc := &metav1.PartialObjectMetadata{}
		svc.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Service"))
		if err := r.Client.Get(ctx, types.NamespacedName{Namespace: obj.Namespace, Name: s.Name}, svc); err != nil {
			if apierrors.IsNotFound(err) {
				return r.unbound(obj, newStepError(v1alpha1.ConditionTargetBound, v1alpha1.ReasonServiceNotFound, waiting, "Service %s not found", s.Name))
			}
			return fmt.Errorf("reading Service %s: %w", s.Name, err)
		}
		bound += ", Service/" + s.Name
	}
	setCondition(obj, v1alpha1.ConditionTargetBound, metav1.ConditionTrue, v1alpha1.ReasonSucceeded, "bound to "+bound)
	return nil
}

func (r *ServiceContractReconciler) unbound(obj *v1alpha1.ServiceContract, se *stepError) error {
	setCondition(obj, v1alpha1.ConditionTargetBound, metav1.ConditionFalse, se.reason, se.Error())
	return se
}

// finish computes Ready, Reconciling and Stalled from the outcome and says
// when to come back.
func (r *ServiceContractReconciler) finish(obj *v1alpha1.ServiceContract, se *stepError) (ctrl.Result, error) {
	interval := defaultInterval
	if i := obj.Spec.Interval; i != nil && i.Duration > 0 {
		interval = i.Duration
	}
	if se == nil {
		msg := "bundle " + obj.Status.Digest
		if c := obj.Status.Contract; c != nil {
			msg = fmt.Sprintf("%s %s (%s)", c.Service, c.Version, obj.Status.Digest)
		}
		setCondition(obj, v1alpha1.ConditionReady, metav1.ConditionTrue, v1alpha1.ReasonSucceeded, msg)
		meta.RemoveStatusCondition(&obj.Status.Conditions, v1alpha1.ConditionReconciling)
		meta.RemoveStatusCondition(&obj.Status.Conditions, v1alpha1.ConditionStalled)
		return ctrl.Result{RequeueAfter: interval}, nil
	}
	msg := se.Error()
	switch se.kind {
	case transient:
		// The last good digest and summary stay; Ready stays as it was,
		// unless there never was a good one.
		if obj.Status.Digest == "" || se.condition != v1alpha1.ConditionBundleResolved {
			setCondition(obj, se.condition, metav1.ConditionFalse, se.reason, msg)
			setCondition(obj, v1alpha1.ConditionReady, metav1.ConditionFalse, se.reason, msg)
		}
		setCondition(obj, v1alpha1.ConditionReconciling, metav1.ConditionTrue, se.reason, "retrying: "+msg)
		meta.RemoveStatusCondition(&obj.Status.Conditions, v1alpha1.ConditionStalled)
		return ctrl.Result{}, se
	case waiting:
		setCondition(obj, se.condition, metav1.ConditionFalse, se.reason, msg)
		setCondition(obj, v1alpha1.ConditionReady, metav1.ConditionFalse, se.reason, msg)
		setCondition(obj, v1alpha1.ConditionReconciling, metav1.ConditionTrue, se.reason, "waiting: "+msg)
		meta.RemoveStatusCondition(&obj.Status.Conditions, v1alpha1.ConditionStalled)
		return ctrl.Result{RequeueAfter: min(waitRequeue, interval)}, nil
	default:
		setCondition(obj, se.condition, metav1.ConditionFalse, se.reason, msg)
		setCondition(obj, v1alpha1.ConditionReady, metav1.ConditionFalse, se.reason, msg)
		setCondition(obj, v1alpha1.ConditionStalled, metav1.ConditionTrue, se.reason, msg)
		meta.RemoveStatusCondition(&obj.Status.Conditions, v1alpha1.ConditionReconciling)
		return ctrl.Result{RequeueAfter: interval}, nil
	}
}

// patchStatus writes the status once, if it changed, and emits an Event
// when Ready changed.
func (r *ServiceContractReconciler) patchStatus(ctx context.Context, before, obj *v1alpha1.ServiceContract) error {
	if equality.Semantic.DeepEqual(before.Status, obj.Status) {
		return nil
	}
	if err := r.Client.Status().Patch(ctx, obj, client.MergeFrom(before)); err != nil {
		return client.IgnoreNotFound(err)
	}
	was := meta.FindStatusCondition(before.Status.Conditions, v1alpha1.ConditionReady)
	now := meta.FindStatusCondition(obj.Status.Conditions, v1alpha1.ConditionReady)
	if now != nil && (was == nil || was.Status != now.Status || was.Reason != now.Reason) {
		typ := corev1.EventTypeNormal
		if now.Status != metav1.ConditionTrue {
			typ = corev1.EventTypeWarning
		}
		r.Recorder.Eventf(obj, nil, typ, now.Reason, "Reconcile", "%s", truncate(now.Message, 900))
	}
	return nil
}

func setCondition(obj *v1alpha1.ServiceContract, typ string, status metav1.ConditionStatus, reason, msg string) {
	meta.SetStatusCondition(&obj.Status.Conditions, metav1.Condition{
		Type:               typ,
		Status:             status,
		Reason:             reason,
		Message:            truncate(msg, 4096),
		ObservedGeneration: obj.Generation,
	})
}
