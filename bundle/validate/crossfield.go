package validate

import (
	"errors"
	"fmt"
	"path"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/Masterminds/semver/v3"

	"github.com/kubepact/kubepact/bundle/contract"
	"github.com/kubepact/kubepact/internal/protofiles"
	"github.com/kubepact/kubepact/internal/schemacycle"
)

// crossField runs layer 2. It records findings in v.res; the caller decides
// whether layer 3 runs.
func (v *validator) crossField() {
	c := v.c
	if _, err := semver.NewVersion(c.Service.Version); err != nil {
		v.res.addError("service.version", CodeInvalidSemver,
			fmt.Sprintf("%q is not a semantic version (%v); write MAJOR.MINOR.PATCH with optional -prerelease and +build, e.g. 1.4.0 or 2.0.0-rc.1", c.Service.Version, err))
	}
	v.checkInterfaces()
	if v.ctx.Err() != nil {
		return // run says so
	}
	v.checkConfigurations()
	v.checkPolicies()
	v.checkDependencies()
	v.checkCapabilities()
	v.checkState()
	v.checkReadiness()
}

// uniqueNames reports DUPLICATE_* for repeated names in one section.
func (v *validator) uniqueNames(section, what, code string, names []string) {
	first := make(map[string]int, len(names))
	for i, n := range names {
		if j, dup := first[n]; dup {
			v.res.addError(fmt.Sprintf("%s[%d].name", section, i), code,
				fmt.Sprintf("duplicate %s name %q: already declared at %s[%d]; names must be unique", what, n, section, j))
			continue
		}
		first[n] = i
	}
}

func (v *validator) checkInterfaces() {
	names := make([]string, len(v.c.Interfaces))
	for i, in := range v.c.Interfaces {
		names[i] = in.Name
		if v.ctx.Err() != nil {
			continue // run says so
		}
		p := fmt.Sprintf("interfaces[%d]", i)
		switch in.Type {
		case "openapi", "asyncapi", "grpc":
		default:
			v.res.addError(p+".type", CodeSchemaViolation, fmt.Sprintf("interface type %q is not supported; use openapi, asyncapi or grpc", in.Type))
			continue
		}
		if strings.TrimSpace(in.Ref) == "" {
			v.res.addError(p+".ref", CodeSchemaViolation, "an interface needs ref: the bundle path of its spec file")
			continue
		}
		data, err := readFile(v.fsys, in.Ref, v.maxSpecBytes)
		if err != nil {
			if isNotFound(err) {
				v.res.addError(p+".ref", CodeFileNotFound, missingMessage("interface spec", in.Ref, err))
			} else {
				v.res.addError(p+".ref", CodeInvalidInterfaceSpec, missingMessage("interface spec", in.Ref, err))
			}
			continue
		}
		doc, err := checkSpec(v.ctx, in.Type, in.Ref, data)
		var se *schemacycle.Error
		switch {
		case errors.As(err, &se) && se.TooDeep:
			v.res.addError(p+".ref", CodeSchemaTooDeep, fmt.Sprintf("%s: a schema cannot be evaluated: %v; operations using it get no tool", in.Ref, err))
		case errors.As(err, &se):
			v.res.addError(p+".ref", CodeSchemaRefCycle, fmt.Sprintf("%s: %v; operations using it get no tool", in.Ref, err))
		case err != nil:
			v.res.addError(p+".ref", CodeInvalidInterfaceSpec, fmt.Sprintf("%s is not a valid %s spec: %v", in.Ref, in.Type, err))
		case in.Type == "grpc" && strings.EqualFold(path.Ext(in.Ref), ".proto"):
			// Plausible: now compile it, imports and all, inside the bundle.
			if _, err := protofiles.Compile(v.ctx, v.fsys, in.Ref, protofiles.Limits{}); err != nil && v.ctx.Err() == nil {
				v.res.addError(p+".ref", CodeInvalidInterfaceSpec, fmt.Sprintf("%s is not a valid grpc spec: %v", in.Ref, err))
			}
		case in.Type != "grpc":
			v.warnClosedAllOf(p+".ref", in.Ref, data, doc)
		}
	}
	v.uniqueNames("interfaces", "interface", CodeDuplicateInterfaceName, names)
}

func (v *validator) checkConfigurations() {
	names := make([]string, len(v.c.Configurations))
	for i, cfg := range v.c.Configurations {
		names[i] = cfg.Name
		p := fmt.Sprintf("configurations[%d]", i)
		switch {
		case cfg.Schema != "" && cfg.Ref != "":
			v.res.addError(p, CodeInvalidConfigRef, "a configuration has either schema or ref, not both")
		case cfg.Schema != "":
			v.checkConfigSchema(p, cfg.Schema, cfg.Values)
		case cfg.Ref != "":
			if cfg.Values != nil {
				v.res.addError(p+".values", CodeValuesWithoutSchema, "values are only allowed together with schema; a configuration with ref takes its values at deploy time")
				continue
			}
			v.checkConfigRef(p+".ref", cfg.Ref)
		case cfg.Values != nil:
			v.res.addError(p+".values", CodeValuesWithoutSchema, "values need a schema to be validated against; add schema: configuration/schema.json")
		}
	}
	v.uniqueNames("configurations", "configuration", CodeDuplicateConfigurationName, names)
}

func (v *validator) checkConfigSchema(p, name string, values map[string]any) {
	cs, err := compileBundleSchema(v.fsys, name)
	if err != nil {
		v.schemaFileFinding(p+".schema", "configuration schema", name, err, CodeInvalidConfigJSON, CodeInvalidConfigSchema)
		return
	}
	if values == nil {
		return
	}
	for _, f := range cs.validateValue(values, p+".values") {
		v.res.addError(f.Path, CodeConfigValuesValidationFailed, fmt.Sprintf("does not satisfy %s: %s", name, f.Message))
	}
}

// schemaFileFinding reports why a schema file could not be used.
func (v *validator) schemaFileFinding(path, what, name string, err error, jsonCode, schemaCode string) {
	stage := "schema"
	if sfe, ok := errors.AsType[*schemaFileError](err); ok {
		stage = sfe.stage
	}
	switch stage {
	case "read":
		if isNotFound(err) {
			v.res.addError(path, CodeFileNotFound, missingMessage(what, name, err))
		} else {
			v.res.addError(path, jsonCode, missingMessage(what, name, err))
		}
	case "json":
		v.res.addError(path, jsonCode, fmt.Sprintf("%s: %v", what, err))
	default:
		v.res.addError(path, schemaCode, fmt.Sprintf("%s: %v", what, err))
	}
}

// checkConfigRef resolves a configuration ref and checks that the bundle it
// names provides a usable configuration schema.
func (v *validator) checkConfigRef(p, ref string) {
	if _, _, err := checkRefSyntax(ref); err != nil {
		v.res.addError(p, CodeInvalidConfigRef, fmt.Sprintf("configuration ref %q: %v", ref, err))
		return
	}
	if v.resolver == nil {
		v.res.addWarning(p, CodeConfigRefNotResolved,
			fmt.Sprintf("configuration ref %q was not resolved (no resolver configured), so its schema was not checked", ref))
		return
	}
	if err := v.followConfigRef(ref, map[string]bool{}, 0); err != nil {
		var ue *unreachableError
		if errors.As(err, &ue) {
			v.res.addError(p, CodeRefUnreachable, fmt.Sprintf("configuration ref %q could not be checked: %v", ref, ue))
			return
		}
		v.res.addError(p, CodeInvalidConfigRef, fmt.Sprintf("configuration ref %q: %v", ref, err))
	}
}

// followConfigRef finds configuration/schema.json in the referenced bundle,
// following that bundle's own configuration ref when it has no schema file.
func (v *validator) followConfigRef(ref string, chain map[string]bool, depth int) error {
	if chain[ref] {
		return fmt.Errorf("reference cycle: %s is reached again", ref)
	}
	if depth >= MaxRefDepth {
		return fmt.Errorf("reference chain is deeper than %d bundles", MaxRefDepth)
	}
	chain[ref] = true
	fsys, err := v.resolve(ref)
	if err != nil {
		return fmt.Errorf("cannot be resolved: %w", err)
	}
	const schemaFile = "configuration/schema.json"
	_, err = compileBundleSchema(fsys, schemaFile)
	if err == nil {
		return nil
	}
	if !isNotFound(err) {
		return fmt.Errorf("%s of the referenced bundle: %w", schemaFile, err)
	}
	c, perr := parseBundleContract(fsys)
	if perr == nil {
		for _, cfg := range c.Configurations {
			if cfg.Ref != "" {
				if _, _, err := checkRefSyntax(cfg.Ref); err != nil {
					return fmt.Errorf("the referenced bundle's configuration ref %q: %w", cfg.Ref, err)
				}
				child, err := nestedRef(ref, cfg.Ref)
				if err != nil {
					return err
				}
				return v.followConfigRef(child, chain, depth+1)
			}
		}
	}
	return fmt.Errorf("the referenced bundle has no %s", schemaFile)
}

func (v *validator) checkPolicies() {
	names := make([]string, len(v.c.Policies))
	for i, pol := range v.c.Policies {
		names[i] = pol.Name
		p := fmt.Sprintf("policies[%d]", i)
		if pol.Target != "" && pol.Target != "contract" {
			v.res.addError(p+".target", CodeSchemaViolation, fmt.Sprintf("policy target %q is not supported; the only target is contract", pol.Target))
			continue
		}
		switch {
		case pol.Schema != "" && pol.Ref != "":
			v.res.addError(p, CodeInvalidPolicyRef, "a policy has either schema or ref, not both")
		case pol.Schema != "":
			cs, err := compileBundleSchema(v.fsys, pol.Schema)
			if err != nil {
				v.schemaFileFinding(p+".schema", "policy schema", pol.Schema, err, CodeInvalidPolicyJSON, CodeInvalidPolicySchema)
				continue
			}
			v.policies = append(v.policies, policySchema{path: p, name: pol.Name, file: pol.Schema, schema: cs})
		case pol.Ref != "":
			if _, _, err := checkRefSyntax(pol.Ref); err != nil {
				v.res.addError(p+".ref", CodeInvalidPolicyRef, fmt.Sprintf("policy ref %q: %v", pol.Ref, err))
			}
		default:
			v.res.addError(p, CodeInvalidPolicyRef, "a policy needs schema (a file in this bundle) or ref (a policy bundle)")
		}
	}
	v.uniqueNames("policies", "policy", CodeDuplicatePolicyName, names)
}

func (v *validator) checkDependencies() {
	names := make([]string, len(v.c.Dependencies))
	for i, d := range v.c.Dependencies {
		names[i] = d.Name
		p := fmt.Sprintf("dependencies[%d]", i)
		k, r, err := checkRefSyntax(d.Ref)
		switch {
		case err != nil:
			v.res.addError(p+".ref", CodeInvalidOCIRef, fmt.Sprintf("dependency ref %q: %v", d.Ref, err))
		case k == refOCI && r.Tag != "" && r.Digest == "":
			v.res.addWarning(p+".ref", CodeTagNotDigest,
				fmt.Sprintf("dependency ref %q pins a tag, which can move; pin a digest (…@sha256:<hex>) for a reproducible dependency", d.Ref))
		}
		switch {
		case strings.TrimSpace(d.Compatibility) == "":
			v.res.addError(p+".compatibility", CodeEmptyCompatibility, "compatibility is empty; give a semver constraint such as ^1.0.0")
		default:
			if _, err := semver.NewConstraint(d.Compatibility); err != nil {
				v.res.addError(p+".compatibility", CodeInvalidCompatibility,
					fmt.Sprintf("%q is not a semver constraint (%v); examples: ^1.2.0, ~1.4, >=2.0.0 <3.0.0", d.Compatibility, err))
			}
		}
	}
	v.uniqueNames("dependencies", "dependency", CodeDuplicateDependencyName, names)
}

// extensionRefRe is a namespaced capability id: a domain, '/', a name.
var extensionRefRe = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)+/[A-Za-z0-9]([A-Za-z0-9._/-]*[A-Za-z0-9])?$`)

var bindingPathRe = regexp.MustCompile(`^/([^/].*)?$`)

func (v *validator) checkCapabilities() {
	ifaces := make(map[string]bool, len(v.c.Interfaces))
	for _, in := range v.c.Interfaces {
		ifaces[in.Name] = true
	}
	seen := map[string]int{}
	for i, cp := range v.c.Capabilities {
		p := fmt.Sprintf("capabilities[%d]", i)
		switch cp.Type {
		case "health", "metrics":
			if j, dup := seen[cp.Type]; dup {
				v.res.addError(p+".type", CodeDuplicateCapability, fmt.Sprintf("capability %q is already declared at capabilities[%d]; declare each standard capability once", cp.Type, j))
			} else {
				seen[cp.Type] = i
			}
			if cp.Ref != "" {
				v.res.addError(p+".ref", CodeCapabilityRefInvalid, fmt.Sprintf("a %s capability takes no ref; ref is only for type extension", cp.Type))
			}
		case "extension":
			switch {
			case cp.Ref == "":
				v.res.addError(p+".ref", CodeSchemaViolation, "an extension capability needs ref: a namespaced id such as example.com/custom")
			case !extensionRefRe.MatchString(cp.Ref):
				v.res.addError(p+".ref", CodeCapabilityRefInvalid, fmt.Sprintf("%q is not a namespaced id; write a domain, '/', and a name, e.g. example.com/custom", cp.Ref))
			}
			if cp.Binding != nil {
				v.res.addError(p+".binding", CodeCapabilityRefInvalid, "an extension capability takes no binding")
			}
		default:
			v.res.addError(p+".type", CodeSchemaViolation, fmt.Sprintf("capability type %q is not supported; use health, metrics or extension", cp.Type))
			continue
		}
		if b := cp.Binding; b != nil && cp.Type != "extension" {
			if !ifaces[b.Interface] {
				v.res.addError(p+".binding.interface", CodeCapabilityInterfaceUnknown,
					fmt.Sprintf("binding names interface %q, which is not declared; declared interfaces: %s", b.Interface, listOrNone(v.c.Interfaces)))
			}
			if b.Path != "" && !bindingPathRe.MatchString(b.Path) {
				v.res.addError(p+".binding.path", CodeCapabilityPathInvalid, fmt.Sprintf("%q is not an absolute URL path; write it like /healthz", b.Path))
			}
		}
	}
}

func listOrNone(items []contract.Interface) string {
	if len(items) == 0 {
		return "none"
	}
	names := make([]string, len(items))
	for i, it := range items {
		names[i] = strconv.Quote(it.Name)
	}
	return strings.Join(names, ", ")
}

func (v *validator) checkState() {
	if s := v.c.State; s != nil && s.Type == "stateless" && s.Persistence.Durability == "persistent" {
		v.res.addError("state.persistence.durability", CodeStatelessPersistentConflict, "a stateless service cannot have persistent durability; use ephemeral, or change state.type")
	}
}

// strictDate accepts exactly YYYY-MM-DD naming a real calendar day.
func strictDate(s string) bool {
	t, err := time.Parse(time.DateOnly, s)
	return err == nil && t.Format(time.DateOnly) == s
}

func (v *validator) checkReadiness() {
	r := v.c.Readiness
	if r == nil {
		return
	}
	if !strictDate(r.Expires) {
		v.res.addError("readiness.expires", CodeInvalidReadinessExpires,
			fmt.Sprintf("%q is not a real calendar date written YYYY-MM-DD (e.g. 2027-06-30)", r.Expires))
	}
	for i, h := range r.History {
		p := fmt.Sprintf("readiness.history[%d]", i)
		if !strictDate(h.Date) {
			v.res.addError(p+".date", CodeInvalidReadinessRevision, fmt.Sprintf("%q is not a real calendar date written YYYY-MM-DD", h.Date))
		}
		for _, f := range []struct{ name, val string }{{"version", h.Version}, {"author", h.Author}, {"description", h.Description}} {
			if strings.TrimSpace(f.val) == "" {
				v.res.addError(p+"."+f.name, CodeInvalidReadinessRevision, fmt.Sprintf("history %s must not be blank", f.name))
			}
		}
	}
	first := map[string]int{}
	for i, cl := range r.Claims {
		p := fmt.Sprintf("readiness.claims[%d]", i)
		if j, dup := first[cl.ID]; dup {
			v.res.addError(p+".id", CodeDuplicateReadinessID, fmt.Sprintf("claim id %q is already used by readiness.claims[%d]; ids must be unique", cl.ID, j))
		} else {
			first[cl.ID] = i
		}
		if strings.TrimSpace(cl.Evidence) == "" {
			v.res.addError(p+".evidence", CodeEmptyReadinessEvidence, "evidence must not be blank: give a URL, document path, ticket id or other pointer")
		}
		if cl.Description != "" && strings.TrimSpace(cl.Description) == "" {
			v.res.addError(p+".description", CodeEmptyReadinessDescription, "description must not be blank when present; remove it or write one")
		}
	}
}
