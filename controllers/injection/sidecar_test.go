package injection_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kubepact/kubepact/api/v1alpha1"
	"github.com/kubepact/kubepact/controllers/injection"
)

const testDigest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

func resolvedContract(mod ...func(*v1alpha1.ServiceContract)) *v1alpha1.ServiceContract {
	sc := &v1alpha1.ServiceContract{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "catalog"},
		Spec: v1alpha1.ServiceContractSpec{
			Bundle:    v1alpha1.BundleSource{OCI: "oci://registry.example.com/bundles/catalog:1.4.0"},
			TargetRef: v1alpha1.TargetReference{Kind: "Deployment", Name: "catalog"},
		},
		Status: v1alpha1.ServiceContractStatus{
			ResolvedRef: "registry.example.com/bundles/catalog:1.4.0@" + testDigest,
			Digest:      testDigest,
		},
	}
	for _, m := range mod {
		m(sc)
	}
	return sc
}

func appPod(ann map[string]string, ports ...int32) *corev1.Pod {
	c := corev1.Container{Name: "app", Image: "example.invalid/app:1"}
	for _, p := range ports {
		c.Ports = append(c.Ports, corev1.ContainerPort{ContainerPort: p})
	}
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Annotations: ann}, Spec: corev1.PodSpec{Containers: []corev1.Container{c}}}
}

