//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubepact/kubepact/api/v1alpha1"
)

// The steps here are what only Pods a kubelet runs can show: probes,
// leader failover, rolling upgrades through a Service, the webhook behind
// its Service, the native sidecar's restarts and limits, and its reach.
// On a back end without a kubelet each is skipped with one line.

const (
	webhookService = "kubepact-webhook"
	// leaseName is the operator's leader-election Lease (its
	// --leader-election-id default; the chart does not set it).
	leaseName = "kubepact-operator"
	// annotationInjectPolicy makes a Pod's admission fail closed.
	annotationInjectPolicy = "kubepact.dev/inject-policy"
)

// needPods skips a step where Pods do not run, saying why in one line.
func (s *story) needPods(t *testing.T) {
	t.Helper()
	if why := s.b.realPods(); why != "" {
		t.Skip(why)
	}
}

// operatorDeployment reads the chart's operator Deployment.
func (s *story) operatorDeployment(t *testing.T) *appsv1.Deployment {
	t.Helper()
	d := &appsv1.Deployment{}
	if err := s.b.admin().Get(t.Context(), client.ObjectKey{Namespace: installNamespace, Name: operatorName}, d); err != nil {
		t.Fatal(err)
	}
	return d
}

// operatorPods lists the operator's Pods that are not being deleted.
func (s *story) operatorPods(t *testing.T, d *appsv1.Deployment) ([]corev1.Pod, error) {
	t.Helper()
	sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
	if err != nil {
		t.Fatal(err)
	}
	pods := &corev1.PodList{}
	if err := s.b.admin().List(t.Context(), pods, client.InNamespace(installNamespace), client.MatchingLabelsSelector{Selector: sel}); err != nil {
		return nil, err
	}
	var out []corev1.Pod
	for _, p := range pods.Items {
		if p.DeletionTimestamp == nil {
			out = append(out, p)
		}
	}
	return out, nil
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func podCondition(p *corev1.Pod, typ corev1.PodConditionType) *corev1.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == typ {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

// waitOperatorPodsReady waits for the Deployment's replicas to be
// Ready, all of the current template, and returns them.
func (s *story) waitOperatorPodsReady(t *testing.T, timeout time.Duration) []corev1.Pod {
	t.Helper()
	var ready []corev1.Pod
	eventually(t, "the operator's replicas Ready", timeout, func() error {
		d := &appsv1.Deployment{}
		if err := s.b.admin().Get(t.Context(), client.ObjectKey{Namespace: installNamespace, Name: operatorName}, d); err != nil {
			return err
		}
		want := ptrOr(d.Spec.Replicas, 1)
		if d.Status.ObservedGeneration < d.Generation || d.Status.UpdatedReplicas != want || d.Status.AvailableReplicas != want || d.Status.Replicas != want {
			return fmt.Errorf("Deployment: %d replicas, %d updated, %d available; want %d", d.Status.Replicas, d.Status.UpdatedReplicas, d.Status.AvailableReplicas, want)
		}
		pods, err := s.operatorPods(t, d)
		if err != nil {
			return err
		}
		ready = ready[:0]
		var seen []string
		for _, p := range pods {
			seen = append(seen, fmt.Sprintf("%s ready=%v", p.Name, podReady(&p)))
			if podReady(&p) {
				ready = append(ready, p)
			}
		}
		if int32(len(ready)) != want || len(pods) != len(ready) {
			return fmt.Errorf("pods %v; want %d Ready", seen, want)
		}
		return nil
	})
	return ready
}

// operatorProbes: the chart's Deployment became Ready because the kubelet
// probed it: each replica's Ready condition was written by the kubelet,
// after its container started, and through the HTTP readiness probe the
// chart declares.
func (s *story) operatorProbes(t *testing.T) {
	s.needPods(t)
	d := s.operatorDeployment(t)
	c := d.Spec.Template.Spec.Containers[0]
	if c.ReadinessProbe == nil || c.ReadinessProbe.HTTPGet == nil || c.LivenessProbe == nil || c.LivenessProbe.HTTPGet == nil {
		t.Fatalf("the operator container has no HTTP readiness and liveness probes: readiness %+v, liveness %+v", c.ReadinessProbe, c.LivenessProbe)
	}
	if len(d.Spec.Template.Spec.ReadinessGates) > 0 {
		t.Fatalf("the operator's Pods have readiness gates %+v: Ready would not be the probes' alone", d.Spec.Template.Spec.ReadinessGates)
	}
	pods := s.waitOperatorPodsReady(t, 180*time.Second)
	for _, p := range pods {
		var cs *corev1.ContainerStatus
		for i := range p.Status.ContainerStatuses {
			if p.Status.ContainerStatuses[i].Name == c.Name {
				cs = &p.Status.ContainerStatuses[i]
			}
		}
		if cs == nil || cs.State.Running == nil || !cs.Ready || cs.Started == nil || !*cs.Started {
			t.Fatalf("Pod %s: container %s status %+v; want running, started and ready", p.Name, c.Name, cs)
		}
		ready := podCondition(&p, corev1.PodReady)
		if ready.LastTransitionTime.Before(&cs.State.Running.StartedAt) {
			t.Errorf("Pod %s turned Ready at %s, before its container started at %s", p.Name, ready.LastTransitionTime, cs.State.Running.StartedAt)
		}
		// The kubelet writes a Pod's status; a test forcing it would be
		// another field manager.
		var managers []string
		for _, mf := range p.ManagedFields {
			if mf.Subresource == "status" {
				managers = append(managers, mf.Manager)
			}
		}
		if !slices.Equal(managers, []string{"kubelet"}) {
			t.Errorf("Pod %s: its status is managed by %v; want the kubelet alone", p.Name, managers)
		}
		t.Logf("Pod %s: container started %s, Ready %s (readinessProbe GET :%s%s every %ds), restarts %d",
			p.Name, cs.State.Running.StartedAt.Format(time.TimeOnly), ready.LastTransitionTime.Format(time.TimeOnly),
			c.ReadinessProbe.HTTPGet.Port.String(), c.ReadinessProbe.HTTPGet.Path, c.ReadinessProbe.PeriodSeconds, cs.RestartCount)
	}
}

// webhookThroughService: the API server reaches the injection webhook
// through its Service: the configuration names the Service (no URL), a Pod
// created is injected, and with the Service's endpoints gone (its
// selector pointed at nothing) a Pod that requires injection is refused —
// then injected again once the selector is back.
func (s *story) webhookThroughService(t *testing.T) {
	s.needPods(t)
	c := s.b.admin()
	u := &admissionConfig{}
	if err := c.Get(t.Context(), client.ObjectKey{Name: webhookConfig}, u.obj()); err != nil {
		t.Fatal(err)
	}
	for _, h := range u.webhooks() {
		if h.url != "" || h.svcNamespace != installNamespace || h.svcName != webhookService {
			t.Fatalf("webhook %s: clientConfig url %q service %s/%s; want the Service %s/%s", h.name, h.url, h.svcNamespace, h.svcName, installNamespace, webhookService)
		}
	}
	svc := &corev1.Service{}
	if err := c.Get(t.Context(), client.ObjectKey{Namespace: installNamespace, Name: webhookService}, svc); err != nil {
		t.Fatal(err)
	}
	// Its endpoints are the operator's Pods.
	d := s.operatorDeployment(t)
	pods := s.waitOperatorPodsReady(t, 120*time.Second)
	var podIPs []string
	for _, p := range pods {
		podIPs = append(podIPs, p.Status.PodIP)
	}
	slices.Sort(podIPs)
	eventually(t, "Service "+webhookService+"'s endpoints are the operator's Pods", 60*time.Second, func() error {
		got := readyEndpoints(t, c, webhookService)
		if !slices.Equal(got, podIPs) {
			return fmt.Errorf("endpoints %v, operator Pods %v", got, podIPs)
		}
		return nil
	})

	probe := func(name string) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: s.shop, Name: name,
				Annotations: map[string]string{annotationContract: "catalog", annotationInjectPolicy: "required",
					annotationUpstreamPort: "8080"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{s.b.demoContainer(t)}},
		}
	}
	injected := func(what string) {
		t.Helper()
		eventually(t, what, 60*time.Second, func() error {
			p := probe("webhook-through-service")
			if err := c.Create(t.Context(), p, client.DryRunAll); err != nil {
				return err
			}
			if len(p.Spec.InitContainers) == 0 {
				return fmt.Errorf("admitted without a sidecar: %+v", p.Spec)
			}
			return nil
		})
	}
	injected("a Pod created in " + s.shop + " is injected")

	// The Service with no endpoints: the webhook cannot be reached, so a
	// Pod that requires injection is refused.
	orig := svc.DeepCopy()
	patch := client.MergeFrom(svc.DeepCopy())
	svc.Spec.Selector = map[string]string{"kubepact.dev/e2e-no-such-pod": "none"}
	if err := c.Patch(t.Context(), svc, patch); err != nil {
		t.Fatal(err)
	}
	restored := false
	restore := func() {
		if restored {
			return
		}
		restored = true
		cur := &corev1.Service{}
		if err := c.Get(t.Context(), client.ObjectKeyFromObject(orig), cur); err != nil {
			t.Errorf("restoring Service %s: %v", webhookService, err)
			return
		}
		p := client.MergeFrom(cur.DeepCopy())
		cur.Spec.Selector = orig.Spec.Selector
		if err := c.Patch(t.Context(), cur, p); err != nil {
			t.Errorf("restoring Service %s's selector: %v", webhookService, err)
		}
	}
	t.Cleanup(restore)
	var refusal string
	eventually(t, "with Service "+webhookService+" empty, a Pod requiring injection is refused", 60*time.Second, func() error {
		if got := readyEndpoints(t, c, webhookService); len(got) > 0 {
			return fmt.Errorf("endpoints still %v", got)
		}
		err := c.Create(t.Context(), probe("webhook-service-empty"), client.DryRunAll)
		if err == nil {
			return errNotYet
		}
		refusal = err.Error()
		return nil
	})
	if !strings.Contains(refusal, webhookService) && !strings.Contains(refusal, "kubepact") {
		t.Errorf("the refusal names neither the webhook nor its Service: %s", refusal)
	}
	t.Logf("Service %s without endpoints: a Pod requiring injection was refused: %s", webhookService, refusal)
	restore()
	injected("with the Service's selector back, a Pod is injected again")
	t.Logf("webhook %s reached through Service %s/%s (endpoints %v = the Pods of %s)", webhookConfig, installNamespace, webhookService, podIPs, d.Name)
}

