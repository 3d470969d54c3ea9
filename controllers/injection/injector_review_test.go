package injection_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/kubepact/kubepact/api/v1alpha1"
	"github.com/kubepact/kubepact/controllers/injection"
)

// fakeReader is a sub-step stand-in for the cache or the API reader: it
// answers Get from get, counting the calls.
type fakeReader struct {
	calls atomic.Int32
	get   func(ctx context.Context, n int32) (*v1alpha1.ServiceContract, error)
}

func (f *fakeReader) Get(ctx context.Context, _ client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	sc, err := f.get(ctx, f.calls.Add(1))
	if err != nil {
		return err
	}
	sc.DeepCopyInto(obj.(*v1alpha1.ServiceContract))
	return nil
}

func (f *fakeReader) List(context.Context, client.ObjectList, ...client.ListOption) error {
	return errors.New("not used")
}

func answer(sc *v1alpha1.ServiceContract) *fakeReader {
	return &fakeReader{get: func(context.Context, int32) (*v1alpha1.ServiceContract, error) { return sc.DeepCopy(), nil }}
}

func failing(err error) *fakeReader {
	return &fakeReader{get: func(context.Context, int32) (*v1alpha1.ServiceContract, error) { return nil, err }}
}

var notFound = apierrors.NewNotFound(schema.GroupResource{Group: v1alpha1.GroupVersion.Group, Resource: "servicecontracts"}, "catalog")

// reconciled is the contract as the reconciler leaves it once it resolved
// and validated the bundle of generation 1, whatever became of the rest.
func reconciled(mod ...func(*v1alpha1.ServiceContract)) *v1alpha1.ServiceContract {
	return resolvedContract(append([]func(*v1alpha1.ServiceContract){func(sc *v1alpha1.ServiceContract) {
		sc.Generation, sc.Status.ObservedGeneration = 1, 1
		for _, typ := range []string{v1alpha1.ConditionBundleResolved, v1alpha1.ConditionContractValid} {
			setStatus(sc, typ, metav1.ConditionTrue, v1alpha1.ReasonSucceeded)
		}
		setStatus(sc, v1alpha1.ConditionTargetBound, metav1.ConditionFalse, v1alpha1.ReasonTargetNotFound)
		setStatus(sc, v1alpha1.ConditionReady, metav1.ConditionFalse, v1alpha1.ReasonTargetNotFound)
	}}, mod...)...)
}

func setStatus(sc *v1alpha1.ServiceContract, typ string, status metav1.ConditionStatus, reason string) {
	for i := range sc.Status.Conditions {
		if sc.Status.Conditions[i].Type == typ {
			sc.Status.Conditions[i].Status, sc.Status.Conditions[i].Reason = status, reason
			return
		}
	}
	sc.Status.Conditions = append(sc.Status.Conditions, metav1.Condition{Type: typ, Status: status, Reason: reason, Message: "secret detail of " + typ, ObservedGeneration: sc.Generation})
}

// review is the AdmissionReview request an API server sends for pod in ns.
func review(t *testing.T, ns string, pod *corev1.Pod) admission.Request {
	t.Helper()
	raw, err := json.Marshal(pod)
	if err != nil {
		t.Fatal(err)
	}
	return admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
		UID: "review-1", Operation: admissionv1.Create, Kind: metav1.GroupVersionKind{Version: "v1", Kind: "Pod"},
		Namespace: ns, Object: runtime.RawExtension{Raw: raw},
	}}
}

