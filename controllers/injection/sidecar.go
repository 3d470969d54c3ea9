package injection

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	"github.com/kubepact/kubepact/api/v1alpha1"
	"github.com/kubepact/kubepact/bundle/oci"
	"github.com/kubepact/kubepact/internal/openapitools"
	"github.com/kubepact/kubepact/internal/sidecar"
	"github.com/kubepact/kubepact/internal/sidecar/podspec"
)

// Names the injection reads from and writes to Pods and Namespaces.
const (
	// LabelInjection on a Namespace, set to "enabled", opts its Pods in.
	LabelInjection = "kubepact.dev/injection"
	// AnnotationContract on a Pod names the ServiceContract (same
	// namespace) whose bundle the sidecar serves.
	AnnotationContract = "kubepact.dev/contract"
	// AnnotationInjectPolicy set to "required" refuses a Pod that cannot be
	// given its sidecar (see Injector), instead of admitting it without.
	AnnotationInjectPolicy = "kubepact.dev/inject-policy"
	// AnnotationUpstreamPort is the port of the service the sidecar calls
	// on 127.0.0.1. Without it: the contract's HTTP port
	// (status.contract.httpPort), else the first TCP containerPort of the
	// app container (kubectl.kubernetes.io/default-container, else the
	// first container).
	AnnotationUpstreamPort = "kubepact.dev/upstream-port"
	// AnnotationGRPCPort is the port of the gRPC service the sidecar calls
	// on 127.0.0.1 (--grpc-target) when the contract has a grpc interface
	// (status.contract.grpcInterface). Without it: the app container's TCP
	// containerPort named "grpc" or "grpc-…"; without either, the sidecar
	// lists the gRPC tools and a call says no target is set.
	AnnotationGRPCPort = "kubepact.dev/grpc-port"
	// AnnotationGRPCPortSource is written on an injected Pod given a gRPC
	// target: where its port came from, "annotation" or "container:NAME".
	AnnotationGRPCPortSource = "kubepact.dev/grpc-port-source"
	// AnnotationToolMode chooses the sidecar's --tool-mode: all (one tool
	// per operation), discover (search, describe and call tools) or auto;
	// without it the operator's --sidecar-tool-mode.
	AnnotationToolMode = "kubepact.dev/tool-mode"
	// AnnotationInjectedBundle is written on an injected Pod: the
	// digest-pinned reference its sidecar serves.
	AnnotationInjectedBundle = "kubepact.dev/injected-bundle"
	// AnnotationBundleDigest is written on an injected Pod: the bundle
	// digest its sidecar is pinned to (the sidecar refuses any other).
	AnnotationBundleDigest = "kubepact.dev/bundle-digest"
	// AnnotationToolSurface is written on an injected Pod: the digest of
	// the tool surface its sidecar serves, as the sidecar reports it on
	// /readyz?verbose (toolSurfaceDigest): the contract's
	// status.toolSurfaces entry for the Pod's tool mode. Absent when the
	// status has none for that mode.
	AnnotationToolSurface = "kubepact.dev/tool-surface"
	// AnnotationUpstreamPortSource is written on an injected Pod: where the
	// upstream port came from, "annotation", "contract:INTERFACE" or
	// "container:NAME".
	AnnotationUpstreamPortSource = "kubepact.dev/upstream-port-source"
	// LabelInjected is written on an injected Pod ("true"), so that the
	// operator watches only those Pods (a label selector; annotations
	// cannot be selected on).
	LabelInjected = "kubepact.dev/injected"
	// annotationDefaultContainer is kubectl's choice of a Pod's main
	// container, honoured for the upstream port.
	annotationDefaultContainer = "kubectl.kubernetes.io/default-container"
	// Resource overrides for the sidecar, honoured within
	// SidecarOptions.MaxResources.
	AnnotationCPURequest    = "kubepact.dev/sidecar-cpu-request"
	AnnotationCPULimit      = "kubepact.dev/sidecar-cpu-limit"
	AnnotationMemoryRequest = "kubepact.dev/sidecar-memory-request"
	AnnotationMemoryLimit   = "kubepact.dev/sidecar-memory-limit"
)

// InjectPolicyRequired is the one value of AnnotationInjectPolicy that
// changes anything.
const InjectPolicyRequired = "required"

// Fixed paths inside the sidecar container.
const (
	registrySecretVolume = "kubepact-registry"
	registrySecretDir    = "/var/run/secrets/kubepact/registry"
	registrySecretFile   = registrySecretDir + "/config.json"
	bundleVolume         = "kubepact-bundle"
	bundleDir            = "/var/run/kubepact/bundle"
	bundleFile           = bundleDir + "/" + v1alpha1.ConfigMapBundleKey
)

