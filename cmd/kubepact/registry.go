package main

import (
	"fmt"
	"os"

	"github.com/spf13/pflag"

	"github.com/kubepact/kubepact/bundle/oci"
)

// registryOptions is the option group for reaching OCI registries, shared by
// every subcommand that loads or pushes bundles.
type registryOptions struct {
	plainHTTP        bool
	dockerConfig     string
	dockerConfigJSON string
	cacheDir         string
	noCache          bool
	// limits bound the bundles loaded, local or pulled; every command that
	// reaches a registry also loads bundles, so they are bound here.
	limits limitOptions
}

func (o *registryOptions) BindFlags(fs *pflag.FlagSet) {
	fs.BoolVar(&o.plainHTTP, "plain-http", false, "talk to registries over plain HTTP (never the default; for local test registries)")
	fs.StringVar(&o.dockerConfig, "registry-config", "", "Docker config file with registry credentials (default: the Docker CLI's, ~/.docker/config.json)")
	fs.StringVar(&o.dockerConfigJSON, "registry-secret-file", "", "a .dockerconfigjson file, as a Kubernetes pull Secret holds, with registry credentials")
	fs.StringVar(&o.cacheDir, "cache-dir", defaultCacheDir(), "content cache for pulled bundles, keyed by digest")
	fs.BoolVar(&o.noCache, "no-cache", false, "do not read or write the content cache")
	o.limits.BindFlags(fs)
}

func (o *registryOptions) client() (*oci.Client, error) {
	lim, err := o.limits.limits()
	if err != nil {
		return nil, err
	}
	opts := &oci.ClientOptions{
		PlainHTTP:        o.plainHTTP,
		DockerConfigPath: o.dockerConfig,
		Limits:           lim,
	}
	if !o.noCache {
		opts.CacheDir = o.cacheDir
	}
	if o.dockerConfigJSON != "" {
		data, err := os.ReadFile(o.dockerConfigJSON)
		if err != nil {
			return nil, fmt.Errorf("--registry-secret-file: %w", err)
		}
		opts.DockerConfigJSON = data
	}
	return oci.NewClient(opts)
}

// defaultCacheDir is $KUBEPACT_CACHE_DIR, else kubepact/oci under the user's
// cache directory, else no cache.
func defaultCacheDir() string {
	if d := os.Getenv("KUBEPACT_CACHE_DIR"); d != "" {
		return d
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return d + "/kubepact/oci"
}
