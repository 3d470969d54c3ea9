//go:build e2e

package e2e

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/kubepact/kubepact/test/demoservice"
	"github.com/kubepact/kubepact/test/freeport"
	"github.com/kubepact/kubepact/test/grpcdemo"
	"github.com/kubepact/kubepact/test/kcm"
	"github.com/kubepact/kubepact/test/testregistry"
)

// envtestBackend runs the story on a real kube-apiserver, etcd and
// kube-controller-manager on loopback, with kubepact's processes beside
// them where the cluster would run its Pods.
type envtestBackend struct {
	// root is the suite's test: what lives as long as the cluster is
	// registered with it, not with the step that started it.
	root        *testing.T
	env         *envtest.Environment
	c           client.Client
	adminKC     []byte // kubeconfig of the envtest admin (system:masters)
	adminKCFile string // the same, as a file for kubectl and helm
	reg         *testregistry.Registry
	demo        *httptest.Server
	demoServed  atomic.Int64
	// grpc is the demo gRPC service (test/grpcdemo) on loopback.
	grpc *grpcdemo.Server
	// images are the binaries of the images the install names.
	images *images
	// operatorImage is the image the operator process runs.
	operatorImage string
	// webhookServices are the Services the installed webhooks call, by
	// webhook name, while the configuration points at the process.
	webhookServices map[string]admissionregistrationv1.ServiceReference

	operator *process
	// Where the operator process serves, on loopback.
	probeAddr, metricsAddr, mcpAddr string
	webhookPort                     int
}

func newEnvtestBackend(t *testing.T) *envtestBackend {
	t.Helper()
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		t.Fatalf("%s=envtest needs KUBEBUILDER_ASSETS (the control plane `make envtest-assets` builds into bin/k8s/<version>); `make test-e2e` sets it", ModeEnv)
	}
	if os.Getenv("KUBEBUILDER_CONTROLPLANE_START_TIMEOUT") == "" {
		t.Setenv("KUBEBUILDER_CONTROLPLANE_START_TIMEOUT", "60s")
	}
	ctrl.SetLogger(logr.Discard())
	b := &envtestBackend{root: t, env: &envtest.Environment{}}
	cfg, err := b.env.Start()
	if err != nil {
		t.Fatalf("envtest: starting the control plane: %v", err)
	}
	t.Cleanup(func() {
		if err := b.env.Stop(); err != nil {
			t.Logf("envtest: stopping the control plane: %v", err)
		}
	})
	// The namespace controller too: the test's namespaces are deleted at
	// the end, as a user would.
	kp, err := kcm.Start(t.Context(), cfg, &kcm.Options{Controllers: append(slices.Clone(kcm.DefaultControllers), "namespace-controller")})
	if err != nil {
		t.Fatalf("kube-controller-manager: %v", err)
	}
	t.Cleanup(func() { _ = kp.Stop() })
	if b.c, err = client.New(cfg, client.Options{Scheme: scheme}); err != nil {
		t.Fatal(err)
	}
	user, err := b.env.AddUser(envtest.User{Name: "kubepact-e2e-admin", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if b.adminKC, err = user.KubeConfig(); err != nil {
		t.Fatal(err)
	}
	b.adminKCFile = filepath.Join(t.TempDir(), "admin.kubeconfig")
	if err := os.WriteFile(b.adminKCFile, b.adminKC, 0o600); err != nil {
		t.Fatal(err)
	}
	b.images = &images{dir: t.TempDir()}
	b.reg = testregistry.New(t, nil)
	// The demo service: the catalog API the contract describes, on a
	// loopback port that the Deployment declares as its containerPort.
	h := demoservice.New(nil)
	b.demo = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b.demoServed.Add(1)
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(b.demo.Close)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	proto := filepath.Join(repoRoot(), "examples", "grpc", "inventory", "interfaces", "inventory", "v1")
	if b.grpc, err = grpcdemo.Serve(t.Context(), lis, os.DirFS(proto), "inventory.proto"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.grpc.Stop)
	return b
}

func (b *envtestBackend) grpcServed() int { return b.grpc.Calls("GetItem") }

// grpcContainer declares the loopback port the demo gRPC service listens
// on, named grpc.
func (b *envtestBackend) grpcContainer(t *testing.T) (corev1.Container, string) {
	t.Helper()
	_, port, err := net.SplitHostPort(b.grpc.Addr)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := strconv.Atoi(port)
	return corev1.Container{
		Name: "inventory", Image: "example.invalid/grpcdemo:e2e",
		Ports: []corev1.ContainerPort{{Name: "grpc", ContainerPort: int32(p)}},
	}, ""
}

func (b *envtestBackend) admin() client.Client { return b.c }

func (b *envtestBackend) registry() (string, string) { return b.reg.Host, b.reg.Host }

func (b *envtestBackend) served() int { return int(b.demoServed.Load()) }

func (b *envtestBackend) demoContainer(t *testing.T) corev1.Container {
	t.Helper()
	_, port, err := net.SplitHostPort(b.demo.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	p, _ := strconv.Atoi(port)
	return corev1.Container{
		Name: "catalog", Image: "example.invalid/demoservice:e2e",
		Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: int32(p)}},
	}
}

