package validate

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"

	"github.com/kubepact/kubepact/bundle/contract"
	"github.com/kubepact/kubepact/bundle/oci"
)

// policySchema is one compiled policy to enforce against the contract.
type policySchema struct {
	path   string // where the policy is declared, e.g. policies[0]
	name   string // the policy's name (for a referenced policy: chain of names)
	file   string // the schema file it came from
	schema *compiledSchema
}

// policy runs layer 3: every local policy compiled in layer 2, then every
// referenced policy bundle, is enforced against the contract itself.
func (v *validator) policy() {
	for _, ps := range v.policies {
		v.enforce(ps)
	}
	for i, pol := range v.c.Policies {
		if pol.Ref == "" {
			continue
		}
		p := fmt.Sprintf("policies[%d].ref", i)
		if v.resolver == nil {
			v.res.addError(p, CodePolicyRefUnresolved,
				fmt.Sprintf("policy ref %q cannot be resolved: no resolver is configured; an unresolved policy fails closed", pol.Ref))
			continue
		}
		schemas, err := v.collectRefPolicies(pol.Ref, pol.Name, map[string]bool{}, 0)
		if err != nil {
			var pe *policyRefError
			if errors.As(err, &pe) {
				v.res.addError(p, pe.code, fmt.Sprintf("policy %q: %s", pol.Name, pe.msg))
			} else {
				v.res.addError(p, CodePolicyEnforcementError, fmt.Sprintf("policy %q: %v", pol.Name, err))
			}
			continue
		}
		for _, ps := range schemas {
			ps.path = p
			v.enforce(ps)
		}
	}
}

func (v *validator) enforce(ps policySchema) {
	for _, f := range ps.schema.validateValue(v.doc, "") {
		v.res.addError(f.Path, CodePolicyViolation, fmt.Sprintf("violates policy %q (%s, declared at %s): %s", ps.name, ps.file, ps.path, f.Message))
	}
}

type policyRefError struct {
	code, msg string
}

func (e *policyRefError) Error() string { return e.msg }

// collectRefPolicies resolves a policy bundle and returns the schemas it
// contributes: its own policies[] if it declares any (following their refs),
// else its policy/schema.json.
func (v *validator) collectRefPolicies(ref, name string, chain map[string]bool, depth int) ([]policySchema, error) {
	if chain[ref] {
		return nil, &policyRefError{CodePolicyRefCycle, fmt.Sprintf("reference cycle: %s is reached again through its own policies", ref)}
	}
	if depth >= MaxRefDepth {
		return nil, &policyRefError{CodePolicyRefCycle, fmt.Sprintf("policy reference chain is deeper than %d bundles", MaxRefDepth)}
	}
	chain[ref] = true
	defer delete(chain, ref)
	if _, _, err := checkRefSyntax(ref); err != nil {
		return nil, &policyRefError{CodeInvalidPolicyRef, fmt.Sprintf("policy ref %q: %v", ref, err)}
	}
	fsys, err := v.resolve(ref)
	if err != nil {
		var ue *unreachableError
		if errors.As(err, &ue) {
			return nil, &policyRefError{CodeRefUnreachable, fmt.Sprintf("policy ref %q could not be checked: %v", ref, ue)}
		}
		return nil, &policyRefError{CodePolicyRefUnresolved, fmt.Sprintf("policy ref %q cannot be resolved (%v); an unresolved policy fails closed", ref, err)}
	}
	c, err := parseBundleContract(fsys)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, &policyRefError{CodePolicyEnforcementError, fmt.Sprintf("the policy bundle %s has an unreadable %s: %v", ref, contract.FileName, err)}
	}
	if c != nil && len(c.Policies) > 0 {
		var out []policySchema
		for _, pol := range c.Policies {
			label := name + " → " + pol.Name
			switch {
			case pol.Schema != "":
				cs, err := compileBundleSchema(fsys, pol.Schema)
				if err != nil {
					return nil, &policyRefError{CodePolicyEnforcementError, fmt.Sprintf("policy %q of %s: %v", pol.Name, ref, err)}
				}
				out = append(out, policySchema{name: label, file: ref + "/" + pol.Schema, schema: cs})
			case pol.Ref != "":
				if _, _, err := checkRefSyntax(pol.Ref); err != nil {
					return nil, &policyRefError{CodeInvalidPolicyRef, fmt.Sprintf("policy %q of %s: ref %q: %v", pol.Name, ref, pol.Ref, err)}
				}
				child, err := nestedRef(ref, pol.Ref)
				if err != nil {
					return nil, &policyRefError{CodePolicyRefUnresolved, fmt.Sprintf("policy %q: %v; an unresolved policy fails closed", pol.Name, err)}
				}
				more, err := v.collectRefPolicies(child, label, chain, depth+1)
				if err != nil {
					return nil, err
				}
				out = append(out, more...)
			}
		}
		return out, nil
	}
	const fallback = "policy/schema.json"
	cs, err := compileBundleSchema(fsys, fallback)
	if err != nil {
		if isNotFound(err) {
			return nil, &policyRefError{CodeInvalidPolicyRef, fmt.Sprintf("the bundle %s declares no policies and has no %s", ref, fallback)}
		}
		return nil, &policyRefError{CodePolicyEnforcementError, fmt.Sprintf("%s of %s: %v", fallback, ref, err)}
	}
	return []policySchema{{name: name, file: ref + "/" + fallback, schema: cs}}, nil
}

