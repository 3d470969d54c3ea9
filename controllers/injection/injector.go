package injection

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/flowcontrol"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/kubepact/kubepact/api/v1alpha1"
	"github.com/kubepact/kubepact/internal/tokenbucket"
)

// InjectorPath is where the webhook server serves the sidecar injector.
const InjectorPath = "/mutate-v1-pod"

// Event reasons of the injector, on the ServiceContract (or, when it was
// not read, on the Pod's controller).
const (
	ReasonSidecarNotInjected = "SidecarNotInjected"
	ReasonSidecarRefused     = "SidecarRefused"
)

// Why a Pod is admitted without its sidecar (or, with inject-policy
// required, refused): the condition named in warnings, messages and Events
// besides the contract's own conditions (BundleResolved=False, …).
const (
	// SkipHostNetwork: the Pod shares its node's network namespace; a
	// sidecar there would listen on the node's loopback.
	SkipHostNetwork = "HostNetwork"
	// SkipNamespaceNotWatched: the operator does not watch the Pod's
	// namespace (--namespace), so no contract there is ever resolved.
	SkipNamespaceNotWatched = "NamespaceNotWatched"
	// SkipNotFound: no ServiceContract of that name in the Pod's namespace.
	SkipNotFound = "NotFound"
	// SkipInvalidAnnotation: the contract annotation is not a name.
	SkipInvalidAnnotation = "InvalidAnnotation"
	// SkipResolving: the reconciler had not resolved the contract's
	// current generation when the admission's wait ran out.
	SkipResolving = "Resolving"
	// SkipLookupFailed: neither the cache nor the API server answered
	// for the contract within the admission's budget.
	SkipLookupFailed = "LookupFailed"
	// SkipInternalError: the webhook itself failed (a panic, a patch it
	// could not encode).
	SkipInternalError = "InternalError"
	// SkipInconsistentReview: the AdmissionReview's namespace and its
	// Pod's disagree, or it has none; nothing is looked up for it.
	SkipInconsistentReview = "InconsistentReview"
)

// DefaultResolveWait is how long an admission waits, at most, for the
// reconciler to resolve a contract it has not looked at yet.
const DefaultResolveWait = 2 * time.Second

// defaultCallTimeout is the API server's timeout for one call when the
// request does not say (the generated configuration's timeoutSeconds), and
// maxCallTimeout the most a webhook configuration can give (30s): a
// request claiming more is held to it.
const (
	defaultCallTimeout = 5 * time.Second
	maxCallTimeout     = 30 * time.Second
)

// The webhook configuration `make manifests` writes to config/webhook: Pods
// on create, in namespaces labelled kubepact.dev/injection=enabled, carrying
// the contract annotation (CEL match conditions, so other Pods never reach
// the webhook), with a timeout well under the API server's 30s. Two entries
// serve the same path: failurePolicy Ignore for ordinary Pods (an operator
// that is down never blocks a rollout), and Fail for Pods that say
// kubepact.dev/inject-policy: required (they are never admitted without
// their sidecar, not even when the webhook cannot be reached).
//
// +kubebuilder:webhookconfiguration:mutating=true,name=kubepact-injector
// +kubebuilder:webhook:path=/mutate-v1-pod,mutating=true,failurePolicy=ignore,sideEffects=None,groups="",resources=pods,verbs=create,versions=v1,name=inject.kubepact.dev,admissionReviewVersions=v1,reinvocationPolicy=IfNeeded,timeoutSeconds=5,serviceName=kubepact-webhook,serviceNamespace=kubepact-system,patch=`{"namespaceSelector":{"matchLabels":{"kubepact.dev/injection":"enabled"}},"matchConditions":[{"name":"has-contract-annotation","expression":"has(object.metadata.annotations) && 'kubepact.dev/contract' in object.metadata.annotations"},{"name":"sidecar-optional","expression":"!has(object.metadata.annotations) || !('kubepact.dev/inject-policy' in object.metadata.annotations) || object.metadata.annotations['kubepact.dev/inject-policy'] != 'required'"}]}`
// +kubebuilder:webhook:path=/mutate-v1-pod,mutating=true,failurePolicy=fail,sideEffects=None,groups="",resources=pods,verbs=create,versions=v1,name=inject-required.kubepact.dev,admissionReviewVersions=v1,reinvocationPolicy=IfNeeded,timeoutSeconds=5,serviceName=kubepact-webhook,serviceNamespace=kubepact-system,patch=`{"namespaceSelector":{"matchLabels":{"kubepact.dev/injection":"enabled"}},"matchConditions":[{"name":"has-contract-annotation","expression":"has(object.metadata.annotations) && 'kubepact.dev/contract' in object.metadata.annotations"},{"name":"sidecar-required","expression":"has(object.metadata.annotations) && 'kubepact.dev/inject-policy' in object.metadata.annotations && object.metadata.annotations['kubepact.dev/inject-policy'] == 'required'"}]}`