// shell: the README's commands reach the API server as its
// administrator, and the registry on loopback speaks plain HTTP (what the
// README says to set for such a registry). No kubelet runs here: a
// command that waits for a running Pod is skipped.
func (b *envtestBackend) shell(t *testing.T) shellHost {
	t.Helper()
	return shellHost{
		kubeconfig: b.adminKCFile,
		kubectl:    toolBin(t, kubectlEnv, "kubectl"),
		helm:       toolBin(t, helmEnv, "helm-bins"),
		env:        []string{"IMAGE_PLAIN_HTTP=true"},
		skip:       skipWithoutKubelet,
	}
}

// skipWithoutKubelet says why envtest cannot run cmd, if it cannot.
func skipWithoutKubelet(cmd string) string {
	line := oneLine(cmd)
	switch {
	case strings.HasPrefix(line, "kubectl ") && strings.Contains(line, " rollout status "):
		return "needs a kubelet (no Pod runs on envtest, so no rollout completes); the operator process's /readyz is waited for instead"
	case strings.HasPrefix(line, "kubectl ") && strings.Contains(line, " port-forward "):
		return "needs a kubelet (port-forward reaches a running Pod); the operator process serves /mcp on loopback, and 127.0.0.1:8585 in the commands after it means that address"
	}
	return ""
}

func (b *envtestBackend) cannotInstall() string { return "" }

// realPods: envtest has no kubelet.
func (b *envtestBackend) realPods() string {
	return "envtest runs no kubelet, so no Pod runs: this step runs on a real node (hack/realnode) or kind"
}

func (b *envtestBackend) forwardPort(t *testing.T, _, _, _ string) string {
	t.Helper()
	t.Fatal(b.realPods())
	return ""
}

// installed starts what the README's install installed: the webhook
// configuration pointed at the operator process on loopback, and the
// operator as the chart's Deployment runs it.
func (b *envtestBackend) installed(t *testing.T) []*unstructured.Unstructured {
	t.Helper()
	objs := releaseObjects(t, toolBin(t, helmEnv, "helm-bins"), []string{"KUBECONFIG=" + b.adminKCFile, "HELM_CACHE_HOME=" + t.TempDir(), "HELM_CONFIG_HOME=" + t.TempDir(), "HELM_DATA_HOME=" + t.TempDir()})
	if find(objs, "MutatingWebhookConfiguration", webhookConfig) == nil {
		t.Fatalf("the install has no MutatingWebhookConfiguration %s", webhookConfig)
	}
	b.webhookPort = freeport.Port(t)
	b.loopbackWebhook(t)
	b.startOperator(t)
	return objs
}