// TestBuildSidecar is the sidecar's one pure builder, case by case: what
// it writes for each input, and what it refuses.
func TestBuildSidecar(t *testing.T) {
	base := []string{"sidecar", "--bundle=oci://registry.example.com/bundles/catalog@" + testDigest, "--bundle-digest=" + testDigest,
		"--upstream=http://127.0.0.1:8080", "--port=8585", "--health-addr=:8586", "--no-cache"}
	q := resource.MustParse
	defaults := injection.DefaultSidecarOptions().Resources
	tests := []struct {
		name      string
		sc        *v1alpha1.ServiceContract
		pod       *corev1.Pod
		opts      injection.SidecarOptions
		args      []string
		resources *corev1.ResourceRequirements
		volumes   int
		warnings  []string
		// portFrom is the AnnotationUpstreamPortSource written; "" is
		// container:app.
		portFrom string
		err      string
	}{
		{name: "tag resolved, pinned by digest", sc: resolvedContract(), pod: appPod(nil, 8080), args: base},
		{name: "digest reference", sc: resolvedContract(func(sc *v1alpha1.ServiceContract) {
			sc.Spec.Bundle.OCI = "oci://registry.example.com/bundles/catalog@" + testDigest
			sc.Status.ResolvedRef = "registry.example.com/bundles/catalog@" + testDigest
		}), pod: appPod(nil, 8080), args: base},
		{name: "port from the annotation wins", sc: resolvedContract(withHTTPPort(7000)), pod: appPod(map[string]string{injection.AnnotationUpstreamPort: "9000"}, 8080),
			args: replaceArg(base, "--upstream=", "--upstream=http://127.0.0.1:9000"), portFrom: injection.PortFromAnnotation},
		{name: "else the contract's HTTP port", sc: resolvedContract(withHTTPPort(7000)), pod: appPod(nil, 8080),
			args: replaceArg(base, "--upstream=", "--upstream=http://127.0.0.1:7000"), portFrom: injection.PortFromContract + "http"},
		{name: "else the app container's first TCP port", sc: resolvedContract(), pod: appPod(nil, 8080), args: base, portFrom: injection.PortFromContainer + "app"},
		{name: "the default-container annotation names the app container", sc: resolvedContract(), pod: func() *corev1.Pod {
			p := appPod(map[string]string{"kubectl.kubernetes.io/default-container": "main"}, 9999)
			p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: "main", Image: "x", Ports: []corev1.ContainerPort{{ContainerPort: 8080}}})
			return p
		}(), args: base, portFrom: injection.PortFromContainer + "main"},
		{name: "first TCP port", sc: resolvedContract(), pod: func() *corev1.Pod {
			p := appPod(nil)
			p.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 53, Protocol: corev1.ProtocolUDP}, {ContainerPort: 8081, Protocol: corev1.ProtocolTCP}}
			return p
		}(), args: replaceArg(base, "--upstream=", "--upstream=http://127.0.0.1:8081")},
		{name: "no port anywhere", sc: resolvedContract(), pod: appPod(nil), err: `the app container "app" declares no TCP containerPort; set the annotation kubepact.dev/upstream-port`},
		{name: "no container", sc: resolvedContract(), pod: &corev1.Pod{}, err: "the Pod has no container"},
		{name: "port annotation out of range", sc: resolvedContract(), pod: appPod(map[string]string{injection.AnnotationUpstreamPort: "70000"}, 8080), err: "want a port number from 1 to 65535"},
		{name: "port annotation not a number", sc: resolvedContract(), pod: appPod(map[string]string{injection.AnnotationUpstreamPort: "http"}, 8080), err: "want a port number"},
		{name: "plain HTTP registry", sc: resolvedContract(), pod: appPod(nil, 8080), opts: injection.SidecarOptions{PlainHTTP: true},
			args: append(append([]string{}, base...), "--plain-http")},
		{name: "pull secret mounted for the sidecar", sc: resolvedContract(func(sc *v1alpha1.ServiceContract) {
			sc.Spec.PullSecretRef = &v1alpha1.LocalObjectReference{Name: "creds"}
		}), pod: appPod(nil, 8080), args: append(append([]string{}, base...), "--registry-secret-file=/var/run/secrets/kubepact/registry/config.json"), volumes: 1},
		{name: "ConfigMap bundle mounted and pinned by digest", sc: configMapContract(), pod: appPod(nil, 8080),
			args: replaceArg(base, "--bundle=", "--bundle=/var/run/kubepact/bundle/bundle.tar.gz"), volumes: 1},
		{name: "ConfigMap bundle: a pull Secret is not mounted", sc: configMapContract(func(sc *v1alpha1.ServiceContract) {
			sc.Spec.PullSecretRef = &v1alpha1.LocalObjectReference{Name: "creds"}
		}), pod: appPod(nil, 8080), args: replaceArg(base, "--bundle=", "--bundle=/var/run/kubepact/bundle/bundle.tar.gz"), volumes: 1},
		{name: "ConfigMap bundle resolved from another ConfigMap", sc: configMapContract(func(sc *v1alpha1.ServiceContract) {
			sc.Status.ResolvedRef = "configmap/old"
		}), pod: appPod(nil, 8080), err: "is not its ConfigMap b yet"},
		{name: "not resolved yet", sc: resolvedContract(func(sc *v1alpha1.ServiceContract) { sc.Status = v1alpha1.ServiceContractStatus{} }),
			pod: appPod(nil, 8080), err: "no resolved digest yet"},
		{name: "resolvedRef and digest disagree", sc: resolvedContract(func(sc *v1alpha1.ServiceContract) {
			sc.Status.Digest = "sha256:" + strings.Repeat("f", 64)
		}), pod: appPod(nil, 8080), err: "does not carry status.digest"},
		{name: "resources within bounds", sc: resolvedContract(), pod: appPod(map[string]string{
			injection.AnnotationCPURequest: "50m", injection.AnnotationMemoryLimit: "128Mi", injection.AnnotationCPULimit: "200m",
		}, 8080), args: base, resources: &corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: q("50m"), corev1.ResourceMemory: q("32Mi")},
			Limits:   corev1.ResourceList{corev1.ResourceMemory: q("128Mi"), corev1.ResourceCPU: q("200m")},
		}},
		{name: "resources above the bound are ignored", sc: resolvedContract(), pod: appPod(map[string]string{
			injection.AnnotationMemoryLimit: "4Gi", injection.AnnotationCPURequest: "lots",
		}, 8080), args: base, resources: &defaults, warnings: []string{
			`annotation kubepact.dev/sidecar-cpu-request="lots" is not a positive quantity; the operator's default is used`,
			"annotation kubepact.dev/sidecar-memory-limit=4Gi is above the operator's bound 512Mi; the operator's default is used",
		}},
		{name: "request above its limit follows it down", sc: resolvedContract(), pod: appPod(map[string]string{
			injection.AnnotationMemoryRequest: "100Mi",
		}, 8080), args: base, resources: &corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: q("10m"), corev1.ResourceMemory: q("64Mi")},
			Limits:   corev1.ResourceList{corev1.ResourceMemory: q("64Mi")},
		}, warnings: []string{"sidecar memory request 100Mi is above its limit 64Mi; the request is lowered to the limit"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := injection.BuildSidecar(tt.sc, tt.pod, tt.opts)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want one saying %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			c := got.Container
			if diff := cmp.Diff(c.Args, tt.args); diff != "" {
				t.Errorf("args (-got +want):\n%s", diff)
			}
			for _, a := range c.Args {
				if strings.HasPrefix(a, "--bundle=") && strings.Contains(strings.TrimPrefix(a, "--bundle=oci://"), ":1.4.0") {
					t.Errorf("%s: the bundle is pinned to a tag", a)
				}
			}
			want := tt.resources
			if want == nil {
				want = &defaults
			}
			if diff := cmp.Diff(c.Resources, *want, cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })); diff != "" {
				t.Errorf("resources (-got +want):\n%s", diff)
			}
			if diff := cmp.Diff(got.Warnings, tt.warnings); diff != "" {
				t.Errorf("warnings (-got +want):\n%s", diff)
			}
			// The Go runtime is told 90% of the memory limit.
			memLimit := want.Limits[corev1.ResourceMemory]
			wantEnv := []corev1.EnvVar{{Name: "GOMEMLIMIT", Value: strconv.FormatInt(memLimit.Value()/10*9, 10)}}
			if diff := cmp.Diff(c.Env, wantEnv); diff != "" {
				t.Errorf("env (-got +want):\n%s", diff)
			}
			portFrom := tt.portFrom
			if portFrom == "" && tt.pod.Annotations[injection.AnnotationUpstreamPort] == "" {
				portFrom = injection.PortFromContainer + "app"
			}
			if portFrom != "" && got.PortSource != portFrom {
				t.Errorf("upstream port source %q, want %q", got.PortSource, portFrom)
			}
			if got.Digest != tt.sc.Status.Digest {
				t.Errorf("digest %q, want status.digest %q", got.Digest, tt.sc.Status.Digest)
			}
			if len(got.Volumes) != tt.volumes || len(c.VolumeMounts) != tt.volumes {
				t.Errorf("%d volumes, %d mounts; want %d", len(got.Volumes), len(c.VolumeMounts), tt.volumes)
			}
			for _, m := range c.VolumeMounts {
				if !m.ReadOnly {
					t.Errorf("mount %s is writable", m.Name)
				}
			}
			checkNativeRestrictedSidecar(t, c)
		})
	}
}