// readyEndpoints lists the ready addresses of a Service in the install's
// namespace, sorted.
func readyEndpoints(t *testing.T, c client.Client, svc string) []string {
	t.Helper()
	list := &discoveryv1.EndpointSliceList{}
	if err := c.List(t.Context(), list, client.InNamespace(installNamespace), client.MatchingLabels{discoveryv1.LabelServiceName: svc}); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, es := range list.Items {
		for _, ep := range es.Endpoints {
			if ep.Conditions.Ready == nil || *ep.Conditions.Ready {
				out = append(out, ep.Addresses...)
			}
		}
	}
	slices.Sort(out)
	return out
}

// admissionConfig reads a MutatingWebhookConfiguration's client configs.
type admissionConfig struct{ u *unstructured.Unstructured }

type webhookClient struct{ name, url, svcNamespace, svcName string }

func (a *admissionConfig) obj() client.Object {
	a.u = &unstructured.Unstructured{}
	a.u.SetAPIVersion("admissionregistration.k8s.io/v1")
	a.u.SetKind("MutatingWebhookConfiguration")
	return a.u
}

func (a *admissionConfig) webhooks() []webhookClient {
	var out []webhookClient
	hooks, _ := a.u.Object["webhooks"].([]any)
	for _, h := range hooks {
		m, _ := h.(map[string]any)
		cc, _ := m["clientConfig"].(map[string]any)
		svc, _ := cc["service"].(map[string]any)
		w := webhookClient{name: fmt.Sprint(m["name"])}
		w.url, _ = cc["url"].(string)
		if svc != nil {
			w.svcNamespace, _ = svc["namespace"].(string)
			w.svcName, _ = svc["name"].(string)
		}
		out = append(out, w)
	}
	return out
}