// SidecarOptions is the operator's configuration of the injected sidecar.
// The zero value of each field takes the default DefaultSidecarOptions has.
type SidecarOptions struct {
	// Image is the image the sidecar runs: the operator's own.
	Image string
	// ContainerName is the injected init container's name.
	ContainerName string
	// MCPPort is where the sidecar serves MCP (on 127.0.0.1, reached with
	// kubectl port-forward); HealthPort serves /healthz and /readyz.
	MCPPort, HealthPort int32
	// RunAsUser is the sidecar's user: not root, as the restricted Pod
	// Security Standard requires.
	RunAsUser int64
	// Resources are the sidecar's requests and limits unless a Pod's
	// annotations override them.
	Resources corev1.ResourceRequirements
	// MaxResources bounds what an annotation may ask for (cpu, memory); an
	// override above it is ignored with a warning.
	MaxResources corev1.ResourceList
	// PlainHTTP makes the sidecar talk to registries over plain HTTP (test
	// registries only), as the operator itself does.
	PlainHTTP bool
	// ToolMode is the sidecar's --tool-mode unless a Pod's
	// AnnotationToolMode says otherwise: all, discover or auto ("": all).
	ToolMode string
}

// DefaultSidecarOptions returns the sidecar configuration used when the
// operator sets nothing: the README's native sidecar.
func DefaultSidecarOptions() SidecarOptions {
	return SidecarOptions{
		Image:         "ghcr.io/kubepact/kubepact:latest",
		ContainerName: "kubepact",
		MCPPort:       8585,
		HealthPort:    8586,
		RunAsUser:     65532,
		Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("32Mi")},
			Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi")},
		},
		MaxResources: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("512Mi")},
	}
}

// withDefaults fills the zero fields of o from DefaultSidecarOptions.
func (o SidecarOptions) withDefaults() SidecarOptions {
	d := DefaultSidecarOptions()
	if o.Image == "" {
		o.Image = d.Image
	}
	if o.ContainerName == "" {
		o.ContainerName = d.ContainerName
	}
	if o.MCPPort == 0 {
		o.MCPPort = d.MCPPort
	}
	if o.HealthPort == 0 {
		o.HealthPort = d.HealthPort
	}
	if o.RunAsUser == 0 {
		o.RunAsUser = d.RunAsUser
	}
	if o.Resources.Requests == nil && o.Resources.Limits == nil {
		o.Resources = d.Resources
	}
	if o.MaxResources == nil {
		o.MaxResources = d.MaxResources
	}
	return o
}

// Injection is what admitting one Pod adds to it.
type Injection struct {
	// Container is the native sidecar: an init container with
	// restartPolicy Always.
	Container corev1.Container
	// Volumes are added to the Pod for the sidecar alone (the pull
	// Secret, or the bundle's ConfigMap).
	Volumes []corev1.Volume
	// BundleRef is the digest-pinned reference the sidecar serves
	// (configmap/NAME@DIGEST for a ConfigMap bundle).
	BundleRef string
	// Digest is the bundle digest the sidecar is pinned to.
	Digest string
	// ToolSurface is the digest of the tool surface the sidecar serves in
	// ToolMode, from the contract's status ("" when it has none).
	ToolSurface string
	// UpstreamPort is the port the sidecar calls, and PortSource where it
	// came from (see AnnotationUpstreamPortSource).
	UpstreamPort int32
	PortSource   string
	// GRPCPort is the port of the gRPC service the sidecar calls (0: none
	// given), and GRPCPortSource where it came from (see
	// AnnotationGRPCPortSource).
	GRPCPort       int32
	GRPCPortSource string
	// ToolMode is the sidecar's --tool-mode.
	ToolMode string
	// Warnings are annotations that were ignored, and why.
	Warnings []string
}

// errNotInjectable marks what no retry of the admission can change: the
// Pod or the contract asks for something the sidecar cannot be built from.
var errNotInjectable = errors.New("cannot inject")

