// Package podspec is the sidecar's container as the injection webhook
// writes it into a Pod: the command line of a sidecar.Config, its ports and
// probes, and the restricted Pod Security Standard. It is apart from
// package sidecar so that the sidecar's own code path links no Kubernetes
// API types (TestSidecarLinksNoKubernetes in cmd/kubepact); it may import
// internal/sidecar and k8s.io/api, never controllers or cmd.
package podspec

import (
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/kubepact/kubepact/internal/sidecar"
)

// Command is what the sidecar container runs: the slim sidecar build
// (go build -tags sidecaronly ./cmd/kubepact) that kubepact's image carries
// beside its entrypoint (hack/image SidecarPath, the Dockerfile), so an
// injected sidecar's process links only the sidecar, not the operator's
// Kubernetes libraries. Its arguments are `kubepact sidecar`'s.
const Command = "/kubepact-sidecar"

// Port names of the sidecar container.
const (
	PortName      = "mcp"
	ProbePortName = "kubepact-probes"
)

// ContainerSpec is what the container needs besides the sidecar.Config: the
// image, its name, its user and its resources.
type ContainerSpec struct {
	Name  string
	Image string
	// RunAsUser is not root, as the restricted Pod Security Standard
	// requires.
	RunAsUser int64
	Resources corev1.ResourceRequirements
}

// Container is the native sidecar (an init container with restartPolicy
// Always) that runs cfg: its command line is Command with cfg.Args(), its
// ports and probes are cfg's endpoints, and it meets the restricted Pod
// Security Standard. Volumes and their mounts are the caller's.
func Container(cfg sidecar.Config, spec ContainerSpec) corev1.Container {
	health := cfg.HealthPort()
	c := corev1.Container{
		Name:          spec.Name,
		Image:         spec.Image,
		Command:       []string{Command},
		Args:          cfg.Args(),
		RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways),
		Ports: []corev1.ContainerPort{
			{Name: PortName, ContainerPort: int32(cfg.HTTP.Port), Protocol: corev1.ProtocolTCP},
			{Name: ProbePortName, ContainerPort: health, Protocol: corev1.ProtocolTCP},
		},
		StartupProbe: &corev1.Probe{
			ProbeHandler:     probe("/readyz", health),
			PeriodSeconds:    1,
			FailureThreshold: 60,
		},
		ReadinessProbe: &corev1.Probe{ProbeHandler: probe("/readyz", health), PeriodSeconds: 5},
		LivenessProbe:  &corev1.Probe{ProbeHandler: probe("/healthz", health), PeriodSeconds: 10},
		SecurityContext: &corev1.SecurityContext{
			RunAsNonRoot:             ptr.To(true),
			RunAsUser:                ptr.To(spec.RunAsUser),
			ReadOnlyRootFilesystem:   ptr.To(true),
			AllowPrivilegeEscalation: ptr.To(false),
			Privileged:               ptr.To(false),
			Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
			SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
		},
		TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
		Resources:                spec.Resources,
	}
	// The Go runtime collects harder as it nears 90% of the memory limit
	// instead of being killed past it (a large API's projection peaks at
	// about 160 MiB unbounded and 120 MiB with this set).
	if lim, ok := c.Resources.Limits[corev1.ResourceMemory]; ok && lim.Value() > 0 {
		c.Env = append(c.Env, corev1.EnvVar{Name: "GOMEMLIMIT", Value: strconv.FormatInt(lim.Value()/10*9, 10)})
	}
	return c
}

func probe(path string, port int32) corev1.ProbeHandler {
	return corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: path, Port: intstr.FromInt32(port)}}
}
