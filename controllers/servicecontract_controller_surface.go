package controllers

import (
	"context"
	"io/fs"
	"net/url"
	"path"
	"strconv"
	"strings"
	"sync"

	"github.com/opencontainers/go-digest"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/yaml"

	"github.com/kubepact/kubepact/api/v1alpha1"
	"github.com/kubepact/kubepact/bundle"
	"github.com/kubepact/kubepact/bundle/contract"
	"github.com/kubepact/kubepact/bundle/oci"
	"github.com/kubepact/kubepact/controllers/injection"
	"github.com/kubepact/kubepact/internal/sidecar"
)

// nominalUpstreamPort stands in for a Pod's upstream port when the
// contract names none: the port changes where the sidecar's calls go, not
// the tools' names or schemas (TestToolSurfaceIgnoresUpstreamPort).
const nominalUpstreamPort = 8080

// recordSurface sets status.toolSurfaceDigest: the tool surface the
// injected sidecar serves from the resolved bundle, computed with the
// configuration the webhook writes (injection.SidecarOptions.Config). It is computed once per
// digest and process (the operator's version is the sidecar's: the same
// image). A bundle whose tools cannot be projected leaves it empty; the
// sidecar, which projects the same way, would refuse to start on it, and
// the log says why.
func (r *ServiceContractReconciler) recordSurface(ctx context.Context, obj *v1alpha1.ServiceContract, res *resolved) {
	if res.bundle == nil {
		obj.Status.ToolSurfaceDigest = ""
		return
	}
	if d, ok := r.surfaces.get(res.digest); ok {
		obj.Status.ToolSurfaceDigest = d
		return
	}
	// One projection at a time: a large API's peaks at about 160 MiB, and
	// the reconcilers run in parallel inside the operator's memory limit.
	r.surfaces.compute.Lock()
	defer r.surfaces.compute.Unlock()
	if d, ok := r.surfaces.get(res.digest); ok { // computed while waiting
		obj.Status.ToolSurfaceDigest = d
		return
	}
	port := int32(nominalUpstreamPort)
	if c := obj.Status.Contract; c != nil && c.HTTPPort > 0 {
		port = c.HTTPPort
	}
	d, err := sidecar.ToolSurface(ctx, injection.SidecarOptions{}.Config(res.ref, string(res.digest), port), res.bundle)
	if err != nil {
		logf.FromContext(ctx).Info("the bundle's tool surface could not be computed; an injected sidecar would not start on it", "digest", res.digest, "error", err.Error())
		obj.Status.ToolSurfaceDigest = ""
		return
	}
	r.surfaces.put(res.digest, d)
	obj.Status.ToolSurfaceDigest = d
}

// surfaceMemo maps bundle digests to tool surface digests. It is bounded:
// past maxSurfaces entries it starts again from empty.
type surfaceMemo struct {
	mu sync.Mutex
	m  map[digest.Digest]string
	// compute is held while a surface is computed (recordSurface).
	compute sync.Mutex
}

const maxSurfaces = 1024

func (m *surfaceMemo) get(d digest.Digest) (string, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	v, ok := m.m[d]
	return v, ok
}

func (m *surfaceMemo) put(d digest.Digest, v string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.m == nil || len(m.m) >= maxSurfaces {
		m.m = map[digest.Digest]string{}
	}
	m.m[d] = v
}

// pulledBundle is a pulled bundle as bundle.Load returns it.
func pulledBundle(p *oci.Pulled) *bundle.Bundle {
	raw, err := p.FS.ReadFile(contract.FileName)
	if err != nil {
		return nil
	}
	b := &bundle.Bundle{Raw: raw, FS: p.FS, Identity: p.Digest, Source: bundle.Source{Ref: oci.Scheme + p.Reference.String()}}
	b.Contract, b.ParseErr = contract.Parse(raw)
	return b
}

// httpPort is the port the first server URL of the contract's first
// OpenAPI interface names, and that interface; 0 when it names none (no
// servers, a URL with variables, no explicit port).
func httpPort(fsys fs.FS, c *contract.Contract) (string, int32) {
	for _, in := range c.Interfaces {
		if in.Type != "openapi" || in.Ref == "" {
			continue
		}
		raw, err := fs.ReadFile(fsys, path.Clean(strings.TrimPrefix(in.Ref, "./")))
		if err != nil {
			return "", 0
		}
		var doc struct {
			Servers []struct {
				URL string `json:"url"`
			} `json:"servers"`
		}
		if err := yaml.Unmarshal(raw, &doc); err != nil || len(doc.Servers) == 0 {
			return "", 0
		}
		u, err := url.Parse(doc.Servers[0].URL)
		if err != nil || u.Port() == "" {
			return "", 0
		}
		n, err := strconv.ParseInt(u.Port(), 10, 32)
		if err != nil || n < 1 || n > 65535 {
			return "", 0
		}
		return in.Name, int32(n)
	}
	return "", 0
}