// sidecarPortForward runs the README's commands that reach the injected
// sidecar from a laptop (kubectl port-forward to the Deployment) and
// connects the MCP clients as the README configured claude: the
// sidecar's tools call the service.
func (s *story) sidecarPortForward(t *testing.T) {
	s.needPods(t)
	s.sh.run(t, "reach-sidecar", repoRoot(), nil, nil)
	cfg := parseClaudeAdd(t, s.sh.claudeArgs(t))
	cs := connectWith(t, cfg.url, cfg.headers)
	if _, raw := call(t, cs, "listProducts", map[string]any{"limit": 2}); !strings.Contains(raw, `"sku":"LMP-3"`) {
		t.Errorf("listProducts through the README's port-forward %s: %s; want the demo service's products", cfg.url, raw)
	}
	if !tsClient(t, "sidecar through the README's port-forward", cfg.url, cfg.headers, []tsCall{{Tool: "listProducts", Args: map[string]any{"limit": 2}, Expect: "ok"}}) {
		t.Logf("%s is not set: the TypeScript SDK client was not run (make test-e2e runs it)", clientsDirEnv)
	}
}

// sidecarStatus is the injected sidecar's status and the app's in pod.
func sidecarStatus(t *testing.T, pod *corev1.Pod, sidecarName, appName string) (sc, app *corev1.ContainerStatus) {
	t.Helper()
	for i := range pod.Status.InitContainerStatuses {
		if pod.Status.InitContainerStatuses[i].Name == sidecarName {
			sc = &pod.Status.InitContainerStatuses[i]
		}
	}
	for i := range pod.Status.ContainerStatuses {
		if pod.Status.ContainerStatuses[i].Name == appName {
			app = &pod.Status.ContainerStatuses[i]
		}
	}
	return sc, app
}

