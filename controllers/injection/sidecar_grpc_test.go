package injection_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubepact/kubepact/api/v1alpha1"
	"github.com/kubepact/kubepact/controllers/injection"
)

// withGRPC gives the contract's status a grpc interface, as the reconciler
// records it for examples/grpc/inventory.
func withGRPC(sc *v1alpha1.ServiceContract) {
	if sc.Status.Contract == nil {
		sc.Status.Contract = &v1alpha1.ContractSummary{Service: "catalog"}
	}
	sc.Status.Contract.GRPCInterface = "grpc"
	sc.Status.ToolSurfaceDigest = "sha256:" + strings.Repeat("5", 64)
}

// Tool surfaces of withSurfaces, one per mode.
var (
	surfaceAll      = "sha256:" + strings.Repeat("a", 64)
	surfaceDiscover = "sha256:" + strings.Repeat("d", 64)
	surfaceAuto     = "sha256:" + strings.Repeat("0", 64)
)

// withSurfaces gives the contract's status a tool surface per mode, as the
// reconciler records them (auto's made different from the other two, so
// that a mix-up shows).
func withSurfaces(sc *v1alpha1.ServiceContract) {
	sc.Status.ToolSurfaceDigest = surfaceAll
	sc.Status.ToolSurfaces = []v1alpha1.ToolSurface{{Mode: "all", Digest: surfaceAll}, {Mode: "discover", Digest: surfaceDiscover}, {Mode: "auto", Digest: surfaceAuto}}
}

// withoutDiscover drops mode discover's surface (not computed, or its
// projection failed).
func withoutDiscover(sc *v1alpha1.ServiceContract) {
	sc.Status.ToolSurfaces = slices.DeleteFunc(sc.Status.ToolSurfaces, func(s v1alpha1.ToolSurface) bool { return s.Mode == "discover" })
}

// namedPorts is an app Pod whose container declares name=port pairs.
func namedPorts(ann map[string]string, ports ...corev1.ContainerPort) *corev1.Pod {
	p := appPod(ann)
	p.Spec.Containers[0].Ports = ports
	return p
}

