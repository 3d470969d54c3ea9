// Package kcm runs a real kube-controller-manager, as a process, against
// an envtest API server, for tests that need the cluster's own controllers:
// Deployment → ReplicaSet → Pod, the `default` ServiceAccount of each
// namespace, garbage collection. Pods it creates stay Pending (there is no
// scheduler or kubelet); what admission did to them is in their spec.
//
// The binary comes from the same place as envtest's (`make envtest-assets`
// builds it into bin/k8s/<version>): $TEST_ASSET_KUBE_CONTROLLER_MANAGER,
// else $KUBEBUILDER_ASSETS/kube-controller-manager. Only tests import this
// package; it imports nothing from kubepact.
package kcm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// DefaultControllers are the controllers started unless Options says
// otherwise: enough for a Deployment to become Pods in a fresh namespace.
var DefaultControllers = []string{
	"deployment-controller",
	"replicaset-controller",
	"serviceaccount-controller",
	"garbage-collector-controller",
}

// Options configure the process. Nil means defaults.
type Options struct {
	// Binary is the kube-controller-manager to run (default: found as the
	// package doc says).
	Binary string
	// Controllers are the --controllers it runs (default DefaultControllers;
	// "*" for all).
	Controllers []string
	// ExtraArgs are appended to the command line.
	ExtraArgs []string
	// ReadyTimeout bounds the wait for the first `default` ServiceAccount
	// (default 60s); it measures nothing.
	ReadyTimeout time.Duration
}

// Process is a running kube-controller-manager.
type Process struct {
	cmd    *exec.Cmd
	dir    string
	logs   *lockedBuffer
	exited chan struct{}
	err    error
}

// Binary returns where the kube-controller-manager binary is expected, and
// whether it is there.
func Binary() (string, bool) {
	p := os.Getenv("TEST_ASSET_KUBE_CONTROLLER_MANAGER")
	if p == "" {
		if dir := os.Getenv("KUBEBUILDER_ASSETS"); dir != "" {
			p = filepath.Join(dir, "kube-controller-manager")
		}
	}
	if p == "" {
		return "", false
	}
	st, err := os.Stat(p)
	return p, err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0
}

// Start runs kube-controller-manager against the API server cfg reaches
// (with cfg's credentials, which must be allowed to do what the controllers
// do: envtest's admin user is), and waits until it works: when the
// serviceaccount controller runs, until the `default` namespace has its
// `default` ServiceAccount. Stop it with Stop.
func Start(ctx context.Context, cfg *rest.Config, opts *Options) (*Process, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Binary == "" {
		bin, ok := Binary()
		if !ok {
			return nil, fmt.Errorf("kube-controller-manager not found (%q): set KUBEBUILDER_ASSETS to the directory `make envtest-assets` builds (bin/k8s/<version>), or TEST_ASSET_KUBE_CONTROLLER_MANAGER", bin)
		}
		o.Binary = bin
	}
	if len(o.Controllers) == 0 {
		o.Controllers = DefaultControllers
	}
	if o.ReadyTimeout == 0 {
		o.ReadyTimeout = 60 * time.Second
	}
	dir, err := os.MkdirTemp("", "kcm-")
	if err != nil {
		return nil, err
	}
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := writeKubeconfig(cfg, kubeconfig); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	args := []string{
		"--kubeconfig=" + kubeconfig,
		"--leader-elect=false",
		"--secure-port=0", // no serving: nothing here scrapes or probes it
		"--use-service-account-credentials=false",
		"--controllers=" + strings.Join(o.Controllers, ","),
		"--concurrent-deployment-syncs=2",
		"--concurrent-replicaset-syncs=2",
	}
	args = append(args, o.ExtraArgs...)
	p := &Process{dir: dir, logs: &lockedBuffer{}, exited: make(chan struct{})}
	// Not CommandContext: the process outlives the context that started it
	// (Start's ctx bounds the wait, Stop ends it).
	p.cmd = exec.Command(o.Binary, args...)
	p.cmd.Stdout = p.logs
	p.cmd.Stderr = p.logs
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := p.cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("starting %s: %w", o.Binary, err)
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.exited)
	}()
	if !slices.Contains(o.Controllers, "serviceaccount-controller") && !slices.Contains(o.Controllers, "*") {
		return p, nil
	}
	if err := p.waitForDefaultServiceAccount(ctx, cfg, o.ReadyTimeout); err != nil {
		_ = p.Stop()
		return nil, err
	}
	return p, nil
}

func (p *Process) waitForDefaultServiceAccount(ctx context.Context, cfg *rest.Config, timeout time.Duration) error {
	c, err := client.New(cfg, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "default"}, &corev1.ServiceAccount{})
		if err == nil {
			return nil
		}
		select {
		case <-p.exited:
			return fmt.Errorf("kube-controller-manager exited (%w):\n%s", p.err, p.Logs())
		case <-ctx.Done():
			return fmt.Errorf("kube-controller-manager created no default ServiceAccount within %s (last: %w):\n%s", timeout, err, p.Logs())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Stop ends the process (SIGTERM, then SIGKILL after 10s) and removes its
// files.
func (p *Process) Stop() error {
	defer os.RemoveAll(p.dir)
	select {
	case <-p.exited:
		return nil
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
	var ee *exec.ExitError
	if p.err != nil && !errors.As(p.err, &ee) {
		return p.err
	}
	return nil
}

// Logs returns what the process wrote so far, to show when a test fails.
func (p *Process) Logs() string { return p.logs.String() }

func writeKubeconfig(cfg *rest.Config, path string) error {
	if cfg.CertFile != "" || cfg.KeyFile != "" || cfg.BearerTokenFile != "" || cfg.Impersonate.UserName != "" {
		return errors.New("kcm: give a rest.Config with inline credentials (CertData/KeyData or BearerToken) and no impersonation, as envtest's is")
	}
	kc := clientcmdapi.NewConfig()
	kc.Clusters["envtest"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData, CertificateAuthority: cfg.CAFile}
	kc.AuthInfos["admin"] = &clientcmdapi.AuthInfo{ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData, Token: cfg.BearerToken, Username: cfg.Username, Password: cfg.Password}
	kc.Contexts["envtest"] = &clientcmdapi.Context{Cluster: "envtest", AuthInfo: "admin"}
	kc.CurrentContext = "envtest"
	return clientcmd.WriteToFile(*kc, path)
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// maxLog bounds what is kept of the process's output: the start of it,
// where a failure to start is said.
const maxLog = 1 << 20

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if room := maxLog - l.b.Len(); room > 0 {
		l.b.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
