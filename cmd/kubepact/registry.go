package main

import (
	"context"

	"github.com/go-logr/logr"
	"github.com/spf13/pflag"

	"github.com/kubepact/kubepact/bundle/oci"
	"github.com/kubepact/kubepact/mcp"
)

// registryOptions binds oci.Options, the one registry and cache option
// group, for the subcommands that load or push bundles. Each command builds
// one client from it and hands that client to every consumer.
type registryOptions struct {
	oci.Options
	// limits bound the bundles loaded, local or pulled; every command that
	// reaches a registry also loads bundles, so they are bound here.
	limits limitOptions
}

func (o *registryOptions) BindFlags(fs *pflag.FlagSet) {
	if o.CacheDir == "" {
		o.CacheDir = oci.DefaultCacheDir()
	}
	if o.Timeout == 0 {
		o.Timeout = oci.DefaultTimeout // so --help shows it
	}
	o.Options.BindFlags(fs)
	o.limits.BindFlags(fs)
}

// client builds the shared registry client; an error names the flag.
// named are the references the command was given (its arguments, catalog
// roots, fleet sources): their registries are allowed besides
// --allowed-registries. Registry failures are logged, as reported, through
// ctx's logger.
func (o *registryOptions) client(ctx context.Context, named ...string) (*oci.Client, error) {
	lim, err := o.limits.limits()
	if err != nil {
		return nil, err
	}
	o.Limits = lim
	o.Allow(named...)
	o.Logger = logr.FromContextOrDiscard(ctx).WithName("registry")
	c, err := o.Client()
	if err != nil {
		return nil, fieldsToFlags(err, oci.FlagNames)
	}
	return c, nil
}

// flagError is a library error whose option field names were replaced by
// the flags that set them.
type flagError struct {
	msg string
	err error
}

func (e *flagError) Error() string { return e.msg }
func (e *flagError) Unwrap() error { return e.err }

// fieldsToFlags rewrites a library error that names option fields
// (Options.Transport, SecretFile, …) into one that names the command's
// flags. Only whole field names at the start of the message or after a
// space, quote or parenthesis are replaced.
func fieldsToFlags(err error, names ...map[string]string) error {
	if err == nil {
		return nil
	}
	msg := mcp.FlagWords(err.Error(), names...)
	if msg == err.Error() {
		return err
	}
	return &flagError{msg: msg, err: err}
}