// TestBuildSidecarGRPCAndToolMode: the gRPC target and the tool mode the
// sidecar is given, from the Pod's annotations, its ports and the
// operator's default; what a Pod author gets wrong is refused (a port or
// a mode that is not one) or ignored with a warning (a gRPC port for a
// contract without a grpc interface), never a wrong flag.
func TestBuildSidecarGRPCAndToolMode(t *testing.T) {
	base := []string{"sidecar", "--bundle=oci://registry.example.com/bundles/catalog@" + testDigest, "--bundle-digest=" + testDigest,
		"--upstream=http://127.0.0.1:8080", "--port=8585", "--health-addr=:8586", "--no-cache"}
	with := func(extra ...string) []string { return append(append([]string{}, base...), extra...) }
	http := corev1.ContainerPort{Name: "http", ContainerPort: 8080}
	tests := []struct {
		name     string
		sc       *v1alpha1.ServiceContract
		pod      *corev1.Pod
		opts     injection.SidecarOptions
		args     []string
		grpcFrom string
		mode     string
		warnings []string
		err      string
		// surface is the tool surface the Pod is given; unset: the
		// status's toolSurfaceDigest in mode all, else none.
		surface *string
	}{
		{name: "gRPC port from the annotation", sc: resolvedContract(withGRPC), pod: appPod(map[string]string{injection.AnnotationGRPCPort: "9090"}, 8080),
			args: with("--grpc-target=127.0.0.1:9090"), grpcFrom: injection.PortFromAnnotation},
		{name: "the annotation wins over a port named grpc", sc: resolvedContract(withGRPC),
			pod:  namedPorts(map[string]string{injection.AnnotationGRPCPort: "7070"}, http, corev1.ContainerPort{Name: "grpc", ContainerPort: 9090}),
			args: with("--grpc-target=127.0.0.1:7070"), grpcFrom: injection.PortFromAnnotation},
		{name: "else the app container's port named grpc", sc: resolvedContract(withGRPC),
			pod:  namedPorts(nil, http, corev1.ContainerPort{Name: "grpc", ContainerPort: 9090}),
			args: with("--grpc-target=127.0.0.1:9090"), grpcFrom: injection.PortFromContainer + "app"},
		{name: "or named grpc-something", sc: resolvedContract(withGRPC),
			pod:  namedPorts(nil, http, corev1.ContainerPort{Name: "grpc-api", ContainerPort: 9091}),
			args: with("--grpc-target=127.0.0.1:9091"), grpcFrom: injection.PortFromContainer + "app"},
		{name: "a UDP port named grpc is not it", sc: resolvedContract(withGRPC),
			pod:      namedPorts(nil, http, corev1.ContainerPort{Name: "grpc", ContainerPort: 9090, Protocol: corev1.ProtocolUDP}),
			args:     base,
			warnings: []string{"ServiceContract catalog has the grpc interface grpc and the Pod names no gRPC port: its sidecar lists the gRPC tools, and a call says no target is set; set the annotation kubepact.dev/grpc-port, or name the app container's port grpc"}},
		{name: "no gRPC port: the tools are listed, and the Pod is told", sc: resolvedContract(withGRPC), pod: appPod(nil, 8080), args: base,
			warnings: []string{"ServiceContract catalog has the grpc interface grpc and the Pod names no gRPC port: its sidecar lists the gRPC tools, and a call says no target is set; set the annotation kubepact.dev/grpc-port, or name the app container's port grpc"}},
		{name: "a contract without a grpc interface: the annotation is ignored", sc: resolvedContract(), pod: appPod(map[string]string{injection.AnnotationGRPCPort: "9090"}, 8080),
			args: base, warnings: []string{"annotation kubepact.dev/grpc-port is ignored: ServiceContract catalog declares no grpc interface, so its sidecar calls no gRPC service"}},
		{name: "a contract without a grpc interface: a port named grpc is nothing", sc: resolvedContract(),
			pod: namedPorts(nil, http, corev1.ContainerPort{Name: "grpc", ContainerPort: 9090}), args: base},
		{name: "gRPC port out of range", sc: resolvedContract(withGRPC), pod: appPod(map[string]string{injection.AnnotationGRPCPort: "65536"}, 8080),
			err: `annotation kubepact.dev/grpc-port="65536": want a port number from 1 to 65535`},
		{name: "gRPC port zero", sc: resolvedContract(withGRPC), pod: appPod(map[string]string{injection.AnnotationGRPCPort: "0"}, 8080), err: "want a port number from 1 to 65535"},
		{name: "gRPC port not a number", sc: resolvedContract(withGRPC), pod: appPod(map[string]string{injection.AnnotationGRPCPort: "127.0.0.1:9090"}, 8080), err: "want a port number from 1 to 65535"},
		{name: "a bad gRPC port is refused even without a grpc interface", sc: resolvedContract(), pod: appPod(map[string]string{injection.AnnotationGRPCPort: "-1"}, 8080), err: "want a port number"},
		{name: "a huge gRPC port annotation is quoted cut", sc: resolvedContract(withGRPC), pod: appPod(map[string]string{injection.AnnotationGRPCPort: strings.Repeat("9", 10000)}, 8080), err: "want a port number"},

		{name: "tool mode from the annotation", sc: resolvedContract(), pod: appPod(map[string]string{injection.AnnotationToolMode: "discover"}, 8080),
			args: with("--tool-mode=discover"), mode: "discover"},
		{name: "auto", sc: resolvedContract(), pod: appPod(map[string]string{injection.AnnotationToolMode: "auto"}, 8080), args: with("--tool-mode=auto"), mode: "auto"},
		{name: "the operator's default", sc: resolvedContract(), pod: appPod(nil, 8080), opts: injection.SidecarOptions{ToolMode: "discover"},
			args: with("--tool-mode=discover"), mode: "discover"},
		{name: "the annotation wins over the operator's default", sc: resolvedContract(), pod: appPod(map[string]string{injection.AnnotationToolMode: "all"}, 8080),
			opts: injection.SidecarOptions{ToolMode: "discover"}, args: base, mode: "all"},
		{name: "a tool mode that is not one", sc: resolvedContract(), pod: appPod(map[string]string{injection.AnnotationToolMode: "Discover"}, 8080),
			err: `annotation kubepact.dev/tool-mode="Discover": want all (one tool per operation), discover (search, describe and call tools) or auto (discover for a large API)`},
		{name: "an empty tool mode", sc: resolvedContract(), pod: appPod(map[string]string{injection.AnnotationToolMode: ""}, 8080), err: "kubepact.dev/tool-mode=\"\""},
		{name: "each mode gets its own surface: all", sc: resolvedContract(withSurfaces), pod: appPod(map[string]string{injection.AnnotationToolMode: "all"}, 8080),
			args: base, mode: "all", surface: &surfaceAll},
		{name: "each mode gets its own surface: discover", sc: resolvedContract(withSurfaces), pod: appPod(map[string]string{injection.AnnotationToolMode: "discover"}, 8080),
			args: with("--tool-mode=discover"), mode: "discover", surface: &surfaceDiscover},
		{name: "each mode gets its own surface: auto", sc: resolvedContract(withSurfaces), pod: appPod(map[string]string{injection.AnnotationToolMode: "auto"}, 8080),
			args: with("--tool-mode=auto"), mode: "auto", surface: &surfaceAuto},
		{name: "the operator's default mode's surface", sc: resolvedContract(withSurfaces), pod: appPod(nil, 8080), opts: injection.SidecarOptions{ToolMode: "auto"},
			args: with("--tool-mode=auto"), mode: "auto", surface: &surfaceAuto},
		{name: "a mode the status has no surface for gets none", sc: resolvedContract(withSurfaces, withoutDiscover), pod: appPod(map[string]string{injection.AnnotationToolMode: "discover"}, 8080),
			args: with("--tool-mode=discover"), mode: "discover", surface: new(string)},
		{name: "nor mode all's when the list lacks it", sc: resolvedContract(withSurfaces, func(sc *v1alpha1.ServiceContract) { sc.Status.ToolSurfaces = sc.Status.ToolSurfaces[1:] }),
			pod: appPod(nil, 8080), args: base, mode: "all", surface: new(string)},
		{name: "both", sc: resolvedContract(withGRPC), pod: appPod(map[string]string{injection.AnnotationToolMode: "discover", injection.AnnotationGRPCPort: "9090"}, 8080),
			args: with("--grpc-target=127.0.0.1:9090", "--tool-mode=discover"), grpcFrom: injection.PortFromAnnotation, mode: "discover"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := injection.BuildSidecar(tt.sc, tt.pod, tt.opts)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want one saying %q", err, tt.err)
				}
				if len(err.Error()) > 400 {
					t.Errorf("the error quotes the whole annotation (%d bytes)", len(err.Error()))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(got.Container.Args, tt.args); diff != "" {
				t.Errorf("args (-got +want):\n%s", diff)
			}
			if diff := cmp.Diff(got.Warnings, tt.warnings); diff != "" {
				t.Errorf("warnings (-got +want):\n%s", diff)
			}
			if got.GRPCPortSource != tt.grpcFrom || (tt.grpcFrom == "") != (got.GRPCPort == 0) {
				t.Errorf("gRPC port %d from %q, want from %q", got.GRPCPort, got.GRPCPortSource, tt.grpcFrom)
			}
			mode := tt.mode
			if mode == "" {
				mode = "all"
			}
			if got.ToolMode != mode {
				t.Errorf("tool mode %q, want %q", got.ToolMode, mode)
			}
			// A status without toolSurfaces (written before them) holds
			// mode all's surface alone: the Pod is given it only when its
			// sidecar serves that mode.
			want := map[bool]string{true: tt.sc.Status.ToolSurfaceDigest, false: ""}[mode == "all"]
			if tt.surface != nil {
				want = *tt.surface
			}
			if got.ToolSurface != want {
				t.Errorf("tool surface %q, want %q in mode %s", got.ToolSurface, want, mode)
			}
			checkNativeRestrictedSidecar(t, got.Container)
		})
	}
}