// BuildSidecar builds the sidecar for a Pod from its Ready ServiceContract,
// the Pod's annotations and the operator's options. It reads nothing else
// and has no side effects. An oci:// bundle is pinned to status.digest in
// the repository of status.resolvedRef — never a tag; a ConfigMap bundle is
// mounted read-only and pinned by the same digest, which the sidecar checks
// against what it reads (--bundle-digest) and refuses to start on any other.
func BuildSidecar(sc *v1alpha1.ServiceContract, pod *corev1.Pod, opts SidecarOptions) (*Injection, error) {
	o := opts.withDefaults()
	src, err := pinnedSource(sc)
	if err != nil {
		return nil, err
	}
	port, from, err := upstreamPort(sc, pod)
	if err != nil {
		return nil, err
	}
	mode, err := toolMode(pod, o)
	if err != nil {
		return nil, err
	}
	gport, gfrom, gwarn, err := grpcPort(sc, pod)
	if err != nil {
		return nil, err
	}
	inj := &Injection{BundleRef: src.ref, Digest: sc.Status.Digest, UpstreamPort: port, PortSource: from, GRPCPort: gport, GRPCPortSource: gfrom, ToolMode: mode}
	inj.ToolSurface = toolSurface(sc, mode)
	cfg := o.Config(src.bundleArg, sc.Status.Digest, port)
	cfg.Tools.ToolMode = mode
	if gport != 0 {
		cfg.GRPCTarget = "127.0.0.1:" + strconv.Itoa(int(gport))
	}
	if gwarn != "" {
		inj.Warnings = append(inj.Warnings, gwarn)
	}
	pullSecret := sc.Spec.PullSecretRef != nil && sc.Spec.Bundle.ConfigMapRef == nil
	if pullSecret {
		cfg.Registry.SecretFile = registrySecretFile
	}
	resources, warnings := sidecarResources(pod.Annotations, o)
	inj.Warnings = append(inj.Warnings, warnings...)
	c := podspec.Container(cfg, podspec.ContainerSpec{Name: o.ContainerName, Image: o.Image, RunAsUser: o.RunAsUser, Resources: resources})
	if cm := sc.Spec.Bundle.ConfigMapRef; cm != nil {
		c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: bundleVolume, MountPath: bundleDir, ReadOnly: true})
		inj.Volumes = append(inj.Volumes, corev1.Volume{Name: bundleVolume, VolumeSource: corev1.VolumeSource{
			ConfigMap: &corev1.ConfigMapVolumeSource{
				LocalObjectReference: corev1.LocalObjectReference{Name: cm.Name},
				Items:                []corev1.KeyToPath{{Key: v1alpha1.ConfigMapBundleKey, Path: v1alpha1.ConfigMapBundleKey}},
				// Readable by the sidecar's non-root user without an
				// fsGroup; the mount itself is read-only.
				DefaultMode: ptr.To[int32](0o444),
			},
		}})
	}
	if pullSecret {
		c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: registrySecretVolume, MountPath: registrySecretDir, ReadOnly: true})
		inj.Volumes = append(inj.Volumes, corev1.Volume{Name: registrySecretVolume, VolumeSource: corev1.VolumeSource{
			Secret: &corev1.SecretVolumeSource{
				SecretName: sc.Spec.PullSecretRef.Name,
				Items:      []corev1.KeyToPath{{Key: corev1.DockerConfigJsonKey, Path: "config.json"}},
				// The volume is mounted in the sidecar alone, which runs
				// as a non-root user and, without a Pod fsGroup, could not
				// read a file only root's group may.
				DefaultMode: ptr.To[int32](0o444),
			},
		}})
	}
	inj.Container = c
	return inj, nil
}

// Config is the sidecar configuration the webhook writes for a bundle
// argument (an oci:// reference pinned by digest, or the mounted ConfigMap
// file), the digest it must have, and the upstream port. The operator
// computes the tool surface it records (sidecar.ToolSurface) from this
// same value.
func (o SidecarOptions) Config(bundleArg, digest string, upstreamPort int32) sidecar.Config {
	o = o.withDefaults()
	cfg := sidecar.DefaultConfig()
	cfg.Bundle = bundleArg
	cfg.BundleDigest = digest
	cfg.Upstream = "http://127.0.0.1:" + strconv.Itoa(int(upstreamPort))
	cfg.HTTP.Port = int(o.MCPPort)
	cfg.HealthAddr = ":" + strconv.Itoa(int(o.HealthPort))
	// The root filesystem is read-only and a pinned digest is pulled once
	// per container start: no content cache.
	cfg.Registry.NoCache = true
	cfg.Registry.PlainHTTP = o.PlainHTTP
	if o.ToolMode != "" {
		cfg.Tools.ToolMode = o.ToolMode
	}
	return cfg
}

// pinned is where the sidecar reads its bundle: ref names it in the
// AnnotationInjectedBundle, bundleArg is the sidecar's --bundle.
type pinned struct{ ref, bundleArg string }