// beforeUpgrade gives the webhook configuration back the Services the
// install gave it, so that helm upgrades what it installed (a
// configuration holding both a URL and a Service is invalid).
func (b *envtestBackend) beforeUpgrade(t *testing.T) {
	t.Helper()
	mwc := &admissionregistrationv1.MutatingWebhookConfiguration{}
	if err := b.c.Get(t.Context(), client.ObjectKey{Name: webhookConfig}, mwc); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(mwc.DeepCopy())
	for i := range mwc.Webhooks {
		svc, ok := b.webhookServices[mwc.Webhooks[i].Name]
		if !ok {
			t.Fatalf("webhook %s was not installed", mwc.Webhooks[i].Name)
		}
		cc := &mwc.Webhooks[i].ClientConfig
		*cc = admissionregistrationv1.WebhookClientConfig{Service: &svc, CABundle: cc.CABundle}
	}
	if err := b.c.Patch(t.Context(), mwc, patch); err != nil {
		t.Fatalf("giving %s its Services back: %v", webhookConfig, err)
	}
}

// upgraded replaces the operator process by one of the upgraded
// Deployment, as its rollout replaces the Pods.
func (b *envtestBackend) upgraded(t *testing.T) {
	t.Helper()
	b.operator.stop(t)
	b.loopbackWebhook(t)
	b.startOperator(t)
}

// operatorGone stops the operator process once `helm uninstall` deleted
// its Deployment, as its Pods stop.
func (b *envtestBackend) operatorGone(t *testing.T) { b.operator.stop(t) }

// mcpURL: the README reaches /mcp at 127.0.0.1:8585 through its
// port-forward, which cannot run here; the operator process serves it.
func (b *envtestBackend) mcpURL(t *testing.T, readmeURL string) string {
	t.Helper()
	const forwarded = "http://127.0.0.1:8585/"
	rest, ok := strings.CutPrefix(readmeURL, forwarded)
	if !ok {
		t.Fatalf("the README reaches /mcp at %s; the suite knows %s… (where its port-forward listens)", readmeURL, forwarded)
	}
	return "http://" + b.mcpAddr + "/" + rest
}

// cli is kubepact from the image the install runs.
func (b *envtestBackend) cli(t *testing.T) string {
	t.Helper()
	if b.operatorImage == "" {
		return kubepact(t)
	}
	return b.images.binary(t, b.operatorImage)
}

// loopbackWebhook points every webhook of the installed configuration at
// https://127.0.0.1:<port><the Service path>: the API server reaches the
// operator process, not a Service. It keeps the caBundle the operator
// wrote, and remembers the Services for beforeUpgrade.
func (b *envtestBackend) loopbackWebhook(t *testing.T) {
	t.Helper()
	mwc := &admissionregistrationv1.MutatingWebhookConfiguration{}
	if err := b.c.Get(t.Context(), client.ObjectKey{Name: webhookConfig}, mwc); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(mwc.DeepCopy())
	if b.webhookServices == nil {
		b.webhookServices = map[string]admissionregistrationv1.ServiceReference{}
	}
	for i := range mwc.Webhooks {
		cc := &mwc.Webhooks[i].ClientConfig
		if cc.Service == nil || cc.Service.Name != "kubepact-webhook" || cc.Service.Namespace != installNamespace {
			t.Fatalf("webhook %s is not sent to Service %s/kubepact-webhook: %+v", mwc.Webhooks[i].Name, installNamespace, cc)
		}
		b.webhookServices[mwc.Webhooks[i].Name] = *cc.Service
		path := "/"
		if cc.Service.Path != nil {
			path = *cc.Service.Path
		}
		url := fmt.Sprintf("https://127.0.0.1:%d%s", b.webhookPort, path)
		*cc = admissionregistrationv1.WebhookClientConfig{URL: &url, CABundle: cc.CABundle}
	}
	if err := b.c.Patch(t.Context(), mwc, patch); err != nil {
		t.Fatalf("pointing %s at the operator process: %v", webhookConfig, err)
	}
}