// sidecarRestarted: the injected native sidecar started before the app;
// killed from the node, the kubelet restarts it while the app keeps
// running; its cgroup's memory limit and its GOMEMLIMIT are the ones the
// webhook wrote.
func (s *story) sidecarRestarted(t *testing.T) {
	s.needPods(t)
	c := s.b.admin()
	pod := &corev1.Pod{}
	if err := c.Get(t.Context(), client.ObjectKeyFromObject(s.catalogPod), pod); err != nil {
		t.Fatal(err)
	}
	spec := injectedSidecar(t, pod)
	appName := pod.Spec.Containers[0].Name
	sc, app := sidecarStatus(t, pod, spec.Name, appName)
	if sc == nil || app == nil || sc.State.Running == nil || app.State.Running == nil || sc.Started == nil || !*sc.Started {
		t.Fatalf("Pod %s: sidecar %+v, app %+v; want both running, the sidecar started", pod.Name, sc, app)
	}
	// The kubelet starts the app only once the sidecar's startup probe
	// passed (status times are in seconds).
	if app.State.Running.StartedAt.Before(&sc.State.Running.StartedAt) {
		t.Errorf("the app started at %s, before the sidecar (%s)", app.State.Running.StartedAt, sc.State.Running.StartedAt)
	}
	t.Logf("Pod %s: sidecar %s started %s, app %s started %s", pod.Name, spec.Name, sc.State.Running.StartedAt.Format(time.TimeOnly), appName, app.State.Running.StartedAt.Format(time.TimeOnly))

	pid, why := nodeProcess(sc.ContainerID)
	if why != "" {
		t.Skipf("the sidecar's process is not visible from the test (%s): its kill, restart and limits are checked on a real node (hack/realnode), where the test runs on the node", why)
	}
	// The memory limit, as the kernel enforces it.
	lim := spec.Resources.Limits.Memory()
	if lim == nil || lim.IsZero() {
		t.Fatalf("the injected sidecar has no memory limit: %+v", spec.Resources)
	}
	got, where, err := cgroupMemoryLimit(pid)
	if err != nil {
		t.Fatalf("the sidecar's memory cgroup: %v", err)
	}
	if got != lim.Value() {
		t.Errorf("the sidecar's cgroup %s: memory limit %d bytes; want %d (%s)", where, got, lim.Value(), lim)
	}
	wantGo := ""
	for _, e := range spec.Env {
		if e.Name == "GOMEMLIMIT" {
			wantGo = e.Value
		}
	}
	env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	if err != nil {
		t.Fatal(err)
	}
	gotGo := ""
	for kv := range bytes.SplitSeq(env, []byte{0}) {
		if v, ok := bytes.CutPrefix(kv, []byte("GOMEMLIMIT=")); ok {
			gotGo = string(v)
		}
	}
	if wantGo == "" || gotGo != wantGo {
		t.Errorf("the sidecar process %d runs with GOMEMLIMIT=%q; the injected container sets %q (want 90%% of %s)", pid, gotGo, wantGo, lim)
	}
	t.Logf("sidecar process %d: cgroup %s memory.limit_in_bytes %d (%s), GOMEMLIMIT=%s", pid, where, got, lim, gotGo)

	// Killed: the kubelet restarts it; the app keeps running.
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatalf("kill -KILL %d (the sidecar): %v", pid, err)
	}
	killed := time.Now()
	eventually(t, "the kubelet restarts the killed sidecar", 120*time.Second, func() error {
		p := &corev1.Pod{}
		if err := c.Get(t.Context(), client.ObjectKeyFromObject(pod), p); err != nil {
			return err
		}
		nsc, napp := sidecarStatus(t, p, spec.Name, appName)
		if nsc == nil || napp == nil {
			return fmt.Errorf("statuses missing: %+v", p.Status)
		}
		if napp.RestartCount != app.RestartCount || napp.ContainerID != app.ContainerID || napp.State.Running == nil {
			t.Fatalf("the app container changed when the sidecar was killed: before %+v, now %+v", app, napp)
		}
		if nsc.RestartCount != sc.RestartCount+1 || nsc.State.Running == nil || !nsc.Ready || nsc.ContainerID == sc.ContainerID {
			return fmt.Errorf("sidecar restarts %d (before %d), ready %v, state %+v", nsc.RestartCount, sc.RestartCount, nsc.Ready, nsc.State)
		}
		return nil
	})
	t.Logf("sidecar killed (pid %d): restarted by the kubelet and Ready again after %s; restarts sidecar %d→%d, app %d→%d",
		pid, time.Since(killed).Round(100*time.Millisecond), sc.RestartCount, sc.RestartCount+1, app.RestartCount, app.RestartCount)
	// It serves again.
	eventually(t, "Pod "+pod.Name+" Ready again", 60*time.Second, func() error {
		p := &corev1.Pod{}
		if err := c.Get(t.Context(), client.ObjectKeyFromObject(pod), p); err != nil {
			return err
		}
		if !podReady(p) {
			return errNotYet
		}
		return nil
	})
	cs := connect(t, s.b.sidecar(t, pod), "")
	if _, raw := call(t, cs, "listProducts", map[string]any{"limit": 1}); !strings.Contains(raw, `"sku"`) {
		t.Errorf("listProducts through the restarted sidecar: %s", raw)
	}
}

var hex64 = regexp.MustCompile(`[0-9a-f]{64}`)

// nodeProcess finds the process of a container (its status's containerID)
// on this machine, by the container's cgroup; why says why it cannot.
func nodeProcess(containerID string) (int, string) {
	id := hex64.FindString(containerID)
	if id == "" {
		return 0, fmt.Sprintf("container ID %q is not a runc container's", containerID)
	}
	procs, err := filepath.Glob("/proc/[0-9]*/cgroup")
	if err != nil {
		return 0, err.Error()
	}
	var found []int
	for _, f := range procs {
		raw, err := os.ReadFile(f)
		if err != nil || !bytes.Contains(raw, []byte(id)) {
			continue
		}
		pid, err := strconv.Atoi(filepath.Base(filepath.Dir(f)))
		if err == nil {
			found = append(found, pid)
		}
	}
	switch len(found) {
	case 0:
		return 0, "no process here is in container " + id[:12] + "'s cgroup: the node is another machine or container"
	case 1:
		if err := syscall.Kill(found[0], 0); err != nil {
			return 0, fmt.Sprintf("process %d of container %s cannot be signalled from here: %v", found[0], id[:12], err)
		}
		return found[0], ""
	}
	return 0, fmt.Sprintf("container %s has %d processes %v; want one", id[:12], len(found), found)
}

