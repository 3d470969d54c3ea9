package main

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"

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

// fieldsToFlags turns a library error that names option fields
// (Options.Transport, SecretFile, …) into one that names the command's
// flags. An mcp.OptionError is named by its fields (OptionError.Named);
// the registry and capability packages name fields in free text, which
// mcp.FlagWords rewrites (whole field names only).
func fieldsToFlags(err error, names ...map[string]string) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	if oe, ok := errors.AsType[*mcp.OptionError](err); ok && strings.HasSuffix(msg, oe.Error()) {
		all := map[string]string{}
		for _, m := range slices.Backward(names) {
			maps.Copy(all, m)
		}
		msg = msg[:len(msg)-len(oe.Error())] + oe.Named(all)
	} else {
		msg = mcp.FlagWords(msg, names...)
	}
	if msg == err.Error() {
		return err
	}
	return &flagError{msg: msg, err: err}
}