// Injector is the mutating admission handler that adds the native sidecar
// to Pods that name a ServiceContract. It runs on every replica (the
// webhook server needs no leader).
//
// It fails open: whatever goes wrong inside it (a cache that cannot
// answer, an API server that does not, a panic), an ordinary Pod is
// admitted unchanged with a warning and an Event; only a Pod annotated
// kubepact.dev/inject-policy: required is ever refused. It answers only
// for the review's own Pod: the contract is looked up by name in the Pod's
// own namespace, and a review whose namespace and Pod disagree is answered
// without a lookup.
type Injector struct {
	// Reader reads ServiceContracts (the manager's cache).
	Reader client.Reader
	// APIReader reads a ServiceContract straight from the API server when
	// the cache does not have it (created an instant ago) or cannot
	// answer (not synced yet). Nil: the cache alone.
	APIReader client.Reader
	// Recorder emits Events when a Pod is admitted without its sidecar or
	// refused.
	Recorder events.EventRecorder
	// Options configure the sidecar.
	Options SidecarOptions
	// Namespaces are the namespaces the operator watches (its
	// --namespace); empty: all. A Pod elsewhere gets no sidecar, as no
	// contract there is ever resolved, and nothing is read for it.
	Namespaces []string
	// ResolveWait bounds how long an admission waits for the reconciler to
	// resolve a contract whose current generation it has not resolved yet
	// (a contract applied together with its workload); never more than
	// half the API server's timeout for the call. Zero: DefaultResolveWait;
	// negative: no wait.
	ResolveWait time.Duration

	// APIReadRate (per second, default 10) and APIReadBurst (default 50)
	// bound the reads through APIReader: a made-up review naming a
	// contract the cache does not hold makes one, as the operator's own
	// identity, in the API server's flow of its other requests. Past the
	// bound the cache's answer stands (none there: the Pod is admitted as
	// for a contract that does not exist; a cache that cannot answer:
	// LookupFailed).
	APIReadRate  float64
	APIReadBurst int

	apiReadsOnce sync.Once
	apiReads     *tokenbucket.Bucket

	// MaxReviewBytes bounds one AdmissionReview read (zero:
	// DefaultMaxReviewBytes), ReviewBytesInFlight those read or answered
	// at once (zero: DefaultReviewBytesInFlight): see bounded.
	MaxReviewBytes      int64
	ReviewBytesInFlight int64

	// ownerEvents bounds the Events written on a Pod's controller, whose
	// name a review states and nothing checks (see event).
	ownerEventsOnce sync.Once
	ownerEvents     flowcontrol.PassiveRateLimiter
}

// Register serves the injector on the manager's webhook server.
func (in *Injector) Register(srv webhook.Server) {
	srv.Register(InjectorPath, in.bounded(&webhook.Admission{Handler: in, WithContextFunc: withCallTimeout}))
}