// checkNativeRestrictedSidecar holds the container to what every injected
// sidecar must be: native (restartPolicy Always), probed on /readyz, and
// within the restricted Pod Security Standard on its own.
func checkNativeRestrictedSidecar(t *testing.T, c corev1.Container) {
	t.Helper()
	if c.RestartPolicy == nil || *c.RestartPolicy != corev1.ContainerRestartPolicyAlways {
		t.Errorf("restartPolicy %v, want Always (a native sidecar)", c.RestartPolicy)
	}
	for what, p := range map[string]*corev1.Probe{"startup": c.StartupProbe, "readiness": c.ReadinessProbe} {
		if p == nil || p.HTTPGet == nil || p.HTTPGet.Path != "/readyz" {
			t.Errorf("%s probe %+v, want GET /readyz", what, p)
		}
	}
	sc := c.SecurityContext
	want := &corev1.SecurityContext{
		RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To[int64](65532), ReadOnlyRootFilesystem: ptr.To(true),
		AllowPrivilegeEscalation: ptr.To(false), Privileged: ptr.To(false),
		Capabilities:   &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
	if diff := cmp.Diff(sc, want); diff != "" {
		t.Errorf("securityContext (-got +want):\n%s", diff)
	}
	var mcp bool
	for _, p := range c.Ports {
		mcp = mcp || p.Name == "mcp"
	}
	if !mcp {
		t.Errorf("ports %+v: no port named mcp", c.Ports)
	}
}

func withHTTPPort(port int32) func(*v1alpha1.ServiceContract) {
	return func(sc *v1alpha1.ServiceContract) {
		sc.Status.Contract = &v1alpha1.ContractSummary{Service: "catalog", HTTPPort: port, HTTPInterface: "http"}
	}
}

// configMapContract is a ServiceContract reading its bundle from the
// ConfigMap "b", as the reconciler leaves it once resolved.
func configMapContract(mod ...func(*v1alpha1.ServiceContract)) *v1alpha1.ServiceContract {
	return resolvedContract(append([]func(*v1alpha1.ServiceContract){func(sc *v1alpha1.ServiceContract) {
		sc.Spec.Bundle = v1alpha1.BundleSource{ConfigMapRef: &v1alpha1.LocalObjectReference{Name: "b"}}
		sc.Status.ResolvedRef = "configmap/b"
	}}, mod...)...)
}

func replaceArg(args []string, prefix, with string) []string {
	out := append([]string{}, args...)
	for i, a := range out {
		if strings.HasPrefix(a, prefix) {
			out[i] = with
		}
	}
	return out
}