// TestInjectorAnswers is the injector's decision, sub-step by sub-step,
// over stand-in readers: what makes a Pod get its sidecar (a resolved,
// valid digest — a bound target does not matter), what admits it without
// (every internal failure, a panic included), what refuses it (only
// inject-policy required), and what is never read at all.
func TestInjectorAnswers(t *testing.T) {
	ann := func(kv ...string) map[string]string {
		m := map[string]string{injection.AnnotationContract: "catalog"}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	required := []string{injection.AnnotationInjectPolicy, injection.InjectPolicyRequired}
	// sequence answers pending copies until the n-th read, then resolved.
	sequence := func(n int32) *fakeReader {
		return &fakeReader{get: func(_ context.Context, call int32) (*v1alpha1.ServiceContract, error) {
			if call < n {
				sc := resolvedContract()
				sc.Generation = 1
				sc.Status = v1alpha1.ServiceContractStatus{}
				return sc, nil
			}
			return reconciled(), nil
		}}
	}
	tests := []struct {
		name       string
		ns         string
		pod        *corev1.Pod
		cache, api *fakeReader
		namespaces []string
		// patched: the sidecar is added; else allowed unless denied says why.
		patched bool
		denied  string
		warning string
		// reads: how many times the cache is asked (-1: any).
		reads int32
	}{
		{name: "resolved and valid, target not bound yet", pod: appPod(ann(), 8080), cache: answer(reconciled()), patched: true, reads: 1},
		{name: "resolved and valid, required", pod: appPod(ann(required...), 8080), cache: answer(reconciled()), patched: true, reads: 1},
		{name: "resolved a moment after the admission began", pod: appPod(ann(), 8080), cache: sequence(3), patched: true, reads: 3},
		{name: "never resolved within the wait", pod: appPod(ann(), 8080), cache: sequence(1 << 30), warning: "had not resolved ServiceContract shop/catalog (generation 1) yet", reads: -1},
		{name: "never resolved, required", pod: appPod(ann(required...), 8080), cache: sequence(1 << 30), denied: "failing condition: Resolving", reads: -1},
		{name: "spec changed, not looked at yet", pod: appPod(ann(), 8080), cache: answer(reconciled(func(sc *v1alpha1.ServiceContract) { sc.Generation = 2 })), warning: "(generation 2) yet", reads: -1},
		{name: "suspended: its status stays as it is", pod: appPod(ann(), 8080), cache: answer(reconciled(func(sc *v1alpha1.ServiceContract) { sc.Generation, sc.Spec.Suspend = 2, true })), patched: true, reads: 1},
		{name: "bundle not found", pod: appPod(ann(), 8080), cache: answer(reconciled(func(sc *v1alpha1.ServiceContract) {
			setStatus(sc, v1alpha1.ConditionBundleResolved, metav1.ConditionFalse, v1alpha1.ReasonArtifactNotFound)
		})), warning: "BundleResolved=False, reason ArtifactNotFound", reads: 1},
		{name: "invalid contract, required", pod: appPod(ann(required...), 8080), cache: answer(reconciled(func(sc *v1alpha1.ServiceContract) {
			setStatus(sc, v1alpha1.ConditionContractValid, metav1.ConditionFalse, v1alpha1.ReasonValidationFailed)
		})), denied: "ContractValid=False, reason ValidationFailed", reads: 1},
		{name: "missing everywhere", pod: appPod(ann(), 8080), cache: failing(notFound), api: failing(notFound), warning: "ServiceContract shop/catalog does not exist", reads: 1},
		{name: "not in the cache yet, on the API server", pod: appPod(ann(), 8080), cache: failing(notFound), api: answer(reconciled()), patched: true, reads: 1},
		{name: "cache not started, API server answers", pod: appPod(ann(), 8080), cache: failing(errors.New("the cache is not started, can not read objects")), api: answer(reconciled()), patched: true, reads: 1},
		{name: "neither answers", pod: appPod(ann(), 8080), cache: failing(errors.New("the cache is not started")), api: failing(apierrors.NewServiceUnavailable("etcd")), warning: "could not be read", reads: 1},
		{name: "neither answers, required", pod: appPod(ann(required...), 8080), cache: failing(errors.New("timed out")), api: failing(errors.New("dial tcp 10.0.0.1:443: i/o timeout")), denied: "failing condition: LookupFailed", reads: 1},
		{name: "cache alone fails", pod: appPod(ann(), 8080), cache: failing(errors.New("Timeout: failed waiting for *v1alpha1.ServiceContract Informer to sync")), warning: "could not be read", reads: 1},
		{name: "the reader panics", pod: appPod(ann(), 8080), cache: &fakeReader{get: func(context.Context, int32) (*v1alpha1.ServiceContract, error) { panic("boom") }}, warning: "kubepact failed while admitting the Pod (an internal error; the operator logs it) (InternalError)", reads: 1},
		{name: "the reader panics, required", pod: appPod(ann(required...), 8080), cache: &fakeReader{get: func(context.Context, int32) (*v1alpha1.ServiceContract, error) { panic("boom") }}, denied: "failing condition: InternalError", reads: 1},
		{name: "the cache blocks until the budget ends", pod: appPod(ann(), 8080), cache: &fakeReader{get: func(ctx context.Context, _ int32) (*v1alpha1.ServiceContract, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		}}, warning: "could not be read", reads: 1},
		{name: "hostNetwork", pod: func() *corev1.Pod { p := appPod(ann(), 8080); p.Spec.HostNetwork = true; return p }(), cache: answer(reconciled()), warning: "uses hostNetwork", reads: 0},
		{name: "hostNetwork, required", pod: func() *corev1.Pod { p := appPod(ann(required...), 8080); p.Spec.HostNetwork = true; return p }(), cache: answer(reconciled()), denied: "failing condition: HostNetwork", reads: 0},
		{name: "another namespace's contract", pod: appPod(ann(injection.AnnotationContract, "billing/catalog"), 8080), cache: answer(reconciled()), warning: "never one of another namespace", reads: 0},
		{name: "unwatched namespace", namespaces: []string{"billing"}, pod: appPod(ann(), 8080), cache: answer(reconciled()), warning: "does not watch this namespace", reads: 0},
		{name: "unwatched namespace, required", namespaces: []string{"billing"}, pod: appPod(ann(required...), 8080), cache: answer(reconciled()), denied: "failing condition: NamespaceNotWatched", reads: 0},
		{name: "the review's namespace is not the Pod's", pod: func() *corev1.Pod { p := appPod(ann(), 8080); p.Namespace = "billing"; return p }(), cache: answer(reconciled()), warning: "looks nothing up", reads: 0},
		{name: "a review without a namespace", ns: "-", pod: appPod(ann(), 8080), cache: answer(reconciled()), warning: "looks nothing up", reads: 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := &injection.Injector{Reader: tc.cache, Namespaces: tc.namespaces, ResolveWait: 200 * time.Millisecond}
			if tc.api != nil {
				in.APIReader = tc.api
			}
			ns := "shop"
			if tc.ns == "-" {
				ns = ""
			}
			resp := in.Handle(t.Context(), review(t, ns, tc.pod))
			msg := ""
			if resp.Result != nil {
				msg = resp.Result.Message
			}
			warnings := strings.Join(resp.Warnings, " | ")
			switch {
			case tc.denied != "":
				if resp.Allowed || !strings.Contains(msg, tc.denied) {
					t.Errorf("allowed=%v message %q, want refused saying %q", resp.Allowed, msg, tc.denied)
				}
			case !resp.Allowed:
				t.Errorf("refused: %q; only inject-policy required may refuse", msg)
			case tc.patched != (len(resp.Patches) > 0):
				t.Errorf("patches %+v, want patched=%v (warnings %q)", resp.Patches, tc.patched, warnings)
			case tc.warning != "" && !strings.Contains(warnings, tc.warning):
				t.Errorf("warnings %q do not say %q", warnings, tc.warning)
			}
			if strings.Contains(warnings+msg, "secret detail") || strings.Contains(warnings+msg, "dial tcp") {
				t.Errorf("the answer carries a condition's message or raw error text: %q %q", warnings, msg)
			}
			if got := tc.cache.calls.Load(); tc.reads >= 0 && got != tc.reads {
				t.Errorf("the cache was read %d times, want %d", got, tc.reads)
			}
		})
	}
}