// cgroupMemoryLimit reads the memory limit of pid's cgroup (v1
// memory.limit_in_bytes, or v2 memory.max).
func cgroupMemoryLimit(pid int) (int64, string, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	if err != nil {
		return 0, "", err
	}
	for line := range strings.Lines(string(raw)) {
		parts := strings.SplitN(strings.TrimSpace(line), ":", 3)
		if len(parts) != 3 {
			continue
		}
		var file string
		switch {
		case slices.Contains(strings.Split(parts[1], ","), "memory"):
			file = filepath.Join("/sys/fs/cgroup/memory", parts[2], "memory.limit_in_bytes")
		case parts[0] == "0" && parts[1] == "":
			f := filepath.Join("/sys/fs/cgroup", parts[2], "memory.max")
			if _, err := os.Stat(f); err != nil {
				continue
			}
			file = f
		default:
			continue
		}
		b, err := os.ReadFile(file)
		if err != nil {
			return 0, file, err
		}
		v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		return v, file, err
	}
	return 0, "", fmt.Errorf("process %d has no memory cgroup: %s", pid, raw)
}

// sidecarOnlyLocalhost: the sidecar reaches only its own Pod. A contract
// whose server URL is another Pod's address (the catalog Pod, reachable
// on the Pod network) is served beside an app that does not listen on the
// upstream port: its calls go to the sidecar's own localhost and fail
// with a clear answer, never reaching the other Pod, while catalog's own
// sidecar calls its service.
func (s *story) sidecarOnlyLocalhost(t *testing.T) {
	s.needPods(t)
	c := s.b.admin()
	other := &corev1.Pod{}
	if err := c.Get(t.Context(), client.ObjectKeyFromObject(s.catalogPod), other); err != nil {
		t.Fatal(err)
	}
	if other.Status.PodIP == "" {
		t.Fatalf("Pod %s has no IP", other.Name)
	}
	remote := "http://" + net.JoinHostPort(other.Status.PodIP, "8080")
	if resp, err := (&http.Client{Timeout: 5 * time.Second}).Get(remote + "/healthz"); err == nil {
		_ = resp.Body.Close()
		t.Logf("the other Pod's service %s answers on the Pod network (%s from the test)", remote, resp.Status)
	} else {
		t.Logf("the other Pod's service %s is not reachable from the test (%v); the sidecar is still checked", remote, err)
	}

	// catalog's bundle, its server URL the other Pod's address.
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(filepath.Join(repoRoot(), "examples", "bundles", "catalog"))); err != nil {
		t.Fatal(err)
	}
	spec := filepath.Join(dir, "interfaces", "openapi.yaml")
	raw, err := os.ReadFile(spec)
	if err != nil {
		t.Fatal(err)
	}
	moved := strings.Replace(string(raw), "- url: http://127.0.0.1:8080", "- url: "+remote, 1)
	if moved == string(raw) {
		t.Fatal("examples/bundles/catalog/interfaces/openapi.yaml has no `- url: http://127.0.0.1:8080` to point elsewhere")
	}
	if err := os.WriteFile(spec, []byte(moved), 0o600); err != nil {
		t.Fatal(err)
	}
	digest := s.push(t, dir, "bundles/elsewhere:e2e")
	_, pull := s.b.registry()
	const name = "elsewhere"
	labels := map[string]string{"app": name}
	app := s.b.demoContainer(t)
	app.Name = name
	app.Args = []string{"--listen", "127.0.0.1:9090"} // nothing on the upstream port
	app.Ports = nil
	objs := []client.Object{
		&v1alpha1.ServiceContract{
			ObjectMeta: metav1.ObjectMeta{Namespace: s.shop, Name: name},
			Spec: v1alpha1.ServiceContractSpec{
				Bundle:    v1alpha1.BundleSource{OCI: "oci://" + pull + "/bundles/" + name + ":e2e"},
				TargetRef: v1alpha1.TargetReference{Kind: "Deployment", Name: name},
			},
		},
		&appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Namespace: s.shop, Name: name},
			Spec: appsv1.DeploymentSpec{
				Replicas: ptr.To[int32](0),
				Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: map[string]string{annotationContract: name, annotationUpstreamPort: "8080"}},
					Spec:       corev1.PodSpec{Containers: []corev1.Container{app}},
				},
			},
		},
	}
	for _, o := range objs {
		if err := c.Create(t.Context(), o); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Delete(t.Context(), o) })
	}
	s.waitReady(t, s.shop, name, digest, "")
	d := objs[1].(*appsv1.Deployment)
	patch := client.MergeFrom(d.DeepCopy())
	d.Spec.Replicas = ptr.To[int32](1)
	if err := c.Patch(t.Context(), d, patch); err != nil {
		t.Fatal(err)
	}
	var pod *corev1.Pod
	eventually(t, "a Pod of "+name+" injected with "+digest, 90*time.Second, func() error {
		pods := &corev1.PodList{}
		if err := c.List(t.Context(), pods, client.InNamespace(s.shop), client.MatchingLabels(labels)); err != nil {
			return err
		}
		for i := range pods.Items {
			if p := &pods.Items[i]; p.DeletionTimestamp == nil && strings.HasSuffix(p.Annotations[annotationInjectedBundle], "@"+digest) {
				pod = p
				return nil
			}
		}
		return fmt.Errorf("%d pods, none injected with %s", len(pods.Items), digest)
	})
	sc := injectedSidecar(t, pod)
	args := &flagLine{args: sc.Args[1:]}
	if up, _ := args.get("--upstream"); up != "http://127.0.0.1:8080" || slices.Contains(sc.Args, "--allow-remote-upstream") {
		t.Fatalf("the injected sidecar's args %q: want --upstream=http://127.0.0.1:8080 and no --allow-remote-upstream", sc.Args)
	}
	cs := connect(t, s.b.sidecar(t, pod), "")
	res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "listProducts", Arguments: map[string]any{"limit": 2}})
	if err != nil {
		t.Fatalf("listProducts through %s's sidecar: %v", name, err)
	}
	text := toolText(res)
	if !res.IsError || strings.Contains(text, `"sku"`) {
		t.Fatalf("listProducts through %s's sidecar (its server URL %s, another Pod's service): error %v, %s; want a failed call that did not reach it", name, remote, res.IsError, text)
	}
	for _, raw := range []string{"dial tcp", "connect: connection refused"} {
		if strings.Contains(text, raw) {
			t.Errorf("the failed call answers with Go's error text %q: %s", raw, text)
		}
	}
	t.Logf("%s's sidecar (server URL %s) answered: %s", name, remote, text)
	// Its own service works for catalog's sidecar (SidecarCallsService);
	// here once more, beside the refusal.
	own := connect(t, s.b.sidecar(t, other), "")
	if _, raw := call(t, own, "listProducts", map[string]any{"limit": 1}); !strings.Contains(raw, `"sku"`) {
		t.Errorf("catalog's own sidecar: listProducts %s", raw)
	}
}