// callTimeoutKey carries the API server's timeout for the call (its
// ?timeout= query parameter) in the request's context.
type callTimeoutKey struct{}

// withCallTimeout records the timeout the API server sends with every
// webhook call, so that the injector answers well within it.
func withCallTimeout(ctx context.Context, r *http.Request) context.Context {
	return context.WithValue(ctx, callTimeoutKey{}, callTimeout(r))
}

// podAdmission is one Pod being admitted: what every answer about it needs.
type podAdmission struct {
	in       *Injector
	log      logr.Logger
	pod      *corev1.Pod
	contract string
	required bool
	// noEvents: a dry run must have no side effects (the configuration
	// says sideEffects: None), and a review no API server sent gets none.
	noEvents bool
	warnings []string
}

// Handle admits one Pod.
func (in *Injector) Handle(ctx context.Context, req admission.Request) (resp admission.Response) {
	if req.Operation != admissionv1.Create || req.Kind.Kind != "Pod" {
		return admission.Allowed("not a Pod creation")
	}
	pod := &corev1.Pod{}
	if err := json.Unmarshal(req.Object.Raw, pod); err != nil {
		// Not from an API server, which sends the Pod it validated.
		return admission.Allowed("the Pod could not be decoded").WithWarnings("kubepact: admitted unchanged: the review's object is not a Pod kubepact can read")
	}
	name, ok := pod.Annotations[AnnotationContract]
	if !ok {
		return admission.Allowed("no " + AnnotationContract + " annotation")
	}
	a := &podAdmission{
		in:       in,
		log:      logf.FromContext(ctx).WithValues("namespace", req.Namespace, "contract", name, "pod", podName(pod)),
		pod:      pod,
		contract: name,
		required: pod.Annotations[AnnotationInjectPolicy] == InjectPolicyRequired,
		noEvents: req.DryRun != nil && *req.DryRun,
	}
	if v, set := pod.Annotations[AnnotationInjectPolicy]; set && v != InjectPolicyRequired {
		a.warnings = append(a.warnings, fmt.Sprintf("annotation %s=%q is not understood (the one value is %q); the default applies: admit without the sidecar when the contract cannot be injected", AnnotationInjectPolicy, truncate(v, 64), InjectPolicyRequired))
	}
	defer func() {
		if r := recover(); r != nil {
			a.log.Error(fmt.Errorf("%v", r), "Recovered from a panic while admitting a Pod")
			resp = a.skip(nil, SkipInternalError, "kubepact failed while admitting the Pod (an internal error; the operator logs it)")
		}
	}()
	return in.admit(ctx, a, req.Namespace)
}

