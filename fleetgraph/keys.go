package fleetgraph

import (
	"strings"

	"github.com/kubepact/kubepact/bundle/oci"
)

// escapeKey escapes one key component the way Pacto does: '%' becomes %25
// and '/' becomes %2F, so '/' can separate components unambiguously.
func escapeKey(s string) string {
	if !strings.ContainsAny(s, "%/") {
		return s
	}
	s = strings.ReplaceAll(s, "%", "%25")
	return strings.ReplaceAll(s, "/", "%2F")
}

// ServiceKey is a service's identity: its escaped name, or the escaped
// domain (registry and organisation path) and name. One bundle mirrored
// into two registries is two services.
func ServiceKey(domain, name string) string {
	if domain == "" {
		return escapeKey(name)
	}
	return escapeKey(domain) + "/" + escapeKey(name)
}

// RevisionKey is a contract revision's identity: its service key and its
// content digest. A tag or a path is never identity.
func RevisionKey(serviceKey, digest string) string {
	return serviceKey + "@" + digest
}

// TargetKey is a target's identity: its escaped scope, kind and name.
func TargetKey(scope, kind, name string) string {
	return escapeKey(scope) + "/" + escapeKey(kind) + "/" + escapeKey(name)
}

// ref is a parsed bundle reference: oci://registry/org/repo:tag@digest, a
// bare repo:tag, or a local path.
type ref struct {
	oci    bool
	domain string // registry and organisation path; empty for bare and local refs
	repo   string // last path segment
	tag    string
	digest string
}

// parseRef splits a reference into a domain, a name, a tag and a pinned
// digest. A reference the bundle package's one parser reads is split by it
// (oci://, file:// and bare local paths); what it refuses — a bare repo:tag
// as contracts sometimes write, or a registry reference with a grammar
// error — is split leniently, since a fleet shows such edges rather than
// dropping them.
func parseRef(s string) ref {
	if br, err := oci.ParseBundleRef(s); err == nil {
		if !br.IsLocal() {
			o := br.OCI
			r := ref{oci: true, domain: o.Registry, repo: o.Repository, tag: o.Tag, digest: o.Digest}
			if i := strings.LastIndex(o.Repository, "/"); i >= 0 {
				r.domain, r.repo = o.Registry+"/"+o.Repository[:i], o.Repository[i+1:]
			}
			return r
		}
		if strings.HasPrefix(s, oci.LocalScheme) || strings.HasPrefix(s, ".") || strings.HasPrefix(s, "/") {
			p := strings.TrimRight(br.Local, "/")
			return ref{repo: p[strings.LastIndex(p, "/")+1:]}
		}
	}
	var r ref
	if rest, ok := strings.CutPrefix(s, oci.Scheme); ok {
		r.oci = true
		s = rest
	}
	if before, after, ok := strings.Cut(s, "@"); ok {
		s, r.digest = before, after
	}
	last := strings.LastIndex(s, "/")
	seg := s[last+1:]
	if i := strings.LastIndex(seg, ":"); i >= 0 {
		seg, r.tag = seg[:i], seg[i+1:]
	}
	r.repo = seg
	if last >= 0 {
		r.domain = s[:last]
	}
	return r
}

// versionOfTag strips a leading v so tag v1.2.0 matches version 1.2.0.
func versionOfTag(tag string) string {
	if len(tag) > 1 && (tag[0] == 'v' || tag[0] == 'V') && tag[1] >= '0' && tag[1] <= '9' {
		return tag[1:]
	}
	return tag
}