// toolText is a tool result's text content.
func toolText(res *sdk.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// caller calls a tool over one MCP session until stopped, counting the
// calls and keeping the first failures.
type caller struct {
	mu       sync.Mutex
	ok, fail int
	failures []string
	stop     chan struct{}
	done     chan struct{}
}

func startCaller(t *testing.T, cs *sdk.ClientSession, tool string) *caller {
	t.Helper()
	cl := &caller{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(cl.done)
		for {
			select {
			case <-cl.stop:
				return
			case <-t.Context().Done():
				return
			default:
			}
			res, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: tool, Arguments: map[string]any{}})
			cl.mu.Lock()
			switch {
			case err != nil:
				cl.fail++
				if len(cl.failures) < 5 {
					cl.failures = append(cl.failures, fmt.Sprintf("%s %v", time.Now().Format(time.TimeOnly), err))
				}
			case res.IsError:
				cl.fail++
				if len(cl.failures) < 5 {
					cl.failures = append(cl.failures, fmt.Sprintf("%s %s", time.Now().Format(time.TimeOnly), toolText(res)))
				}
			default:
				cl.ok++
			}
			cl.mu.Unlock()
			time.Sleep(100 * time.Millisecond)
		}
	}()
	return cl
}

// end stops the caller and returns its counts.
func (cl *caller) end() (ok, fail int, failures []string) {
	close(cl.stop)
	<-cl.done
	cl.mu.Lock()
	defer cl.mu.Unlock()
	return cl.ok, cl.fail, cl.failures
}

func (cl *caller) count() int {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	return cl.ok + cl.fail
}