// resolve asks the resolver for a bundle, turning a nil FS or a panic into
// an error.
func (v *validator) resolve(ref string) (fsys fs.FS, err error) {
	if v.resolver == nil {
		return nil, errors.New("no resolver is configured")
	}
	if err := v.ctx.Err(); err != nil {
		return nil, err
	}
	defer func() {
		if p := recover(); p != nil {
			fsys, err = nil, fmt.Errorf("resolver failed: %v", p)
		}
	}()
	fsys, err = v.resolver.Resolve(v.ctx, ref)
	if err == nil && fsys == nil {
		err = errors.New("resolver returned no bundle")
	}
	if err != nil && unreachable(err) {
		err = &unreachableError{ref: ref, err: err}
	}
	return fsys, err
}

// unreachableError is a resolver failure that says nothing about the
// ref: the network did not let us ask.
type unreachableError struct {
	ref string
	err error
}

func (e *unreachableError) Error() string {
	if re, ok := errors.AsType[*oci.RegistryError](e.err); ok {
		return re.Error() // says what went wrong and what would fix it
	}
	return fmt.Sprintf("its registry could not be reached (%v); check the network and the registry, then check again", e.err)
}

func (e *unreachableError) Unwrap() error { return e.err }

// ErrUnreachable may be wrapped by a Resolver's error to say the bundle
// could not be fetched for a reason outside the ref itself; network
// errors (a failed DNS lookup, a refused or reset connection, a timeout)
// are recognised without it.
var ErrUnreachable = errors.New("unreachable")

// IsUnreachable reports whether err, from fetching a bundle, is a network
// failure (or wraps ErrUnreachable, or is a registry the registry policy
// refused) rather than an answer about the ref: the bundle could not be
// checked, which says nothing about it.
func IsUnreachable(err error) bool { return unreachable(err) }

// unreachable reports whether a resolver error is a network failure
// rather than an answer about the ref.
func unreachable(err error) bool {
	var (
		opErr  *net.OpError
		dnsErr *net.DNSError
		netErr net.Error
	)
	return errors.Is(err, ErrUnreachable) || errors.Is(err, oci.ErrUnreachable) || errors.Is(err, oci.ErrNotAllowed) ||
		errors.As(err, &opErr) || errors.As(err, &dnsErr) ||
		errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &netErr) && netErr.Timeout())
}

// parseBundleContract reads and parses pacto.yaml of a referenced bundle.
func parseBundleContract(fsys fs.FS) (*contract.Contract, error) {
	data, err := readFile(fsys, contract.FileName, contract.MaxBytes)
	if err != nil {
		return nil, err
	}
	return contract.Parse(data)
}
