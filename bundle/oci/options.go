package oci

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/go-logr/logr"
	"github.com/spf13/pflag"

	"github.com/kubepact/kubepact/bundle/archive"
)

// Options is the registry and cache option group: how every consumer (the
// authoring tools' ref resolution, a capability bundle given by reference,
// fleet --oci sources, pacto_impact, check, push, the sidecar) reaches OCI
// registries. One group, bound once per command, builds the one [Client]
// they share, so a flag such as --plain-http, and the registry policy,
// hold for all of them.
//
// The registry policy: a reference may name a registry the command was
// given (see [Options.Allow]: the served bundle, catalog roots, fleet
// sources, the bundle checked or pushed) or one of AllowedRegistries
// (--allowed-registries; AnyRegistry, "*", for any). Every connection —
// to the registry, to a host it redirects to, to its token service — goes
// to a public address, checked on the resolved IP when it is dialled,
// unless its host is named itself (by a reference the command was given,
// or in AllowedRegistries): naming a registry on loopback, on a private
// network or at a metadata address is the only way to reach it.
type Options struct {
	// PlainHTTP talks HTTP instead of HTTPS (--plain-http).
	PlainHTTP bool
	// ConfigPath is a Docker config.json with credentials
	// (--registry-config; default: the Docker CLI's).
	ConfigPath string
	// SecretFile is a .dockerconfigjson file, as a Kubernetes pull Secret
	// holds (--registry-secret-file).
	SecretFile string
	// CacheDir is the content cache, keyed by digest (--cache-dir; default
	// $KUBEPACT_CACHE_DIR, else kubepact/oci in the user cache directory).
	CacheDir string
	// NoCache neither reads nor writes the cache (--no-cache).
	NoCache bool
	// Limits bound extraction of pulled layers (zero fields: the
	// defaults, Pacto's).
	Limits archive.Limits
	// AllowedRegistries are the registries references may name besides
	// those the command was given (--allowed-registries): host[:port]
	// (without a port: any port of the host) or AnyRegistry.
	AllowedRegistries []string
	// Timeout bounds each registry operation (--registry-timeout; zero:
	// DefaultTimeout).
	Timeout time.Duration
	// Logger receives registry failures as the libraries reported them
	// (not a flag).
	Logger logr.Logger

	// named are the registries of the references the command was given.
	named []string
}

// DefaultOptions returns Options holding every default, ready for
// BindFlags.
func DefaultOptions() *Options {
	return &Options{CacheDir: DefaultCacheDir(), Timeout: DefaultTimeout}
}

// BindFlags binds the group's flags to fs, with the current field values
// as defaults.
func (o *Options) BindFlags(fs *pflag.FlagSet) {
	fs.BoolVar(&o.PlainHTTP, "plain-http", o.PlainHTTP, "talk to registries over plain HTTP (never the default; for local test registries)")
	fs.StringVar(&o.ConfigPath, "registry-config", o.ConfigPath, "Docker config file with registry credentials (default: the Docker CLI's, ~/.docker/config.json)")
	fs.StringVar(&o.SecretFile, "registry-secret-file", o.SecretFile, "a .dockerconfigjson file, as a Kubernetes pull Secret holds, with registry credentials")
	fs.StringVar(&o.CacheDir, "cache-dir", o.CacheDir, "content cache for pulled bundles, keyed by digest; kubepact mcp also keeps each --local bundle's identity and verdict under its fleet/ directory, keyed by content, so a restart skips what did not change")
	fs.BoolVar(&o.NoCache, "no-cache", o.NoCache, "do not read or write the content cache (nor the --local fleet's)")
	fs.StringSliceVar(&o.AllowedRegistries, "allowed-registries", o.AllowedRegistries, "registries (host[:port]; without a port, any port) that references may name besides those given on the command line; \"*\" for any registry at a public address. A registry on loopback, link-local, private or metadata addresses must be named itself")
	fs.DurationVar(&o.Timeout, "registry-timeout", o.Timeout, "bound on each registry operation (resolving a tag, pulling or pushing a bundle)")
}

// Allow admits the registries of the oci:// references among refs (a
// command's own arguments: the bundle it serves, checks or pushes, its
// catalog roots and fleet sources); local references are ignored, and so
// are references that do not parse (loading them says why). A registry
// written without a port is admitted on its default port, 443 (and 80
// with PlainHTTP).
func (o *Options) Allow(refs ...string) {
	for _, r := range refs {
		if !IsReference(r) {
			continue
		}
		if ref, err := ParseReference(r); err == nil {
			o.named = append(o.named, ref.Registry)
		}
	}
}

// FlagNames maps the group's fields to the flags BindFlags binds, for a
// command that prints a library error naming a field.
var FlagNames = map[string]string{
	"PlainHTTP": "--plain-http", "ConfigPath": "--registry-config", "SecretFile": "--registry-secret-file",
	"CacheDir": "--cache-dir", "NoCache": "--no-cache", "AllowedRegistries": "--allowed-registries",
	"Timeout": "--registry-timeout",
}

// Client builds the registry client the options describe. A nil receiver
// means defaults.
func (o *Options) Client() (*Client, error) {
	if o == nil {
		o = DefaultOptions()
	}
	copts := o.clientOptions()
	copts.DockerConfigPath = o.ConfigPath
	if o.SecretFile != "" {
		data, err := os.ReadFile(o.SecretFile)
		if err != nil {
			return nil, fmt.Errorf("SecretFile: %w", err)
		}
		copts.DockerConfigJSON = data
	}
	return NewClient(copts)
}

// ClientWithCredentials builds the client the options describe, except
// that its credentials come only from dockerConfigJSON, the content of a
// Kubernetes pull Secret (nil: none, an anonymous client): ConfigPath,
// SecretFile and the Docker CLI's own config are never read. A nil
// receiver means defaults. The operator builds its clients this way, one
// per ServiceContract's pull Secret.
func (o *Options) ClientWithCredentials(dockerConfigJSON []byte) (*Client, error) {
	if o == nil {
		o = DefaultOptions()
	}
	copts := o.clientOptions()
	copts.DockerConfigJSON = dockerConfigJSON
	if copts.DockerConfigJSON == nil {
		copts.DockerConfigJSON = []byte(`{"auths":{}}`)
	}
	return NewClient(copts)
}

// clientOptions are the ClientOptions every client of o shares: transport,
// cache and limits.
func (o *Options) clientOptions() *ClientOptions {
	copts := &ClientOptions{PlainHTTP: o.PlainHTTP, Limits: o.Limits, Timeout: o.Timeout, Logger: o.Logger,
		AllowedRegistries: o.allowList()}
	if !o.NoCache {
		copts.CacheDir = o.CacheDir
	}
	return copts
}

// allowList is AllowedRegistries and the named registries, each on its
// default port when it has none; never nil, so that nothing named and
// nothing listed allows nothing.
func (o *Options) allowList() []string {
	out := slices.Clone(o.AllowedRegistries)
	if out == nil {
		out = []string{}
	}
	for _, r := range o.named {
		host, port, ok := splitRegistry(r)
		switch {
		case !ok:
		case port != "":
			out = append(out, r)
		default:
			out = append(out, net.JoinHostPort(host, "443"))
			if o.PlainHTTP {
				out = append(out, net.JoinHostPort(host, "80"))
			}
		}
	}
	return out
}

// DefaultCacheDir is $KUBEPACT_CACHE_DIR, else kubepact/oci under the
// user's cache directory, else "" (no cache).
func DefaultCacheDir() string {
	if d := os.Getenv("KUBEPACT_CACHE_DIR"); d != "" {
		return d
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(d, "kubepact", "oci")
}