// admit is the spine of one admission: checks on the Pod alone, then the
// contract's lookup in the Pod's own namespace, then the patch.
func (in *Injector) admit(ctx context.Context, a *podAdmission, ns string) admission.Response {
	pod := a.pod
	if ns == "" || (pod.Namespace != "" && pod.Namespace != ns) {
		// Never sent by an API server, which fills in the Pod's namespace
		// from the request's. Answering would tell the caller about a
		// namespace its Pod is not in.
		a.noEvents = true
		return a.skip(nil, SkipInconsistentReview, "the review's namespace and its Pod's differ or are missing; kubepact looks nothing up for it")
	}
	pod.Namespace = ns
	// Already injected (a reinvocation, or a Pod re-created from its own
	// spec): leave it exactly as it is.
	if c := findContainer(pod, in.Options.withDefaults().ContainerName); c != nil {
		if _, ours := pod.Annotations[AnnotationInjectedBundle]; ours && c.RestartPolicy != nil {
			return admission.Allowed("sidecar already injected").WithWarnings(a.warnings...)
		}
		return a.skip(nil, "Conflict", fmt.Sprintf("the Pod already has a container named %q that kubepact did not inject; it is left as it is", c.Name))
	}
	if pod.Spec.HostNetwork {
		return a.skip(nil, SkipHostNetwork, fmt.Sprintf("the Pod uses hostNetwork: its sidecar would listen on the node's own loopback (ports %d and %d), where every process on the node could call it and other such Pods on the node would collide with it; kubepact does not inject into hostNetwork Pods",
			in.Options.withDefaults().MCPPort, in.Options.withDefaults().HealthPort))
	}
	if a.contract == "" {
		return a.skip(nil, SkipInvalidAnnotation, "annotation "+AnnotationContract+" is empty; it names a ServiceContract in the Pod's namespace")
	}
	if errs := validation.IsDNS1123Subdomain(a.contract); len(errs) > 0 {
		return a.skip(nil, SkipInvalidAnnotation, fmt.Sprintf("annotation %s=%q is not a ServiceContract name: it names one in the Pod's own namespace by its name alone (lower-case letters, digits, '-' and '.'), never one of another namespace", AnnotationContract, truncate(a.contract, 64)))
	}
	if !in.watches(ns) {
		return a.skip(nil, SkipNamespaceNotWatched, "the operator does not watch this namespace (its --namespace, the chart's operator.namespaces), so no ServiceContract here is resolved; add the namespace there, or remove its "+LabelInjection+" label")
	}

	call := defaultCallTimeout
	if d, ok := ctx.Value(callTimeoutKey{}).(time.Duration); ok {
		call = d
	}
	// Answer by half the API server's timeout, whatever happens below:
	// past its timeout it would admit an ordinary Pod with no word.
	ctx, cancel := context.WithTimeout(ctx, call/2)
	defer cancel()
	key := client.ObjectKey{Namespace: ns, Name: a.contract}
	sc, err := in.lookup(ctx, key)
	switch {
	case apierrors.IsNotFound(err):
		return a.skip(nil, SkipNotFound, fmt.Sprintf("ServiceContract %s/%s does not exist", ns, a.contract))
	case err != nil:
		a.log.Error(err, "Reading the ServiceContract failed")
		return a.skip(nil, SkipLookupFailed, fmt.Sprintf("ServiceContract %s/%s could not be read: neither the operator's cache nor the API server answered in time; the Pod runs without its sidecar until it is re-created once the operator is healthy", ns, a.contract))
	}
	if pending(sc) {
		sc = in.awaitResolved(ctx, key, sc, call)
	}
	if cond, why := injectable(sc); cond != "" {
		return a.skip(sc, cond, why)
	}
	inj, err := BuildSidecar(sc, pod, in.Options)
	if err != nil {
		return a.skip(sc, "NotInjectable", err.Error())
	}
	for _, v := range inj.Volumes {
		if hasVolume(pod, v.Name) {
			return a.skip(sc, "Conflict", fmt.Sprintf("the Pod already has a volume named %q; it is left as it is", v.Name))
		}
	}
	return a.patch(sc, inj)
}

// patch answers with the Pod plus its sidecar.
func (a *podAdmission) patch(sc *v1alpha1.ServiceContract, inj *Injection) admission.Response {
	orig, err := json.Marshal(a.pod)
	if err != nil {
		a.log.Error(err, "Encoding the Pod failed")
		return a.skip(sc, SkipInternalError, "kubepact failed while admitting the Pod (an internal error; the operator logs it)")
	}
	pod := a.pod
	pod.Spec.InitContainers = append(pod.Spec.InitContainers, inj.Container)
	pod.Spec.Volumes = append(pod.Spec.Volumes, inj.Volumes...)
	if pod.Annotations == nil {
		pod.Annotations = map[string]string{}
	}
	pod.Annotations[AnnotationInjectedBundle] = inj.BundleRef
	pod.Annotations[AnnotationBundleDigest] = inj.Digest
	pod.Annotations[AnnotationUpstreamPortSource] = inj.PortSource
	if inj.ToolSurface != "" {
		pod.Annotations[AnnotationToolSurface] = inj.ToolSurface
	}
	if inj.GRPCPort != 0 {
		pod.Annotations[AnnotationGRPCPortSource] = inj.GRPCPortSource
	}
	if pod.Labels == nil {
		pod.Labels = map[string]string{}
	}
	pod.Labels[LabelInjected] = "true"
	raw, err := json.Marshal(pod)
	if err != nil {
		a.log.Error(err, "Encoding the injected Pod failed")
		return a.skip(sc, SkipInternalError, "kubepact failed while admitting the Pod (an internal error; the operator logs it)")
	}
	a.log.V(1).Info("Injecting the sidecar", "bundle", inj.BundleRef, "upstreamPort", inj.UpstreamPort, "upstreamPortSource", inj.PortSource,
		"grpcPort", inj.GRPCPort, "toolMode", inj.ToolMode)
	// The patch is computed against the Pod as it was sent: re-encoding
	// it first keeps fields the Pod type drops out of the patch.
	return admission.PatchResponseFromRaw(orig, raw).WithWarnings(append(a.warnings, inj.Warnings...)...)
}