// startOperator runs the installed Deployment's container as a kubelet
// would: its image's entrypoint (pulled from the registry by digest) with
// its arguments and environment, as its ServiceAccount (the admin
// impersonating it); only addresses, ports and the cache directory move to
// loopback and a temporary directory.
func (b *envtestBackend) startOperator(t *testing.T) {
	t.Helper()
	dep := &appsv1.Deployment{}
	if err := b.c.Get(t.Context(), client.ObjectKey{Namespace: installNamespace, Name: operatorName}, dep); err != nil {
		t.Fatalf("the install's Deployment %s: %v", operatorName, err)
	}
	pod := dep.Spec.Template.Spec
	if len(pod.Containers) == 0 {
		t.Fatalf("Deployment %s has no container", operatorName)
	}
	c := pod.Containers[0]
	if len(c.Command) > 0 {
		t.Fatalf("Deployment %s overrides the image's entrypoint with %q; the suite runs the image's own", operatorName, c.Command)
	}
	b.operatorImage = c.Image
	bin := b.images.binary(t, c.Image)
	args := slices.Clone(c.Args)
	if len(args) == 0 || args[0] != "operator" {
		t.Fatalf("Deployment %s runs %q; want the operator command", operatorName, args)
	}
	cmdline := &flagLine{args: args[1:]}
	checkPorts(t, c, cmdline)

	b.probeAddr = fmt.Sprintf("127.0.0.1:%d", freeport.Port(t))
	b.metricsAddr = fmt.Sprintf("127.0.0.1:%d", freeport.Port(t))
	mcpPort := freeport.Port(t)
	b.mcpAddr = fmt.Sprintf("127.0.0.1:%d", mcpPort)
	if _, ok := cmdline.get("--webhook-port"); !ok {
		t.Fatalf("Deployment %s gives no --webhook-port: the install serves no injection webhook (args %q)", operatorName, args)
	}
	cmdline.set("--health-probe-bind-address", b.probeAddr)
	cmdline.set("--metrics-bind-address", b.metricsAddr)
	cmdline.set("--listen", "127.0.0.1")
	cmdline.set("--port", strconv.Itoa(mcpPort))
	cmdline.set("--webhook-port", strconv.Itoa(b.webhookPort))
	cmdline.set("--webhook-host", "127.0.0.1")
	cmdline.set("--webhook-ip-address", "127.0.0.1")
	for _, dir := range []string{"--cache-dir", "--webhook-cert-dir"} {
		if _, ok := cmdline.get(dir); ok {
			cmdline.set(dir, b.root.TempDir())
		}
	}
	if _, ok := cmdline.get("--plain-http"); !ok {
		// The test registry speaks plain HTTP on loopback.
		t.Logf("the install's operator has no --plain-http; added for the loopback test registry")
		cmdline.args = append(cmdline.args, "--plain-http")
	}
	// The test registry is on loopback, where only a registry named in
	// --allowed-registries may be.
	cmdline.args = append(cmdline.args, "--allowed-registries="+b.reg.Host)

	sa := pod.ServiceAccountName
	if sa == "" {
		t.Fatalf("Deployment %s names no serviceAccountName", operatorName)
	}
	kc := b.impersonatingKubeconfig(t, "system:serviceaccount:"+installNamespace+":"+sa)
	cmdline.set("--kubeconfig", kc)

	env := []string{"HOME=" + b.root.TempDir(), "KUBECONFIG="}
	for _, e := range c.Env {
		env = append(env, e.Name+"="+envValue(t, e, c))
	}
	full := append([]string{"operator"}, cmdline.args...)
	t.Logf("%s (from %s): kubepact %s", imageEntrypoint, c.Image, strings.Join(full, " "))
	b.operator = startProcess(b.root, bin, full, env)
}

