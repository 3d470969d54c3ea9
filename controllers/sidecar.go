package controllers

import (
	"errors"
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/kubepact/kubepact/api/v1alpha1"
	"github.com/kubepact/kubepact/bundle/oci"
)

// Names the injection reads from and writes to Pods and Namespaces.
const (
	// LabelInjection on a Namespace, set to "enabled", opts its Pods in.
	LabelInjection = "kubepact.dev/injection"
	// AnnotationContract on a Pod names the ServiceContract (same
	// namespace) whose bundle the sidecar serves.
	AnnotationContract = "kubepact.dev/contract"
	// AnnotationInjectPolicy set to "required" refuses a Pod whose contract
	// is missing or not Ready, instead of admitting it without a sidecar.
	AnnotationInjectPolicy = "kubepact.dev/inject-policy"
	// AnnotationUpstreamPort is the port of the service the sidecar calls
	// on 127.0.0.1 (default: the first TCP containerPort of the Pod's first
	// container).
	AnnotationUpstreamPort = "kubepact.dev/upstream-port"
	// AnnotationInjectedBundle is written on an injected Pod: the
	// digest-pinned reference its sidecar serves.
	AnnotationInjectedBundle = "kubepact.dev/injected-bundle"
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
	sidecarPortName      = "mcp"
	sidecarProbePortName = "kubepact-probes"
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
	// Secret).
	Volumes []corev1.Volume
	// BundleRef is the digest-pinned reference the sidecar serves.
	BundleRef string
	// Warnings are annotations that were ignored, and why.
	Warnings []string
}

// errNotInjectable marks what no retry of the admission can change: the
// Pod or the contract asks for something the sidecar cannot be built from.
var errNotInjectable = errors.New("cannot inject")

// BuildSidecar builds the sidecar for a Pod from its Ready ServiceContract,
// the Pod's annotations and the operator's options. It reads nothing else
// and has no side effects. The bundle is pinned to status.digest in the
// repository of status.resolvedRef — never a tag.
func BuildSidecar(sc *v1alpha1.ServiceContract, pod *corev1.Pod, opts SidecarOptions) (*Injection, error) {
	o := opts.withDefaults()
	ref, err := pinnedRef(sc)
	if err != nil {
		return nil, err
	}
	port, err := upstreamPort(pod)
	if err != nil {
		return nil, err
	}
	inj := &Injection{BundleRef: ref}
	args := []string{
		"sidecar",
		"--bundle=" + ref,
		"--upstream=http://127.0.0.1:" + strconv.Itoa(int(port)),
		"--port=" + strconv.Itoa(int(o.MCPPort)),
		"--health-addr=:" + strconv.Itoa(int(o.HealthPort)),
		// The root filesystem is read-only and a pinned digest is pulled
		// once per container start: no content cache.
		"--no-cache",
	}
	if o.PlainHTTP {
		args = append(args, "--plain-http")
	}
	c := corev1.Container{
		Name:          o.ContainerName,
		Image:         o.Image,
		Args:          args,
		RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways),
		Ports: []corev1.ContainerPort{
			{Name: sidecarPortName, ContainerPort: o.MCPPort, Protocol: corev1.ProtocolTCP},
			{Name: sidecarProbePortName, ContainerPort: o.HealthPort, Protocol: corev1.ProtocolTCP},
		},
		StartupProbe: &corev1.Probe{
			ProbeHandler:     probe("/readyz", o.HealthPort),
			PeriodSeconds:    1,
			FailureThreshold: 60,
		},
		ReadinessProbe: &corev1.Probe{ProbeHandler: probe("/readyz", o.HealthPort), PeriodSeconds: 5},
		LivenessProbe:  &corev1.Probe{ProbeHandler: probe("/healthz", o.HealthPort), PeriodSeconds: 10},
		SecurityContext: &corev1.SecurityContext{
			RunAsNonRoot:             ptr.To(true),
			RunAsUser:                ptr.To(o.RunAsUser),
			ReadOnlyRootFilesystem:   ptr.To(true),
			AllowPrivilegeEscalation: ptr.To(false),
			Privileged:               ptr.To(false),
			Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
			SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
		},
		TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
	}
	c.Resources, inj.Warnings = sidecarResources(pod.Annotations, o)
	if p := sc.Spec.PullSecretRef; p != nil {
		c.Args = append(c.Args, "--registry-secret-file="+registrySecretFile)
		c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: registrySecretVolume, MountPath: registrySecretDir, ReadOnly: true})
		inj.Volumes = append(inj.Volumes, corev1.Volume{Name: registrySecretVolume, VolumeSource: corev1.VolumeSource{
			Secret: &corev1.SecretVolumeSource{
				SecretName:  p.Name,
				Items:       []corev1.KeyToPath{{Key: corev1.DockerConfigJsonKey, Path: "config.json"}},
				DefaultMode: ptr.To[int32](0o440),
			},
		}})
	}
	inj.Container = c
	return inj, nil
}

func probe(path string, port int32) corev1.ProbeHandler {
	return corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: path, Port: intstr.FromInt32(port)}}
}

// pinnedRef is oci://registry/repository@digest from the contract's status.
func pinnedRef(sc *v1alpha1.ServiceContract) (string, error) {
	if sc.Spec.Bundle.OCI == "" {
		return "", fmt.Errorf("%w: ServiceContract %s reads its bundle from a ConfigMap; only oci:// bundles are injected", errNotInjectable, sc.Name)
	}
	if sc.Status.Digest == "" || sc.Status.ResolvedRef == "" {
		return "", fmt.Errorf("%w: ServiceContract %s has no resolved digest yet", errNotInjectable, sc.Name)
	}
	r, err := oci.ParseReference(sc.Status.ResolvedRef)
	if err != nil {
		return "", fmt.Errorf("%w: ServiceContract %s: status.resolvedRef: %w", errNotInjectable, sc.Name, err)
	}
	if r.Digest != sc.Status.Digest {
		return "", fmt.Errorf("%w: ServiceContract %s: status.resolvedRef %s does not carry status.digest %s", errNotInjectable, sc.Name, sc.Status.ResolvedRef, sc.Status.Digest)
	}
	return oci.Scheme + r.Registry + "/" + r.Repository + "@" + r.Digest, nil
}

// upstreamPort is the Pod's AnnotationUpstreamPort, or the first TCP
// containerPort of its first container.
func upstreamPort(pod *corev1.Pod) (int32, error) {
	if v, ok := pod.Annotations[AnnotationUpstreamPort]; ok {
		n, err := strconv.ParseInt(v, 10, 32)
		if err != nil || n < 1 || n > 65535 {
			return 0, fmt.Errorf("%w: annotation %s=%q: want a port number from 1 to 65535", errNotInjectable, AnnotationUpstreamPort, v)
		}
		return int32(n), nil
	}
	if len(pod.Spec.Containers) > 0 {
		for _, p := range pod.Spec.Containers[0].Ports {
			if p.Protocol == "" || p.Protocol == corev1.ProtocolTCP {
				return p.ContainerPort, nil
			}
		}
	}
	return 0, fmt.Errorf("%w: the Pod's first container declares no TCP containerPort; set the annotation %s", errNotInjectable, AnnotationUpstreamPort)
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
