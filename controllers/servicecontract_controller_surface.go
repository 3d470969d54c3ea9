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
	"github.com/kubepact/kubepact/internal/openapitools"
	"github.com/kubepact/kubepact/internal/sidecar"
)

// nominalUpstreamPort stands in for a Pod's upstream port when the
// contract names none: the port changes where the sidecar's calls go, not
// the tools' names or schemas (TestToolSurfaceIgnoresUpstreamPort).
const nominalUpstreamPort = 8080

// recordSurface sets status.toolSurfaces: for each tool mode the webhook
// accepts (injection.ToolModes), the tool surface the injected sidecar
// serves from the resolved bundle, computed with the configuration the
// webhook writes (injection.SidecarOptions.Config) in that mode; auto is
// projected as auto, so its digest is that of the mode the sidecar's own
// rule (openapitools.Capability.Mode) settles to. status.toolSurfaceDigest
// is mode all's. Each is computed once per digest, mode and process (the
// operator's version is the sidecar's: the same image). A mode whose tools
// cannot be projected has no entry; the sidecar, which projects the same
// way, would refuse to start in it, and the log says why.
func (r *ServiceContractReconciler) recordSurface(ctx context.Context, obj *v1alpha1.ServiceContract, res *resolved) {
	clearSurface(obj)
	if res.bundle == nil {
		return
	}
	port := int32(nominalUpstreamPort)
	if c := obj.Status.Contract; c != nil && c.HTTPPort > 0 {
		port = c.HTTPPort
	}
	for _, mode := range injection.ToolModes {
		d, ok := r.surface(ctx, res, port, mode)
		if !ok {
			continue
		}
		obj.Status.ToolSurfaces = append(obj.Status.ToolSurfaces, v1alpha1.ToolSurface{Mode: mode, Digest: d})
		if mode == openapitools.ToolModeAll {
			obj.Status.ToolSurfaceDigest = d
		}
	}
}

// clearSurface empties what recordSurface sets, for a status whose digest
// has no surface (no bundle, or an invalid one).
func clearSurface(obj *v1alpha1.ServiceContract) {
	obj.Status.ToolSurfaceDigest = ""
	obj.Status.ToolSurfaces = nil
}

// surface is the tool surface of res's bundle in one tool mode, from the
// memo or projected; false when it cannot be projected.
func (r *ServiceContractReconciler) surface(ctx context.Context, res *resolved, port int32, mode string) (string, bool) {
	key := surfaceKey{res.digest, mode}
	if d, ok := r.surfaces.get(key); ok {
		return d, true
	}
	// One projection at a time: a large API's peaks at about 160 MiB, and
	// the reconcilers run in parallel inside the operator's memory limit.
	r.surfaces.compute.Lock()
	defer r.surfaces.compute.Unlock()
	if d, ok := r.surfaces.get(key); ok { // computed while waiting
		return d, true
	}
	cfg := injection.SidecarOptions{ToolMode: mode}.Config(res.ref, string(res.digest), port)
	d, err := sidecar.ToolSurface(ctx, cfg, res.bundle)
	if err != nil {
		logf.FromContext(ctx).Info("the bundle's tool surface could not be computed; an injected sidecar in this tool mode would not start on it", "digest", res.digest, "toolMode", mode, "error", err.Error())
		return "", false
	}
	r.surfaces.put(key, d)
	return d, true
}

// surfaceKey names one memoized surface: a bundle digest in a tool mode.
type surfaceKey struct {
	digest digest.Digest
	mode   string
}

// surfaceMemo maps bundle digests and tool modes to tool surface digests.
// It is bounded: past maxSurfaces entries it starts again from empty.
type surfaceMemo struct {
	mu sync.Mutex
	m  map[surfaceKey]string
	// compute is held while a surface is computed (surface).
	compute sync.Mutex
}

// maxSurfaces bounds the memo: a few hundred bundle digests in each of
// the three tool modes.
const maxSurfaces = 1024

func (m *surfaceMemo) get(k surfaceKey) (string, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	v, ok := m.m[k]
	return v, ok
}

func (m *surfaceMemo) put(k surfaceKey, v string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.m == nil || len(m.m) >= maxSurfaces {
		m.m = map[surfaceKey]string{}
	}
	m.m[k] = v
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