// watches reports whether the operator's cache covers namespace ns.
func (in *Injector) watches(ns string) bool {
	return len(in.Namespaces) == 0 || slices.Contains(in.Namespaces, ns)
}

// lookup reads the Pod's contract from the cache, else — the cache does not
// have it yet, or cannot answer (not synced, not started) — straight from
// the API server. A NotFound error means neither has it.
func (in *Injector) lookup(ctx context.Context, key client.ObjectKey) (*v1alpha1.ServiceContract, error) {
	sc := &v1alpha1.ServiceContract{}
	cacheCtx := ctx
	if in.APIReader != nil {
		// A cache that has not synced blocks until it has: leave the API
		// server half of what is left.
		if dl, ok := ctx.Deadline(); ok {
			var cancel context.CancelFunc
			cacheCtx, cancel = context.WithTimeout(ctx, time.Until(dl)/2)
			defer cancel()
		}
	}
	cacheErr := in.Reader.Get(cacheCtx, key, sc)
	if cacheErr == nil || in.APIReader == nil {
		return sc, cacheErr
	}
	if !in.mayReadAPI() {
		return nil, cacheErr
	}
	live := &v1alpha1.ServiceContract{}
	err := in.APIReader.Get(ctx, key, live)
	switch {
	case err == nil:
		return live, nil
	case apierrors.IsNotFound(err):
		return nil, err
	case apierrors.IsNotFound(cacheErr):
		// The cache (synced) says there is none; the API server could not
		// confirm it: not a fact to act on.
		return nil, fmt.Errorf("reading %s from the API server: %w", key, err)
	}
	return nil, errors.Join(fmt.Errorf("reading %s from the cache: %w", key, cacheErr), fmt.Errorf("reading %s from the API server: %w", key, err))
}

// Defaults of Injector.APIReadRate and APIReadBurst: enough for the Pods
// of a large rollout applied with its contract (the cache lags the API
// server by milliseconds), not for a flood.
const (
	DefaultAPIReadRate  = 10
	DefaultAPIReadBurst = 50
)

// mayReadAPI takes one read through APIReader from its bound.
func (in *Injector) mayReadAPI() bool {
	in.apiReadsOnce.Do(func() {
		in.apiReads = tokenbucket.New(cmp.Or(in.APIReadRate, DefaultAPIReadRate), cmp.Or(in.APIReadBurst, DefaultAPIReadBurst), time.Now)
	})
	return in.apiReads.Allow()
}