// pinnedSource is oci://registry/repository@digest from the contract's
// status, or the mounted ConfigMap file for a ConfigMap bundle.
func pinnedSource(sc *v1alpha1.ServiceContract) (pinned, error) {
	if sc.Status.Digest == "" || sc.Status.ResolvedRef == "" {
		return pinned{}, fmt.Errorf("%w: ServiceContract %s has no resolved digest yet", errNotInjectable, sc.Name)
	}
	if cm := sc.Spec.Bundle.ConfigMapRef; cm != nil {
		if sc.Status.ResolvedRef != "configmap/"+cm.Name {
			return pinned{}, fmt.Errorf("%w: ServiceContract %s: status.resolvedRef %s is not its ConfigMap %s yet", errNotInjectable, sc.Name, sc.Status.ResolvedRef, cm.Name)
		}
		return pinned{ref: sc.Status.ResolvedRef + "@" + sc.Status.Digest, bundleArg: bundleFile}, nil
	}
	r, err := oci.ParseReference(sc.Status.ResolvedRef)
	if err != nil {
		return pinned{}, fmt.Errorf("%w: ServiceContract %s: status.resolvedRef: %w", errNotInjectable, sc.Name, err)
	}
	if r.Digest != sc.Status.Digest {
		return pinned{}, fmt.Errorf("%w: ServiceContract %s: status.resolvedRef %s does not carry status.digest %s", errNotInjectable, sc.Name, sc.Status.ResolvedRef, sc.Status.Digest)
	}
	ref := oci.Scheme + r.Registry + "/" + r.Repository + "@" + r.Digest
	return pinned{ref: ref, bundleArg: ref}, nil
}

// Upstream port sources (AnnotationUpstreamPortSource).
const (
	PortFromAnnotation = "annotation"
	PortFromContract   = "contract:"
	PortFromContainer  = "container:"
)

// upstreamPort is the Pod's AnnotationUpstreamPort; else the contract's
// HTTP port (the first server URL of its first OpenAPI interface, when it
// names a port); else the first TCP containerPort of the app container
// (kubectl.kubernetes.io/default-container, else the first container).
// The second result says which was used.
func upstreamPort(sc *v1alpha1.ServiceContract, pod *corev1.Pod) (int32, string, error) {
	if v, ok := pod.Annotations[AnnotationUpstreamPort]; ok {
		n, err := strconv.ParseInt(v, 10, 32)
		if err != nil || n < 1 || n > 65535 {
			return 0, "", fmt.Errorf("%w: annotation %s=%q: want a port number from 1 to 65535", errNotInjectable, AnnotationUpstreamPort, v)
		}
		return int32(n), PortFromAnnotation, nil
	}
	if c := sc.Status.Contract; c != nil && c.HTTPPort > 0 && c.HTTPPort <= 65535 {
		return c.HTTPPort, PortFromContract + c.HTTPInterface, nil
	}
	app := appContainer(pod)
	if app == nil {
		return 0, "", fmt.Errorf("%w: the Pod has no container; set the annotation %s", errNotInjectable, AnnotationUpstreamPort)
	}
	for _, p := range app.Ports {
		if p.Protocol == "" || p.Protocol == corev1.ProtocolTCP {
			return p.ContainerPort, PortFromContainer + app.Name, nil
		}
	}
	return 0, "", fmt.Errorf("%w: no upstream port: the Pod has no annotation %s, the contract's first OpenAPI interface names no port in its first server URL, and the app container %q declares no TCP containerPort; set the annotation %s", errNotInjectable, AnnotationUpstreamPort, app.Name, AnnotationUpstreamPort)
}

// ToolModes are the values of AnnotationToolMode and
// SidecarOptions.ToolMode.
var ToolModes = []string{openapitools.ToolModeAll, openapitools.ToolModeDiscover, openapitools.ToolModeAuto}

// toolMode is the Pod's AnnotationToolMode, else the operator's default,
// else all.
func toolMode(pod *corev1.Pod, o SidecarOptions) (string, error) {
	if v, ok := pod.Annotations[AnnotationToolMode]; ok {
		if !slices.Contains(ToolModes, v) {
			return "", fmt.Errorf("%w: annotation %s=%q: want all (one tool per operation), discover (search, describe and call tools) or auto (discover for a large API)", errNotInjectable, AnnotationToolMode, truncate(v, 64))
		}
		return v, nil
	}
	return cmp.Or(o.ToolMode, openapitools.ToolModeAll), nil
}

// toolSurface is the tool surface the contract's status records for the
// tool mode, "" when it records none: a Pod is given no surface rather
// than another mode's. A status written before status.toolSurfaces holds
// mode all's in status.toolSurfaceDigest alone.
func toolSurface(sc *v1alpha1.ServiceContract, mode string) string {
	for _, s := range sc.Status.ToolSurfaces {
		if s.Mode == mode {
			return s.Digest
		}
	}
	if len(sc.Status.ToolSurfaces) == 0 && mode == openapitools.ToolModeAll {
		return sc.Status.ToolSurfaceDigest
	}
	return ""
}