// leaderFailover: with two replicas, the leader's Pod is deleted; the
// other replica takes the Lease and reconciles a ServiceContract change,
// while /mcp answers on it throughout (no call failed), and the
// replacement Pod answers once Ready.
func (s *story) leaderFailover(t *testing.T) {
	s.needPods(t)
	c := s.b.admin()
	pods := s.waitOperatorPodsReady(t, 120*time.Second)
	if len(pods) < 2 {
		t.Fatalf("the operator runs %d replica(s); the chart's default is 2", len(pods))
	}
	lease := &coordinationv1.Lease{}
	var holder string
	eventually(t, "Lease "+leaseName+" held", 60*time.Second, func() error {
		if err := c.Get(t.Context(), client.ObjectKey{Namespace: installNamespace, Name: leaseName}, lease); err != nil {
			return err
		}
		if lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity == "" {
			return fmt.Errorf("no holder: %+v", lease.Spec)
		}
		holder = *lease.Spec.HolderIdentity
		return nil
	})
	leaseFor := time.Duration(ptr.Deref(lease.Spec.LeaseDurationSeconds, 15)) * time.Second
	var leader, survivor *corev1.Pod
	for i := range pods {
		if strings.HasPrefix(holder, pods[i].Name+"_") || holder == pods[i].Name {
			leader = &pods[i]
		} else if survivor == nil {
			survivor = &pods[i]
		}
	}
	if leader == nil || survivor == nil {
		t.Fatalf("Lease holder %q is none of the Ready operator Pods", holder)
	}
	url := "http://" + s.b.forwardPort(t, installNamespace, "pod/"+survivor.Name, "8585") + "/mcp"
	cl := startCaller(t, connect(t, url, s.aliceTok), "pacto_fleet_status")
	eventually(t, "the surviving replica answers", 30*time.Second, func() error {
		if cl.count() < 3 {
			return errNotYet
		}
		return nil
	})

	killed := time.Now()
	if err := c.Delete(t.Context(), leader); err != nil {
		t.Fatal(err)
	}
	var took time.Duration
	var newHolder string
	eventually(t, "another replica takes Lease "+leaseName, 3*leaseFor+60*time.Second, func() error {
		l := &coordinationv1.Lease{}
		if err := c.Get(t.Context(), client.ObjectKeyFromObject(lease), l); err != nil {
			return err
		}
		h := ptr.Deref(l.Spec.HolderIdentity, "")
		if h == "" || h == holder || strings.HasPrefix(h, leader.Name+"_") {
			return fmt.Errorf("holder %q", h)
		}
		newHolder, took = h, time.Since(killed)
		return nil
	})
	// The new leader reconciles: a spec change is observed.
	sc := &v1alpha1.ServiceContract{}
	if err := c.Get(t.Context(), client.ObjectKey{Namespace: s.billing, Name: "payments"}, sc); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(sc.DeepCopy())
	sc.Spec.Interval = &metav1.Duration{Duration: 37 * time.Second}
	if err := c.Patch(t.Context(), sc, patch); err != nil {
		t.Fatal(err)
	}
	s.waitReady(t, s.billing, "payments", s.digests["payments"], "")
	reconciled := time.Since(killed)
	// The replacement replica becomes Ready and answers too.
	after := s.waitOperatorPodsReady(t, 180*time.Second)
	ok, fail, failures := cl.end()
	for _, p := range after {
		if p.Name == survivor.Name {
			continue
		}
		rc := connect(t, "http://"+s.b.forwardPort(t, installNamespace, "pod/"+p.Name, "8585")+"/mcp", s.aliceTok)
		call(t, rc, "pacto_fleet_status", map[string]any{})
		t.Logf("replacement replica %s answers /mcp", p.Name)
	}
	t.Logf("leader %s deleted: %s took Lease %s after %s (lease duration %s); payments' change reconciled %s after the delete; surviving replica %s: %d calls, %d failed",
		leader.Name, newHolder, leaseName, took.Round(100*time.Millisecond), leaseFor, reconciled.Round(100*time.Millisecond), survivor.Name, ok+fail, fail)
	// The figure is reported, not asserted (a wall-clock bound would
	// make the step flaky on a loaded machine); the poll above bounds a
	// hung election.
	if took > leaseFor {
		t.Logf("note: the Lease changed hands later than the lease duration (%s > %s)", took.Round(100*time.Millisecond), leaseFor)
	}
	if fail > 0 {
		t.Errorf("the surviving replica failed %d of %d /mcp calls during the failover: %v", fail, ok+fail, failures)
	}
}

// serviceClusterIP is the operator Service's mcp address if the test
// reaches ClusterIPs (the node itself), else why not.
func (s *story) serviceClusterIP(t *testing.T) (string, string) {
	t.Helper()
	svc := &corev1.Service{}
	if err := s.b.admin().Get(t.Context(), client.ObjectKey{Namespace: installNamespace, Name: operatorName}, svc); err != nil {
		t.Fatal(err)
	}
	var port int32
	for _, p := range svc.Spec.Ports {
		if p.Name == "mcp" {
			port = p.Port
		}
	}
	addr := net.JoinHostPort(svc.Spec.ClusterIP, fmt.Sprint(port))
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return "", fmt.Sprintf("Service %s's ClusterIP %s is not reachable from the test (%v)", operatorName, addr, err)
	}
	_ = conn.Close()
	return addr, ""
}