// awaitResolved re-reads sc until the reconciler has resolved its current
// generation, for at most ResolveWait (and half the API server's timeout
// for the call). It returns the latest copy read.
func (in *Injector) awaitResolved(ctx context.Context, key client.ObjectKey, sc *v1alpha1.ServiceContract, call time.Duration) *v1alpha1.ServiceContract {
	wait := in.ResolveWait
	if wait == 0 {
		wait = DefaultResolveWait
	}
	wait = min(wait, call/2)
	if wait <= 0 {
		return sc
	}
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	// Mostly the cache answers; backing off keeps the API server reads
	// (when the cache has not seen the contract yet) to a handful.
	delay := 25 * time.Millisecond
	for pending(sc) {
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return sc
		case <-t.C:
		}
		delay = min(2*delay, 400*time.Millisecond)
		if next, err := in.lookup(ctx, key); err == nil {
			sc = next
		}
	}
	return sc
}

// pending reports whether the reconciler has yet to resolve sc's current
// generation (it was created or changed an instant ago). A suspended
// contract is never reconciled: its status is what it will stay.
func pending(sc *v1alpha1.ServiceContract) bool {
	if sc.Spec.Suspend {
		return false
	}
	return sc.Status.ObservedGeneration < sc.Generation || findCondition(sc, v1alpha1.ConditionBundleResolved) == nil
}

// injectable names the condition that keeps sc from giving a Pod its
// sidecar, and why; "" when it has a resolved, valid digest. Whether the
// target is bound does not matter: a Pod being admitted is the target's,
// whatever the reconciler has seen of it yet. The reasons are the
// conditions' own; their messages stay in the contract's status (kubectl
// describe), out of answers to whoever can reach the webhook's port.
func injectable(sc *v1alpha1.ServiceContract) (cond, why string) {
	name := sc.Namespace + "/" + sc.Name
	if pending(sc) {
		return SkipResolving, fmt.Sprintf("the operator had not resolved ServiceContract %s (generation %d) yet; the Pod runs without its sidecar until it is re-created (kubectl rollout restart) once the contract is Ready", name, sc.Generation)
	}
	for _, t := range []string{v1alpha1.ConditionBundleResolved, v1alpha1.ConditionContractValid} {
		c := findCondition(sc, t)
		switch {
		case c == nil:
			return t + "=Unknown", fmt.Sprintf("ServiceContract %s has no valid resolved bundle: %s is not reported", name, t)
		case c.Status != metav1.ConditionTrue:
			return fmt.Sprintf("%s=%s", c.Type, c.Status), fmt.Sprintf("ServiceContract %s has no valid resolved bundle: %s=%s, reason %s (kubectl describe servicecontract %s -n %s says why)", name, c.Type, c.Status, c.Reason, sc.Name, sc.Namespace)
		}
	}
	if sc.Status.Digest == "" || sc.Status.ResolvedRef == "" {
		return v1alpha1.ConditionBundleResolved + "=Unknown", fmt.Sprintf("ServiceContract %s has no resolved digest", name)
	}
	return "", ""
}

func findCondition(sc *v1alpha1.ServiceContract, typ string) *metav1.Condition {
	for i := range sc.Status.Conditions {
		if sc.Status.Conditions[i].Type == typ {
			return &sc.Status.Conditions[i]
		}
	}
	return nil
}

// skip admits the Pod without a sidecar, with a warning and an Event — or,
// when the Pod requires its sidecar, refuses it with the same message.
func (a *podAdmission) skip(sc *v1alpha1.ServiceContract, cond, msg string) admission.Response {
	if a.required {
		msg = fmt.Sprintf("kubepact: refused (%s: %s): %s, and the Pod requires its sidecar (%s: %s)", AnnotationContract, truncate(a.contract, 64), msg, AnnotationInjectPolicy, InjectPolicyRequired)
		if cond != "" {
			msg += "; failing condition: " + cond
		}
		if !a.noEvents {
			a.in.event(a.pod, sc, ReasonSidecarRefused, msg)
		}
		a.log.Info("Refusing a Pod without its sidecar", "condition", cond)
		return admission.Denied(msg).WithWarnings(a.warnings...)
	}
	msg = "kubepact: admitted without the sidecar: " + msg
	if cond != "" {
		msg += " (" + cond + ")"
	}
	if !a.noEvents {
		a.in.event(a.pod, sc, ReasonSidecarNotInjected, msg)
	}
	a.log.Info("Admitting a Pod without its sidecar", "condition", cond)
	return admission.Allowed("admitted without the sidecar").WithWarnings(append(a.warnings, msg)...)
}