// grpcPort is, for a contract with a grpc interface, the Pod's
// AnnotationGRPCPort, else the app container's TCP port named "grpc" or
// "grpc-…"; the second result says which. Without either, or for a
// contract without a grpc interface, it is 0 with a warning when the Pod
// asked for something that is not done. A port annotation that is not a
// port is an error, as for AnnotationUpstreamPort.
func grpcPort(sc *v1alpha1.ServiceContract, pod *corev1.Pod) (port int32, from, warning string, err error) {
	v, set := pod.Annotations[AnnotationGRPCPort]
	if set {
		n, err := strconv.ParseInt(v, 10, 32)
		if err != nil || n < 1 || n > 65535 {
			return 0, "", "", fmt.Errorf("%w: annotation %s=%q: want a port number from 1 to 65535", errNotInjectable, AnnotationGRPCPort, truncate(v, 64))
		}
		port, from = int32(n), PortFromAnnotation
	}
	iface := ""
	if c := sc.Status.Contract; c != nil {
		iface = c.GRPCInterface
	}
	if iface == "" {
		if set {
			return 0, "", fmt.Sprintf("annotation %s is ignored: ServiceContract %s declares no grpc interface, so its sidecar calls no gRPC service", AnnotationGRPCPort, sc.Name), nil
		}
		return 0, "", "", nil
	}
	if set {
		return port, from, "", nil
	}
	if app := appContainer(pod); app != nil {
		for _, p := range app.Ports {
			if (p.Protocol == "" || p.Protocol == corev1.ProtocolTCP) && (p.Name == "grpc" || strings.HasPrefix(p.Name, "grpc-")) {
				return p.ContainerPort, PortFromContainer + app.Name, "", nil
			}
		}
	}
	return 0, "", fmt.Sprintf("ServiceContract %s has the grpc interface %s and the Pod names no gRPC port: its sidecar lists the gRPC tools, and a call says no target is set; set the annotation %s, or name the app container's port grpc", sc.Name, iface, AnnotationGRPCPort), nil
}

// appContainer is the container kubectl.kubernetes.io/default-container
// names, else the first.
func appContainer(pod *corev1.Pod) *corev1.Container {
	if name := pod.Annotations[annotationDefaultContainer]; name != "" {
		for i := range pod.Spec.Containers {
			if pod.Spec.Containers[i].Name == name {
				return &pod.Spec.Containers[i]
			}
		}
	}
	if len(pod.Spec.Containers) == 0 {
		return nil
	}
	return &pod.Spec.Containers[0]
}

// sidecarResources applies the Pod's resource annotations over the
// operator's defaults, each within its bound; what it ignores it says.
func sidecarResources(ann map[string]string, o SidecarOptions) (corev1.ResourceRequirements, []string) {
	out := *o.Resources.DeepCopy()
	var warnings []string
	set := func(key string, list *corev1.ResourceList, name corev1.ResourceName) {
		v, ok := ann[key]
		if !ok {
			return
		}
		q, err := resource.ParseQuantity(v)
		if err != nil || q.Sign() <= 0 {
			warnings = append(warnings, fmt.Sprintf("annotation %s=%q is not a positive quantity; the operator's default is used", key, v))
			return
		}
		if max, ok := o.MaxResources[name]; ok && q.Cmp(max) > 0 {
			warnings = append(warnings, fmt.Sprintf("annotation %s=%s is above the operator's bound %s; the operator's default is used", key, v, max.String()))
			return
		}
		if *list == nil {
			*list = corev1.ResourceList{}
		}
		(*list)[name] = q
	}
	set(AnnotationCPURequest, &out.Requests, corev1.ResourceCPU)
	set(AnnotationMemoryRequest, &out.Requests, corev1.ResourceMemory)
	set(AnnotationCPULimit, &out.Limits, corev1.ResourceCPU)
	set(AnnotationMemoryLimit, &out.Limits, corev1.ResourceMemory)
	// A request above its limit is refused by the API server: the limit
	// wins, and the request follows it down.
	for name, lim := range out.Limits {
		if req, ok := out.Requests[name]; ok && req.Cmp(lim) > 0 {
			warnings = append(warnings, fmt.Sprintf("sidecar %s request %s is above its limit %s; the request is lowered to the limit", name, req.String(), lim.String()))
			out.Requests[name] = lim
		}
	}
	return out, warnings
}
