package main

import (
	"net"
	"os"
	"os/exec"
	"testing"
)

// operatorProc is `kubepact operator` running as a process against an
// envtest cluster (operatorCluster's kubeconfig), as a user runs it.
type operatorProc struct {
	mcpAddr   string // host:port of /mcp (and /v1/traces with --trace-intake)
	probeAddr string // host:port of /healthz and /readyz
	logs      *syncBuffer
	exited    chan error // receives Wait's result once the process ends
}

// startOperator starts the operator on kubeconfigFile with a free /mcp
// port and probe address, metrics off, HOME and the cache in temporary
// directories, then args; it returns once /readyz answers 200, failing
// with the operator's log if it exits first. The process is killed at the
// end of the test.
func startOperator(t *testing.T, kubeconfigFile string, args ...string) *operatorProc {
	t.Helper()
	p := &operatorProc{mcpAddr: freeAddr(t), probeAddr: freeAddr(t), logs: &syncBuffer{}, exited: make(chan error, 1)}
	_, mcpPort, _ := net.SplitHostPort(p.mcpAddr)
	op := exec.Command(kubepactBin, append([]string{"operator", "--kubeconfig", kubeconfigFile, "--port", mcpPort,
		"--metrics-bind-address", "0", "--health-probe-bind-address", p.probeAddr, "--cache-dir", t.TempDir()}, args...)...)
	op.Env = append(os.Environ(), "HOME="+t.TempDir(), "KUBECONFIG=")
	op.Stdout, op.Stderr = p.logs, p.logs
	if err := op.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.exited <- op.Wait() }()
	t.Cleanup(func() {
		_ = op.Process.Kill()
		t.Logf("operator killed at the end of the test: %v", <-p.exited)
	})
	waitHTTP(t, "http://"+p.probeAddr+"/readyz", p.exited, p.logs)
	return p
}