// impersonatingKubeconfig is the admin's kubeconfig acting as user.
func (b *envtestBackend) impersonatingKubeconfig(t *testing.T, user string) string {
	t.Helper()
	kc, err := clientcmd.Load(b.adminKC)
	if err != nil {
		t.Fatal(err)
	}
	for _, ai := range kc.AuthInfos {
		ai.Impersonate = user
	}
	path := filepath.Join(b.root.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// envValue is what the kubelet would give the variable.
func envValue(t *testing.T, e corev1.EnvVar, c corev1.Container) string {
	t.Helper()
	switch {
	case e.ValueFrom == nil:
		return e.Value
	case e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.namespace":
		return installNamespace
	case e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.name":
		return operatorName + "-e2e"
	case e.ValueFrom.ResourceFieldRef != nil:
		r := e.ValueFrom.ResourceFieldRef
		var q = c.Resources.Limits
		name := strings.TrimPrefix(r.Resource, "limits.")
		if strings.HasPrefix(r.Resource, "requests.") {
			q, name = c.Resources.Requests, strings.TrimPrefix(r.Resource, "requests.")
		}
		v, ok := q[corev1.ResourceName(name)]
		if !ok {
			t.Fatalf("env %s: the container has no %s", e.Name, r.Resource)
		}
		div := int64(1)
		if r.Divisor.Value() > 0 {
			div = r.Divisor.Value()
		}
		return strconv.FormatInt((v.Value()+div-1)/div, 10)
	}
	t.Fatalf("env %s: the suite does not know how the kubelet fills %+v", e.Name, e.ValueFrom)
	return ""
}

// checkPorts: each named port the operator's container declares is the one
// the binary serves on with the chart's flags (or its defaults), so the
// chart's Service and probes reach what the binary opens.
func checkPorts(t *testing.T, c corev1.Container, cmdline *flagLine) {
	t.Helper()
	flags := map[string]struct{ flag, def string }{
		"metrics": {"--metrics-bind-address", ":8080"},
		"probes":  {"--health-probe-bind-address", ":8081"},
		"health":  {"--health-probe-bind-address", ":8081"},
		"mcp":     {"--port", "8585"},
		"webhook": {"--webhook-port", "0"},
	}
	for _, p := range c.Ports {
		f, ok := flags[p.Name]
		if !ok {
			t.Errorf("container port %s (%d): the suite does not know which flag serves it", p.Name, p.ContainerPort)
			continue
		}
		v, ok := cmdline.get(f.flag)
		if !ok {
			v = f.def
		}
		if _, port, err := net.SplitHostPort(v); err == nil {
			v = port
		}
		if v != strconv.Itoa(int(p.ContainerPort)) {
			t.Errorf("container port %s is %d, but %s=%s: the chart and the binary disagree", p.Name, p.ContainerPort, f.flag, v)
		}
	}
}

func (b *envtestBackend) waitOperatorReady(t *testing.T) {
	t.Helper()
	waitHTTP200(t, "http://"+b.probeAddr+"/readyz", b.operator)
}

func (b *envtestBackend) operatorMCP(*testing.T) string { return "http://" + b.mcpAddr + "/mcp" }

// sidecar runs the sidecar the webhook injected into pod, as the kubelet
// would: its image's entrypoint (kubepact) with the container's arguments.
// The Pod's network namespace is loopback here, shared with the operator
// and other Pods, so the two ports the sidecar listens on are moved to
// free ones; the arguments are otherwise the webhook's, verbatim.
func (b *envtestBackend) sidecar(t *testing.T, pod *corev1.Pod) string {
	t.Helper()
	c := injectedSidecar(t, pod)
	mcpPort, healthPort := freeport.Port(t), freeport.Port(t)
	args := &flagLine{args: slices.Clone(c.Args[1:])}
	args.set("--port", strconv.Itoa(mcpPort))
	args.set("--health-addr", "127.0.0.1:"+strconv.Itoa(healthPort))
	full := append([]string{c.Args[0]}, args.args...)
	// The container's environment too (GOMEMLIMIT from its memory limit).
	env := []string{"HOME=" + b.root.TempDir()}
	for _, e := range c.Env {
		if e.ValueFrom != nil {
			t.Fatalf("sidecar env %s comes from %+v; the suite passes literal values only", e.Name, e.ValueFrom)
		}
		env = append(env, e.Name+"="+e.Value)
	}
	t.Logf("sidecar (from %s): %s kubepact %s", c.Image, strings.Join(env[1:], " "), strings.Join(full, " "))
	p := startProcess(b.root, b.images.binary(t, c.Image), full, env)
	waitHTTP200(t, fmt.Sprintf("http://127.0.0.1:%d/readyz", healthPort), p)
	return fmt.Sprintf("http://127.0.0.1:%d/mcp", mcpPort)
}

// process is a kubepact process of the suite.
type process struct {
	cmd    *exec.Cmd
	logs   *syncBuffer
	exited chan error
}

func startProcess(t *testing.T, bin string, args, env []string) *process {
	t.Helper()
	p := &process{cmd: exec.Command(bin, args...), logs: &syncBuffer{}, exited: make(chan error, 1)}
	p.cmd.Env = append(os.Environ(), env...)
	p.cmd.Stdout, p.cmd.Stderr = p.logs, p.logs
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.exited <- p.cmd.Wait() }()
	t.Cleanup(func() { p.stop(t) })
	return p
}

func (p *process) done() bool {
	select {
	case err := <-p.exited:
		p.exited <- err
		return true
	default:
		return false
	}
}

// stop ends the process with SIGTERM (SIGKILL after 30s).
func (p *process) stop(t *testing.T) {
	if p == nil || p.done() {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-p.exited:
		p.exited <- err
	case <-time.After(30 * time.Second):
		_ = p.cmd.Process.Kill()
		t.Logf("%s killed after SIGTERM: %v", p.cmd.Args[1], <-p.exited)
	}
}

// waitHTTP200 polls url until it answers 200; the process exiting ends the
// wait at once.
func waitHTTP200(t *testing.T, url string, p *process) {
	t.Helper()
	eventually(t, "GET "+url+" 200", 90*time.Second, func() error {
		if p != nil && p.done() {
			t.Fatalf("%s exited before %s answered 200\n%s", p.cmd.Args[1], url, p.logs.String())
		}
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("%d", resp.StatusCode)
		}
		return nil
	})
}

// flagLine is a command line's flags: --name=value or --name value.
type flagLine struct{ args []string }

// get returns the flag's last value ("true" for a bare boolean).
func (f *flagLine) get(name string) (string, bool) {
	v, ok := "", false
	for i, a := range f.args {
		switch {
		case strings.HasPrefix(a, name+"="):
			v, ok = strings.TrimPrefix(a, name+"="), true
		case a == name:
			ok = true
			v = "true"
			if i+1 < len(f.args) && !strings.HasPrefix(f.args[i+1], "-") {
				v = f.args[i+1]
			}
		}
	}
	return v, ok
}

// set replaces every occurrence of the flag with --name=value, or appends it.
func (f *flagLine) set(name, value string) {
	out := make([]string, 0, len(f.args)+1)
	for i := 0; i < len(f.args); i++ {
		a := f.args[i]
		switch {
		case strings.HasPrefix(a, name+"="):
			continue
		case a == name:
			if i+1 < len(f.args) && !strings.HasPrefix(f.args[i+1], "-") {
				i++
			}
			continue
		}
		out = append(out, a)
	}
	out = append(out, name+"="+value)
	f.args = out
}
