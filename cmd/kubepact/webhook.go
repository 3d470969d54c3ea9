//go:build !sidecaronly

package main

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"strings"

	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/kubepact/kubepact/controllers/injection"
)

// webhookOptions is the operator's option group for the sidecar injection
// webhook.
type webhookOptions struct {
	port          int
	host          string
	certDir       string
	selfManaged   bool
	namespace     string
	secretName    string
	configName    string
	serviceName   string
	dnsNames      []string
	ipAddresses   []string
	sidecarImage  string
	cpuRequest    string
	memoryRequest string
	memoryLimit   string
	maxCPU        string
	maxMemory     string
	toolMode      string
}

func (o *webhookOptions) BindFlags(fs *pflag.FlagSet) {
	ns := os.Getenv("POD_NAMESPACE")
	if ns == "" {
		ns = "kubepact-system"
	}
	d := injection.DefaultSidecarOptions()
	fs.IntVar(&o.port, "webhook-port", 0, "serve the sidecar injection webhook on this port; off (0) by default, as it needs --sidecar-image and the Service and MutatingWebhookConfiguration an install provides (the chart uses 9443)")
	fs.StringVar(&o.host, "webhook-host", "", "address the webhook listens on (default: all)")
	fs.BoolVar(&o.selfManaged, "webhook-self-managed-certs", true, "keep the webhook's own CA and serving certificate in --webhook-cert-secret and the caBundle of --webhook-config-name in step; false when cert-manager writes --webhook-cert-dir")
	fs.StringVar(&o.certDir, "webhook-cert-dir", "/tmp/k8s-webhook-server/serving-certs", "tls.crt and tls.key of the webhook, reloaded when they change (with --webhook-self-managed-certs=false)")
	fs.StringVar(&o.namespace, "webhook-namespace", ns, "namespace of the webhook's Service and certificate Secret; the default is $POD_NAMESPACE when set, else kubepact-system")
	fs.StringVar(&o.secretName, "webhook-cert-secret", "kubepact-webhook-cert", "Secret holding the webhook's self-managed CA and serving certificate")
	fs.StringVar(&o.configName, "webhook-config-name", "kubepact-injector", "MutatingWebhookConfiguration whose caBundle is kept in step")
	fs.StringVar(&o.serviceName, "webhook-service-name", "kubepact-webhook", "Service in front of the webhook; its DNS names go in the serving certificate")
	fs.StringSliceVar(&o.dnsNames, "webhook-dns-name", nil, "extra DNS name for the serving certificate (repeatable)")
	fs.StringSliceVar(&o.ipAddresses, "webhook-ip-address", nil, "IP address for the serving certificate (repeatable)")
	fs.StringVar(&o.sidecarImage, "sidecar-image", os.Getenv("KUBEPACT_SIDECAR_IMAGE"), "image of the injected sidecar: the operator's own (default: $KUBEPACT_SIDECAR_IMAGE)")
	fs.StringVar(&o.cpuRequest, "sidecar-cpu-request", d.Resources.Requests.Cpu().String(), "CPU request of the injected sidecar")
	fs.StringVar(&o.memoryRequest, "sidecar-memory-request", d.Resources.Requests.Memory().String(), "memory request of the injected sidecar")
	fs.StringVar(&o.memoryLimit, "sidecar-memory-limit", d.Resources.Limits.Memory().String(), "memory limit of the injected sidecar")
	fs.StringVar(&o.maxCPU, "sidecar-max-cpu", d.MaxResources.Cpu().String(), "most CPU a Pod's annotations may give its sidecar")
	fs.StringVar(&o.maxMemory, "sidecar-max-memory", d.MaxResources.Memory().String(), "most memory a Pod's annotations may give its sidecar")
	fs.StringVar(&o.toolMode, "sidecar-tool-mode", "all", "--tool-mode of the injected sidecar unless a Pod's "+injection.AnnotationToolMode+" annotation says otherwise: all (one tool per operation), discover (search, describe and call tools) or auto (discover for a large API)")
}

