package controllers

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/go-logr/logr"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/kubepact/kubepact/api/v1alpha1"
)

// InjectorPath is where the webhook server serves the sidecar injector.
const InjectorPath = "/mutate-v1-pod"

// Event reasons of the injector, on the ServiceContract (or, when it does
// not exist, on the Pod's controller).
const (
	ReasonSidecarNotInjected = "SidecarNotInjected"
	ReasonSidecarRefused     = "SidecarRefused"
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
// webhook server needs no leader) and reads ServiceContracts from the
// manager's cache.
type Injector struct {
	// Reader reads ServiceContracts (the manager's cache).
	Reader client.Reader
	// Recorder emits Events when a Pod is admitted without its sidecar or
	// refused.
	Recorder events.EventRecorder
	// Options configure the sidecar.
	Options SidecarOptions
}

// Register serves the injector on the manager's webhook server.
func (in *Injector) Register(srv webhook.Server) {
	srv.Register(InjectorPath, &webhook.Admission{Handler: in})
}

// Handle admits one Pod.
func (in *Injector) Handle(ctx context.Context, req admission.Request) admission.Response {
	if req.Operation != admissionv1.Create || req.Kind.Kind != "Pod" {
		return admission.Allowed("not a Pod creation")
	}
	pod := &corev1.Pod{}
	if err := json.Unmarshal(req.Object.Raw, pod); err != nil {
		return admission.Errored(http.StatusBadRequest, fmt.Errorf("decoding the Pod: %w", err))
	}
	name, ok := pod.Annotations[AnnotationContract]
	if !ok {
		return admission.Allowed("no " + AnnotationContract + " annotation")
	}
	ns := req.Namespace
	log := logf.FromContext(ctx).WithValues("namespace", ns, "contract", name, "pod", podName(pod))
	required := pod.Annotations[AnnotationInjectPolicy] == InjectPolicyRequired
	// A dry run must have no side effects (the configuration says
	// sideEffects: None): no Events for it.
	dryRun := req.DryRun != nil && *req.DryRun
	var warnings []string
	if v, set := pod.Annotations[AnnotationInjectPolicy]; set && v != InjectPolicyRequired {
		warnings = append(warnings, fmt.Sprintf("annotation %s=%q is not understood (the one value is %q); the default applies: admit without the sidecar when the contract is not Ready", AnnotationInjectPolicy, v, InjectPolicyRequired))
	}

	// Already injected (a reinvocation, or a Pod re-created from its own
	// spec): leave it exactly as it is.
	if c := findContainer(pod, in.Options.withDefaults().ContainerName); c != nil {
		if _, ours := pod.Annotations[AnnotationInjectedBundle]; ours && c.RestartPolicy != nil {
			return admission.Allowed("sidecar already injected").WithWarnings(warnings...)
		}
		return in.skip(log, dryRun, pod, nil, required, warnings, "Conflict",
			fmt.Sprintf("the Pod already has a container named %q that kubepact did not inject; it is left as it is", c.Name))
	}
	if name == "" {
		return in.skip(log, dryRun, pod, nil, required, warnings, "InvalidAnnotation",
			"annotation "+AnnotationContract+" is empty; it names a ServiceContract in the Pod's namespace")
	}

	sc := &v1alpha1.ServiceContract{}
	if err := in.Reader.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, sc); err != nil {
		if apierrors.IsNotFound(err) {
			return in.skip(log, dryRun, pod, nil, required, warnings, "NotFound",
				fmt.Sprintf("ServiceContract %s/%s does not exist", ns, name))
		}
		// Reading our own cache failed: say so; the failure policy decides.
		return admission.Errored(http.StatusInternalServerError, fmt.Errorf("reading ServiceContract %s/%s: %w", ns, name, err))
	}
	if cond, why := notReady(sc); cond != "" {
		return in.skip(log, dryRun, pod, sc, required, warnings, cond,
			fmt.Sprintf("ServiceContract %s/%s is not Ready: %s", ns, name, why))
	}
	inj, err := BuildSidecar(sc, pod, in.Options)
	if err != nil {
		return in.skip(log, dryRun, pod, sc, required, warnings, "NotInjectable", err.Error())
	}
	for _, v := range inj.Volumes {
		if hasVolume(pod, v.Name) {
			return in.skip(log, dryRun, pod, sc, required, warnings, "Conflict",
				fmt.Sprintf("the Pod already has a volume named %q; it is left as it is", v.Name))
		}
	}
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
	if pod.Labels == nil {
		pod.Labels = map[string]string{}
	}
	pod.Labels[LabelInjected] = "true"
	raw, err := json.Marshal(pod)
	if err != nil {
		return admission.Errored(http.StatusInternalServerError, err)
	}
	log.V(1).Info("Injecting the sidecar", "bundle", inj.BundleRef, "upstreamPort", inj.UpstreamPort, "upstreamPortSource", inj.PortSource)
	return admission.PatchResponseFromRaw(req.Object.Raw, raw).WithWarnings(append(warnings, inj.Warnings...)...)
}

