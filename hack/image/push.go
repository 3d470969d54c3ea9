package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"

	oras "oras.land/oras-go/v2"
	"oras.land/oras-go/v2/content/oci"
	"oras.land/oras-go/v2/registry"
	"oras.land/oras-go/v2/registry/remote"
	"oras.land/oras-go/v2/registry/remote/auth"
	"oras.land/oras-go/v2/registry/remote/credentials"
	"oras.land/oras-go/v2/registry/remote/errcode"
	"oras.land/oras-go/v2/registry/remote/retry"
)

// PushOptions say where Push sends an image layout's image.
type PushOptions struct {
	// To is the destination, host[:port]/repository[:tag]; without a tag
	// the layout's reference name is the tag. A digest is refused: the
	// registry computes it.
	To string
	// PlainHTTP talks HTTP, not HTTPS, to the registry (a registry on a
	// trusted network without TLS). Never the default.
	PlainHTTP bool
	// DockerConfig is the Docker config file whose credentials are sent;
	// empty means ~/.docker/config.json, and no file means anonymous.
	DockerConfig string
}

// Pushed is where Push put the image.
type Pushed struct {
	Repository string // host[:port]/repository
	Tag        string
	Digest     string // sha256:…, the manifest digest
}

// Push copies the image named refName in the OCI layout at dir to a
// registry with oras-go, the OCI client kubepact itself uses, and returns
// the digest the registry now serves it by.
func Push(ctx context.Context, dir, refName string, opts *PushOptions) (Pushed, error) {
	ref, err := registry.ParseReference(opts.To)
	if err != nil || ref.Repository == "" {
		return Pushed{}, fmt.Errorf("-push %q is not host[:port]/repository[:tag] (e.g. registry.example.com/kubepact)", opts.To)
	}
	if strings.Contains(opts.To, "@") {
		return Pushed{}, fmt.Errorf("-push %q names a digest: give a repository and, if you like, a tag; the registry computes the digest", opts.To)
	}
	tag := ref.Reference
	if tag == "" {
		tag = refName
	}
	if tag == "" {
		return Pushed{}, errors.New("-push needs a tag (host/repository:tag) when the layout's image has no reference name")
	}
	src, err := oci.New(dir)
	if err != nil {
		return Pushed{}, fmt.Errorf("reading the OCI layout %s: %w", dir, err)
	}
	repo, err := remote.NewRepository(ref.Registry + "/" + ref.Repository)
	if err != nil {
		return Pushed{}, err
	}
	repo.PlainHTTP = opts.PlainHTTP
	store, err := credentialStore(opts.DockerConfig)
	if err != nil {
		return Pushed{}, err
	}
	repo.Client = &auth.Client{Client: retry.DefaultClient, Cache: auth.NewCache(), Credential: credentials.Credential(store)}
	desc, err := oras.Copy(ctx, src, refName, repo, tag, oras.DefaultCopyOptions)
	if err != nil {
		return Pushed{}, pushError(ref.Registry, opts.PlainHTTP, err)
	}
	return Pushed{Repository: ref.Registry + "/" + ref.Repository, Tag: tag, Digest: desc.Digest.String()}, nil
}

func credentialStore(path string) (credentials.Store, error) {
	if path != "" {
		s, err := credentials.NewStore(path, credentials.StoreOptions{})
		if err != nil {
			return nil, fmt.Errorf("reading registry credentials from %s: %w", path, err)
		}
		return s, nil
	}
	s, err := credentials.NewStoreFromDocker(credentials.StoreOptions{})
	if err != nil {
		// No Docker config (or none readable): push anonymously.
		return credentials.NewMemoryStore(), nil
	}
	return s, nil
}

// pushError says what went wrong in a sentence with its remedy; the
// client's own text follows for the details.
func pushError(host string, plainHTTP bool, err error) error {
	var (
		ne   net.Error
		resp *errcode.ErrorResponse
	)
	msg := err.Error()
	switch {
	case !plainHTTP && strings.Contains(msg, "HTTP response to HTTPS client"):
		return fmt.Errorf("registry %s speaks plain HTTP, and TLS was asked for: if it is on a trusted network, push with IMAGE_PLAIN_HTTP=true (-plain-http) (%w)", host, err)
	case errors.Is(err, auth.ErrBasicCredentialNotFound):
		return fmt.Errorf("registry %s refused the push: it asks for credentials and none are configured for it: docker login, or give them in ~/.docker/config.json (-docker-config names another file) (%w)", host, err)
	case errors.As(err, &resp) && (resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden):
		return fmt.Errorf("registry %s refused the push: log in with credentials that may push there (docker login or ~/.docker/config.json; -docker-config names another file) (%w)", host, err)
	case errors.As(err, &ne) || strings.Contains(msg, "connection refused") || strings.Contains(msg, "no such host"):
		return fmt.Errorf("registry %s could not be reached: check the host and port in IMAGE_REPO (%w)", host, err)
	}
	return fmt.Errorf("pushing to %s: %w", host, err)
}
