// Command kubepact is the one binary of kubepact: the MCP server for Pacto
// service contracts (kubepact mcp), the per-pod sidecar, the operator, and
// the bundle commands (check, pack, push, version).
//
// This package only wires: each subcommand binds its option groups' flags
// and hands them to the packages that do the work.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/kubepact/kubepact/internal/tracing"
)

func main() {
	os.Exit(run())
}

// run executes the command line and returns the process exit code.
func run() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// The first signal cancels ctx and starts a graceful stop; from then on
	// the default action is back, so a second signal ends a process stuck
	// in something that does not watch ctx.
	go func() {
		<-ctx.Done()
		stop()
	}()
	// Traces are exported only when the OTEL_* variables say so.
	flush, err := tracing.Setup(ctx, &tracing.Options{Version: version})
	if err != nil {
		fmt.Fprintln(os.Stderr, "kubepact:", err.Error())
		return 2
	}
	defer func() {
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = flush(fctx) // what could not be sent by now is lost, as a crash would lose it
	}()
	err = newRootCommand().ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	if errors.Is(err, context.Canceled) && ctx.Err() != nil {
		// Interrupted while it was still starting (waiting for a cluster
		// or a registry): not a failure of its own to explain.
		fmt.Fprintln(os.Stderr, "kubepact: stopped by a signal before it was ready")
		return 1
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.msg != "" {
			fmt.Fprintln(os.Stderr, "kubepact:", ee.msg)
		}
		return ee.code
	}
	fmt.Fprintln(os.Stderr, "kubepact:", inWords(err))
	return 2
}

// exitError ends the process with a chosen code; msg may be empty when the
// command has already said everything.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }
