package authoring

import (
	"fmt"
	"strings"
)

// defaultCompatibility is a dependency's compatibility when neither the
// caller nor a known version gives one.
const defaultCompatibility = "^1.0.0"

// Dependencies is what authoring needs to know about the services a
// dependency may name: the fleet, when the server serves one. Authoring
// defines it and the server implements it over its fleet snapshot, so
// authoring imports no fleet package.
type Dependencies interface {
	// Dependency resolves a service name (or key). found is false for a
	// service it does not know; candidates are then near names, or the
	// keys of a name several services share.
	Dependency(name string) (known KnownDependency, candidates []string, found bool)
}

// KnownDependency is what Dependencies knows of a service.
type KnownDependency struct {
	// Ref is the service's canonical registry reference (oci://…, no tag);
	// empty when none is known.
	Ref string
	// Compatibility is derived from Version (^MAJOR.MINOR.0).
	Compatibility string
	// Version is the newest version known.
	Version string
}

// bareRef reports whether a dependency ref names a service without a
// registry or a path: "payments" or "payments:3.0.2".
func bareRef(ref string) bool {
	return !strings.Contains(ref, "://") && !strings.Contains(ref, "/") && !strings.HasPrefix(ref, ".")
}

// completeDependencies resolves bare dependency refs against the known
// services and fills in defaults. A bare ref naming a known service
// becomes its registry ref; one naming no known service, or one without a
// registry ref, is refused with the candidates. A missing compatibility
// comes from the dependency's newest known version, else ^1.0.0. What was
// resolved or defaulted is returned for Derived.
func (a *Authoring) completeDependencies(field string, deps []DependencySpec) ([]string, error) {
	var derived []string
	for i := range deps {
		d := &deps[i]
		f := fmt.Sprintf("%s[%d]", field, i)
		var known *KnownDependency
		if a.deps != nil {
			name := dependencyName(d.Ref)
			k, cands, found := a.deps.Dependency(name)
			switch {
			case found && bareRef(d.Ref) && k.Ref == "":
				return nil, argError(f+".ref", fmt.Sprintf("ref %q names the fleet service %s, which has no registry reference (its bundles were read from local directories): publish it, then give its oci:// reference as ref (e.g. oci://ghcr.io/acme/%s)", d.Ref, name, name))
			case found && bareRef(d.Ref):
				ref := k.Ref
				if _, tag, ok := strings.Cut(d.Ref, ":"); ok && tag != "" {
					ref += ":" + tag
				}
				derived = append(derived, fmt.Sprintf("%s.ref %s: the fleet service %s (was %q)", f, ref, name, d.Ref))
				d.Ref, known = ref, &k
			case found && k.Ref != "" && strings.HasPrefix(d.Ref, k.Ref):
				known = &k
			case !found && bareRef(d.Ref):
				msg := fmt.Sprintf("ref %q names no registry, and the fleet has no service %s: give an oci:// reference (e.g. oci://ghcr.io/acme/%s) or a fleet service's name", d.Ref, name, name)
				if len(cands) > 0 {
					msg += "; did you mean " + strings.Join(cands, ", ") + "?"
				}
				return nil, argError(f+".ref", msg)
			}
		}
		if d.Compatibility == "" {
			switch {
			case known != nil && known.Compatibility != "":
				d.Compatibility = known.Compatibility
				derived = append(derived, fmt.Sprintf("%s.compatibility %s: from %s's newest known version %s", f, d.Compatibility, d.Name, known.Version))
			default:
				d.Compatibility = defaultCompatibility
			}
		}
	}
	return derived, nil
}
