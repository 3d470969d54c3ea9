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
// offered as auto, so its digest is that of the mode the sidecar's own
// rule (openapitools.Capability.Mode) settles to. status.toolSurfaceDigest
// is mode all's. Each is computed once per digest, mode and process (the
// operator's version is the sidecar's: the same image), the modes of a
// digest from one projection. A mode whose tools cannot be projected has
// no entry; the sidecar, which projects the same way, would refuse to
// start in it, and the log says why.
func (r *ServiceContractReconciler) recordSurface(ctx context.Context, obj *v1alpha1.ServiceContract, res *resolved) {
	clearSurface(obj)
	if res.bundle == nil {
		return
	}
	port := int32(nominalUpstreamPort)
	if c := obj.Status.Contract; c != nil && c.HTTPPort > 0 {
		port = c.HTTPPort
	}
	got := r.toolSurfaces(ctx, res, port)
	for _, mode := range injection.ToolModes {
		d, ok := got[mode]
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

// toolSurfaces is the tool surface of res's bundle in each tool mode the
// webhook accepts, by mode: from the memo, and for the modes it lacks
// from one projection of the bundle (sidecar.ToolSurfaces). A mode whose
// tools cannot be projected is absent.
func (r *ServiceContractReconciler) toolSurfaces(ctx context.Context, res *resolved, port int32) map[string]string {
	got := map[string]string{}
	if r.surfaces.fill(res.digest, got) == nil {
		return got
	}
	// One projection at a time: a large API's peaks at about 160 MiB, and
	// the reconcilers run in parallel inside the operator's memory limit.
	r.surfaces.compute.Lock()
	defer r.surfaces.compute.Unlock()
	missing := r.surfaces.fill(res.digest, got) // some computed while waiting
	if missing == nil {
		return got
	}
	log := logf.FromContext(ctx)
	const why = "the bundle's tool surface could not be computed; an injected sidecar in this tool mode would not start on it"
	// The modes' configurations differ in Tools.ToolMode alone, which
	// ToolSurfaces sets per mode.
	cfg := injection.SidecarOptions{}.Config(res.ref, string(res.digest), port)
	surfaces, err := sidecar.ToolSurfaces(ctx, cfg, res.bundle, missing)
	if err != nil {
		for _, mode := range missing {
			log.Info(why, "digest", res.digest, "toolMode", mode, "error", err.Error())
		}
		return got
	}
	for _, s := range surfaces {
		if s.Err != nil {
			log.Info(why, "digest", res.digest, "toolMode", s.Mode, "error", s.Err.Error())
			continue
		}
		r.surfaces.put(surfaceKey{res.digest, s.Mode}, s.Digest)
		got[s.Mode] = s.Digest
	}
	return got
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
	// compute is held while surfaces are computed (toolSurfaces).
	compute sync.Mutex
}

// maxSurfaces bounds the memo: a few hundred bundle digests in each of
// the three tool modes.
const maxSurfaces = 1024

// fill adds the memoized surfaces of digest d to got, by mode, and
// returns the tool modes (injection.ToolModes) it has none for.
func (m *surfaceMemo) fill(d digest.Digest, got map[string]string) []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var missing []string
	for _, mode := range injection.ToolModes {
		if v, ok := m.m[surfaceKey{d, mode}]; ok {
			got[mode] = v
		} else {
			missing = append(missing, mode)
		}
	}
	return missing
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