// skip admits the Pod without a sidecar, with a warning and an Event — or,
// when the Pod requires its sidecar, refuses it with the same message.
func (in *Injector) skip(log logr.Logger, dryRun bool, pod *corev1.Pod, sc *v1alpha1.ServiceContract, required bool, warnings []string, cond, msg string) admission.Response {
	if required {
		msg = fmt.Sprintf("kubepact: refused (%s: %s): %s, and the Pod requires its sidecar (%s: %s)", AnnotationContract, pod.Annotations[AnnotationContract], msg, AnnotationInjectPolicy, InjectPolicyRequired)
		if cond != "" {
			msg += "; failing condition: " + cond
		}
		if !dryRun {
			in.event(pod, sc, ReasonSidecarRefused, msg)
		}
		log.Info("Refusing a Pod without its sidecar", "condition", cond)
		return admission.Denied(msg).WithWarnings(warnings...)
	}
	msg = "kubepact: admitted without the sidecar: " + msg
	if cond != "" {
		msg += " (" + cond + ")"
	}
	if !dryRun {
		in.event(pod, sc, ReasonSidecarNotInjected, msg)
	}
	log.Info("Admitting a Pod without its sidecar", "condition", cond)
	return admission.Allowed("admitted without the sidecar").WithWarnings(append(warnings, msg)...)
}

// event records on the ServiceContract, or, when there is none, on the
// controller that creates the Pod (a Pod being admitted has no name or UID
// of its own yet).
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
		subject = &metav1.PartialObjectMetadata{
			TypeMeta:   metav1.TypeMeta{APIVersion: ref.APIVersion, Kind: ref.Kind},
			ObjectMeta: metav1.ObjectMeta{Namespace: pod.Namespace, Name: ref.Name, UID: ref.UID},
		}
	}
	in.Recorder.Eventf(subject, nil, corev1.EventTypeWarning, reason, "Inject", "%s", truncate(msg, 900))
}

// notReady names the condition that holds a contract back, and why; ""
// when it is Ready at its current generation and pinned to a digest.
func notReady(sc *v1alpha1.ServiceContract) (cond, why string) {
	var ready *metav1.Condition
	for i := range sc.Status.Conditions {
		if sc.Status.Conditions[i].Type == v1alpha1.ConditionReady {
			ready = &sc.Status.Conditions[i]
		}
	}
	if ready != nil && ready.Status == metav1.ConditionTrue && sc.Status.Digest != "" {
		return "", ""
	}
	// The step that fails says more than Ready does.
	for _, t := range []string{v1alpha1.ConditionBundleResolved, v1alpha1.ConditionContractValid, v1alpha1.ConditionTargetBound} {
		for _, c := range sc.Status.Conditions {
			if c.Type == t && c.Status != metav1.ConditionTrue {
				return fmt.Sprintf("%s=%s", c.Type, c.Status), fmt.Sprintf("%s=%s, reason %s: %s", c.Type, c.Status, c.Reason, c.Message)
			}
		}
	}
	if ready == nil {
		return v1alpha1.ConditionReady + "=Unknown", "it has not been reconciled yet"
	}
	return fmt.Sprintf("%s=%s", ready.Type, ready.Status), fmt.Sprintf("%s=%s, reason %s: %s", ready.Type, ready.Status, ready.Reason, ready.Message)
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

// SetupInjector serves in on mgr's webhook server (on every replica) and,
// when rot is not nil (self-managed certificates), runs rot beside it; the
// readiness check then waits for the certificate and its caBundle. The
// webhook server must have been given rot.TLSConfig in its TLSOpts.
func SetupInjector(mgr ctrl.Manager, in *Injector, rot *CertRotator) error {
	if in.Reader == nil {
		in.Reader = mgr.GetClient()
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