// enabled reports whether the operator serves the webhook.
func (o *webhookOptions) enabled() bool { return o.port != 0 }

func (o *webhookOptions) validate() error {
	if !o.enabled() {
		return nil
	}
	if o.port < 1 || o.port > 65535 {
		return fmt.Errorf("--webhook-port %d is not accepted; use 1 to 65535, or 0 for no webhook", o.port)
	}
	if o.sidecarImage == "" {
		return errors.New("--sidecar-image is required with the webhook (the operator's own image, e.g. ghcr.io/kubepact/kubepact@sha256:…); or --webhook-port=0 for no webhook")
	}
	for _, ip := range o.ipAddresses {
		if net.ParseIP(ip) == nil {
			return fmt.Errorf("--webhook-ip-address %q is not an IP address", ip)
		}
	}
	if !slices.Contains(injection.ToolModes, o.toolMode) {
		return fmt.Errorf("--sidecar-tool-mode %q is not accepted; use %s", o.toolMode, strings.Join(injection.ToolModes, ", "))
	}
	for flag, v := range map[string]string{"--sidecar-cpu-request": o.cpuRequest, "--sidecar-memory-request": o.memoryRequest,
		"--sidecar-memory-limit": o.memoryLimit, "--sidecar-max-cpu": o.maxCPU, "--sidecar-max-memory": o.maxMemory} {
		if q, err := resource.ParseQuantity(v); err != nil || q.Sign() <= 0 {
			return fmt.Errorf("%s %q: want a positive quantity such as 10m, 32Mi", flag, v)
		}
	}
	return nil
}

// rotator is the self-managed certificate rotator, nil when the webhook is
// off or cert-manager provides the certificate.
func (o *webhookOptions) rotator() *injection.CertRotator {
	if !o.enabled() || !o.selfManaged {
		return nil
	}
	svc := o.serviceName + "." + o.namespace + ".svc"
	c := injection.CertOptions{
		SecretName:        o.secretName,
		Namespace:         o.namespace,
		WebhookConfigName: o.configName,
		DNSNames:          append([]string{svc, svc + ".cluster.local"}, o.dnsNames...),
	}
	for _, ip := range o.ipAddresses {
		c.IPAddresses = append(c.IPAddresses, net.ParseIP(ip))
	}
	return &injection.CertRotator{Options: c}
}

// server is the manager's webhook server (nil when the webhook is off).
func (o *webhookOptions) server(rot *injection.CertRotator) webhook.Server {
	if !o.enabled() {
		return nil
	}
	opts := webhook.Options{Host: o.host, Port: o.port, CertDir: o.certDir}
	if rot != nil {
		opts.TLSOpts = []func(*tls.Config){rot.TLSConfig}
	}
	return webhook.NewServer(opts)
}

// setup registers the injector (and the rotator) with the manager; the
// injector is told the namespaces the operator watches (--namespace).
func (o *webhookOptions) setup(mgr ctrl.Manager, rot *injection.CertRotator, plainHTTP bool, namespaces []string) error {
	if !o.enabled() {
		return nil
	}
	q := resource.MustParse
	s := injection.DefaultSidecarOptions()
	s.Image = o.sidecarImage
	s.PlainHTTP = plainHTTP
	s.ToolMode = o.toolMode
	s.Resources = corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: q(o.cpuRequest), corev1.ResourceMemory: q(o.memoryRequest)},
		Limits:   corev1.ResourceList{corev1.ResourceMemory: q(o.memoryLimit)},
	}
	s.MaxResources = corev1.ResourceList{corev1.ResourceCPU: q(o.maxCPU), corev1.ResourceMemory: q(o.maxMemory)}
	return injection.SetupInjector(mgr, &injection.Injector{Options: s, Namespaces: namespaces}, rot)
}
