package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/go-logr/logr/funcr"
	"github.com/spf13/pflag"

	"github.com/kubepact/kubepact/mcp"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "conformance server:", err)
		os.Exit(2)
	}
}

// run serves kubepact's families and the fixture extension with the flags
// of `kubepact mcp` (args may start with the word mcp, as run.sh passes
// the same command line to both binaries).
func run(args []string) error {
	if len(args) > 0 && args[0] == "mcp" {
		args = args[1:]
	}
	opts := mcp.DefaultOptions()
	fs := pflag.NewFlagSet("conformance-server", pflag.ContinueOnError)
	opts.BindFlags(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	fx, err := fixtureExtension()
	if err != nil {
		return err
	}
	opts.Extensions = []*mcp.Extension{fx}
	opts.Logger = funcr.New(func(prefix, args string) { fmt.Fprintln(os.Stderr, prefix, args) }, funcr.Options{})
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	s, err := mcp.NewServer(ctx, opts)
	if err != nil {
		if oe, ok := errors.AsType[*mcp.OptionError](err); ok {
			return errors.New(oe.Named(mcp.FlagNames))
		}
		return err
	}
	defer s.Close()
	return s.Run(ctx)
}