// event records on the ServiceContract, or, when it was not read, on the
// controller that creates the Pod (a Pod being admitted has no name or UID
// of its own yet); a bare Pod gets the warning alone. The controller is
// whatever the review's ownerReferences say, so those Events are rate
// limited: a flood of made-up reviews cannot make the operator write
// Events without bound.
func (in *Injector) event(pod *corev1.Pod, sc *v1alpha1.ServiceContract, reason, msg string) {
	if in.Recorder == nil {
		return
	}
	var subject runtime.Object
	switch {
	case sc != nil:
		subject = sc
	default:
		ref := metav1.GetControllerOf(pod)
		if ref == nil {
			return
		}
		in.ownerEventsOnce.Do(func() { in.ownerEvents = flowcontrol.NewTokenBucketPassiveRateLimiter(5, 50) })
		if !in.ownerEvents.TryAccept() {
			return
		}
		subject = &metav1.PartialObjectMetadata{
			TypeMeta:   metav1.TypeMeta{APIVersion: ref.APIVersion, Kind: ref.Kind},
			ObjectMeta: metav1.ObjectMeta{Namespace: pod.Namespace, Name: ref.Name, UID: ref.UID},
		}
	}
	in.Recorder.Eventf(subject, nil, corev1.EventTypeWarning, reason, "Inject", "%s", truncate(msg, 900))
}

func findContainer(pod *corev1.Pod, name string) *corev1.Container {
	for _, list := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range list {
			if list[i].Name == name {
				return &list[i]
			}
		}
	}
	for i := range pod.Spec.EphemeralContainers {
		if pod.Spec.EphemeralContainers[i].Name == name {
			c := corev1.Container(pod.Spec.EphemeralContainers[i].EphemeralContainerCommon)
			return &c
		}
	}
	return nil
}

func hasVolume(pod *corev1.Pod, name string) bool {
	for _, v := range pod.Spec.Volumes {
		if v.Name == name {
			return true
		}
	}
	return false
}

func podName(pod *corev1.Pod) string {
	if pod.Name != "" {
		return pod.Name
	}
	return pod.GenerateName + "*"
}

// SetupInjector serves in on mgr's webhook server (on every replica),
// reading through mgr's cache and, when that cannot answer, its API reader;
// and, when rot is not nil (self-managed certificates), runs rot beside it; the
// readiness check then waits for the certificate and its caBundle. The
// webhook server must have been given rot.TLSConfig in its TLSOpts.
func SetupInjector(mgr ctrl.Manager, in *Injector, rot *CertRotator) error {
	if in.Reader == nil {
		in.Reader = mgr.GetClient()
	}
	if in.APIReader == nil {
		in.APIReader = mgr.GetAPIReader()
	}
	if in.Recorder == nil {
		in.Recorder = mgr.GetEventRecorder(InjectorName)
	}
	srv := mgr.GetWebhookServer()
	in.Register(srv)
	if err := mgr.AddReadyzCheck("webhook", srv.StartedChecker()); err != nil {
		return err
	}
	if rot == nil {
		return nil
	}
	if rot.APIReader == nil {
		rot.APIReader = mgr.GetAPIReader()
	}
	if rot.Client == nil {
		rot.Client = mgr.GetClient() // writes only: they never go through the cache
	}
	if err := mgr.Add(rot); err != nil {
		return err
	}
	return mgr.AddReadyzCheck("webhook-certificate", rot.Ready)
}

// InjectorName is the injector's name in Events and logs.
const InjectorName = "kubepact-injector"

// truncate cuts s to n bytes (on a rune boundary) and marks the cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}
