package oci

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/pflag"

	"github.com/kubepact/kubepact/bundle/archive"
)

// Options is the registry and cache option group: how every consumer (the
// authoring tools' ref resolution, a capability bundle given by reference,
// fleet --oci sources, pacto_impact, check, push, the sidecar) reaches OCI
// registries. One group, bound once per command, builds the one [Client]
// they share, so a flag such as --plain-http holds for all of them.
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
}

// DefaultOptions returns Options holding every default, ready for
// BindFlags.
func DefaultOptions() *Options {
	return &Options{CacheDir: DefaultCacheDir()}
}

// BindFlags binds the group's flags to fs, with the current field values
// as defaults.
func (o *Options) BindFlags(fs *pflag.FlagSet) {
	fs.BoolVar(&o.PlainHTTP, "plain-http", o.PlainHTTP, "talk to registries over plain HTTP (never the default; for local test registries)")
	fs.StringVar(&o.ConfigPath, "registry-config", o.ConfigPath, "Docker config file with registry credentials (default: the Docker CLI's, ~/.docker/config.json)")
	fs.StringVar(&o.SecretFile, "registry-secret-file", o.SecretFile, "a .dockerconfigjson file, as a Kubernetes pull Secret holds, with registry credentials")
	fs.StringVar(&o.CacheDir, "cache-dir", o.CacheDir, "content cache for pulled bundles, keyed by digest")
	fs.BoolVar(&o.NoCache, "no-cache", o.NoCache, "do not read or write the content cache")
}

// FlagNames maps the group's fields to the flags BindFlags binds, for a
// command that prints a library error naming a field.
var FlagNames = map[string]string{
	"PlainHTTP": "--plain-http", "ConfigPath": "--registry-config", "SecretFile": "--registry-secret-file",
	"CacheDir": "--cache-dir", "NoCache": "--no-cache",
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
	copts := &ClientOptions{PlainHTTP: o.PlainHTTP, Limits: o.Limits}
	if !o.NoCache {
		copts.CacheDir = o.CacheDir
	}
	return copts
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
