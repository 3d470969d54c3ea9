//go:build !sidecaronly

package main

import (
	"net"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// operatorProc is `kubepact operator` running as a process against an
// envtest cluster (operatorCluster's kubeconfig), as a user runs it.
type operatorProc struct {
	cmd       *exec.Cmd
	mcpAddr   string // host:port of /mcp (and /v1/traces with --trace-intake)
	probeAddr string // host:port of /healthz and /readyz
	logs      *syncBuffer
	exited    chan error // receives Wait's result once the process ends; a reader puts it back
}

// operatorStart is what a test may change about how startOperator runs
// the operator; the zero value (or nil) means the defaults.
type operatorStart struct {
	metricsAddr string // --metrics-bind-address; "" means "0" (metrics off)
	mcpPort     string // --port; "" means a free port (the process's /mcp is then at mcpAddr)
	readyPath   string // the probe path awaited before returning; "" means /readyz
	cacheDir    string // --cache-dir; "" means a temporary directory
}

// startOperator starts the operator on kubeconfigFile with a free /mcp
// port and probe address, metrics off, HOME and the cache in temporary
// directories, then args; it returns once /readyz answers 200, failing
// with the operator's log if it exits first. The process is killed at the
// end of the test unless it has already ended.
func startOperator(t *testing.T, kubeconfigFile string, args ...string) *operatorProc {
	t.Helper()
	return startOperatorWith(t, kubeconfigFile, nil, args...)
}

// startOperatorWith is startOperator with the changes in o.
func startOperatorWith(t *testing.T, kubeconfigFile string, o *operatorStart, args ...string) *operatorProc {
	t.Helper()
	if o == nil {
		o = &operatorStart{}
	}
	p := &operatorProc{mcpAddr: freeAddr(t), probeAddr: freeAddr(t), logs: &syncBuffer{}, exited: make(chan error, 1)}
	_, mcpPort, _ := net.SplitHostPort(p.mcpAddr)
	if o.mcpPort != "" {
		mcpPort, p.mcpAddr = o.mcpPort, ""
	}
	metrics := "0"
	if o.metricsAddr != "" {
		metrics = o.metricsAddr
	}
	readyPath := "/readyz"
	if o.readyPath != "" {
		readyPath = o.readyPath
	}
	cacheDir := o.cacheDir
	if cacheDir == "" {
		cacheDir = t.TempDir()
	}
	p.cmd = exec.Command(kubepactBin, append([]string{"operator", "--kubeconfig", kubeconfigFile, "--port", mcpPort,
		"--metrics-bind-address", metrics, "--health-probe-bind-address", p.probeAddr, "--cache-dir", cacheDir}, args...)...)
	p.cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "KUBECONFIG=")
	p.cmd.Stdout, p.cmd.Stderr = p.logs, p.logs
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.exited <- p.cmd.Wait() }()
	t.Cleanup(func() {
		if processExited(p.exited) {
			return
		}
		_ = p.cmd.Process.Kill()
		err := <-p.exited
		p.exited <- err
		t.Logf("operator killed at the end of the test: %v", err)
	})
	waitHTTP(t, "http://"+p.probeAddr+readyPath, p.exited, p.logs)
	return p
}

// terminate sends SIGTERM and returns the process's exit (Wait's error).
// A process still running after within is killed and the test fails,
// naming what (the operator "after SIGTERM", "stopped while starting"):
// the bound catches a hang, it measures nothing.
func (p *operatorProc) terminate(t *testing.T, what string, within time.Duration) error {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-p.exited:
		p.exited <- err
		return err
	case <-time.After(within):
		_ = p.cmd.Process.Kill()
		err := <-p.exited
		p.exited <- err
		t.Fatalf("operator %s did not exit within %s (killed: %v)\n%s", what, within, err, p.logs.String())
		return nil
	}
}