// rollingUpgrade: helm upgrade changes a value that rolls the operator's
// Deployment; an MCP client calling through the Service throughout has
// no failed call; the PodDisruptionBudget holds: once one replica is
// evicted, evicting the other is refused.
func (s *story) rollingUpgrade(t *testing.T) {
	s.needPods(t)
	addr, why := s.serviceClusterIP(t)
	if why != "" {
		t.Skipf("%s: a client through the Service needs the node's network (hack/realnode runs the test there)", why)
	}
	c := s.b.admin()
	before := s.waitOperatorPodsReady(t, 120*time.Second)
	var oldNames []string
	for _, p := range before {
		oldNames = append(oldNames, p.Name)
	}
	// An in-cluster client names the Service (the operator admits only
	// its names as Host); with no cluster DNS here, the name is resolved
	// to the ClusterIP as the cluster's DNS would.
	name := operatorName + "." + installNamespace + ".svc"
	_, port, _ := net.SplitHostPort(addr)
	cl := startCaller(t, connectDialing(t, "http://"+net.JoinHostPort(name, port)+"/mcp", s.aliceTok, addr), "pacto_fleet_status")
	// Watch the Service's ready endpoints throughout.
	stopWatch := watchMinEndpoints(t, c, operatorName)
	eventually(t, "the client answers through the Service", 30*time.Second, func() error {
		if cl.count() < 3 {
			return errNotYet
		}
		return nil
	})
	started := time.Now()
	run(t, []string{"KUBECONFIG=" + os.Getenv("KUBECONFIG")}, s.sh.host.helm, "upgrade", releaseName, filepath.Join(repoRoot(), "charts", "kubepact"),
		"--namespace", installNamespace, "--reuse-values", "--set-string", "podAnnotations.kubepact-e2e-roll="+strconv.FormatInt(started.Unix(), 10))
	after := s.waitOperatorPodsReady(t, 300*time.Second)
	rolled := time.Since(started)
	for _, p := range after {
		if slices.Contains(oldNames, p.Name) {
			t.Fatalf("after helm upgrade Pod %s is still an old one (old %v)", p.Name, oldNames)
		}
	}

	// The PDB: its status allows one disruption; one eviction passes, the
	// next is refused until a replacement is Ready.
	pdb := &policyv1.PodDisruptionBudget{}
	eventually(t, "PodDisruptionBudget "+operatorName+" allows one disruption", 60*time.Second, func() error {
		if err := c.Get(t.Context(), client.ObjectKey{Namespace: installNamespace, Name: operatorName}, pdb); err != nil {
			return err
		}
		if pdb.Status.ObservedGeneration < pdb.Generation || pdb.Status.DisruptionsAllowed != 1 || pdb.Status.CurrentHealthy != int32(len(after)) {
			return fmt.Errorf("status %+v", pdb.Status)
		}
		return nil
	})
	evict := func(p *corev1.Pod) error {
		return c.SubResource("eviction").Create(t.Context(), p, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Namespace: p.Namespace, Name: p.Name}})
	}
	if err := evict(&after[0]); err != nil {
		t.Fatalf("evicting %s with the PDB allowing one disruption: %v", after[0].Name, err)
	}
	err := evict(&after[1])
	if !apierrors.IsTooManyRequests(err) {
		t.Fatalf("evicting %s right after %s: %v; want it refused by the PodDisruptionBudget (429)", after[1].Name, after[0].Name, err)
	}
	t.Logf("PDB %s: evicting %s passed, evicting %s next was refused: %v", operatorName, after[0].Name, after[1].Name, err)
	s.waitOperatorPodsReady(t, 180*time.Second)
	ok, fail, failures := cl.end()
	low := stopWatch()
	t.Logf("helm upgrade rolled %s in %s; through Service %s (%s): %d MCP calls, %d failed; ready endpoints never below %d",
		operatorName, rolled.Round(100*time.Millisecond), operatorName, addr, ok+fail, fail, low)
	if fail > 0 {
		t.Errorf("%d of %d MCP calls through the Service failed during the rolling upgrade and eviction: %v", fail, ok+fail, failures)
	}
	if low < 1 {
		t.Errorf("the Service had no ready endpoint at some point during the rollout")
	}
}

// connectDialing opens an MCP session to url whose every connection
// dials addr (a name resolved by hand).
func connectDialing(t *testing.T, url, token, addr string) *sdk.ClientSession {
	t.Helper()
	dialer := &net.Dialer{Timeout: 10 * time.Second}
	tr := &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return dialer.DialContext(ctx, network, addr)
	}}
	h := http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		r = r.Clone(r.Context())
		r.Header.Set("Authorization", "Bearer "+token)
		return tr.RoundTrip(r)
	})}
	st := &sdk.StreamableClientTransport{Endpoint: url, HTTPClient: &h, DisableStandaloneSSE: true, MaxRetries: -1}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "kubepact-e2e", Version: "v0"}, nil).Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatalf("connecting to %s (at %s): %v", url, addr, err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// watchMinEndpoints polls a Service's ready endpoints until stopped and
// returns the fewest it saw.
func watchMinEndpoints(t *testing.T, c client.Client, svc string) func() int {
	t.Helper()
	low := -1
	var mu sync.Mutex
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for {
			sl := &discoveryv1.EndpointSliceList{}
			if err := c.List(t.Context(), sl, client.InNamespace(installNamespace), client.MatchingLabelsSelector{Selector: labels.SelectorFromSet(labels.Set{discoveryv1.LabelServiceName: svc})}); err == nil {
				n := 0
				for _, es := range sl.Items {
					for _, ep := range es.Endpoints {
						if ep.Conditions.Ready == nil || *ep.Conditions.Ready {
							n += len(ep.Addresses)
						}
					}
				}
				mu.Lock()
				if low < 0 || n < low {
					low = n
				}
				mu.Unlock()
			}
			select {
			case <-stop:
				return
			case <-t.Context().Done():
				return
			case <-time.After(200 * time.Millisecond):
			}
		}
	}()
	return func() int {
		close(stop)
		<-done
		mu.Lock()
		defer mu.Unlock()
		return low
	}
}
