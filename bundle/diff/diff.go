package diff

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/kubepact/kubepact/bundle"
	"github.com/kubepact/kubepact/bundle/contract"
)

// ErrNoContract is returned for a bundle whose pacto.yaml did not parse: it
// has no contract to compare.
var ErrNoContract = errors.New("the bundle's pacto.yaml did not parse, so it has no service identity")

// Change classifications, least to most severe.
const (
	NonBreaking         = "NON_BREAKING"
	PotentiallyBreaking = "POTENTIAL_BREAKING"
	Breaking            = "BREAKING"
)

func classRank(c string) int {
	return slices.Index([]string{NonBreaking, PotentiallyBreaking, Breaking}, c)
}

// Change is one semantic difference between two contract revisions.
type Change struct {
	Path           string `json:"path"`
	Kind           string `json:"kind"` // added, removed or changed; service.version may be "unchanged" (see JudgeBump)
	Classification string `json:"classification"`
	Message        string `json:"message"`
	Old            string `json:"old,omitempty"`
	New            string `json:"new,omitempty"`
}

// Diff compares two bundles' contracts (and their OpenAPI operations) and
// classifies each change. Both contracts must have parsed. It stops with
// ctx's error when ctx ends, between interfaces (decoding their specs is
// the costly part).
func Diff(ctx context.Context, older, newer *bundle.Bundle) ([]Change, error) {
	if older.Contract == nil || newer.Contract == nil {
		return nil, ErrNoContract
	}
	d := differ{ctx: ctx}
	o, n := older.Contract, newer.Contract
	d.scalar("service.name", o.Service.Name, n.Service.Name, Breaking, "the service is renamed: consumers look it up by name")
	// The version is judged last, against every other change, and listed
	// where it reads first.
	at := len(d.out)
	d.scalar("service.owner.team", ownerTeam(o), ownerTeam(n), NonBreaking, "ownership moves")
	d.scalar("workload", o.Workload, n.Workload, Breaking, "the workload kind changes how the service runs")
	d.state(o.State, n.State)
	d.interfaces(older, newer)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	d.configurations(o.Configurations, n.Configurations)
	d.policies(o.Policies, n.Policies)
	d.dependencies(o.Dependencies, n.Dependencies)
	d.named("capabilities", capTypes(o), capTypes(n), PotentiallyBreaking, NonBreaking)
	if !reflect.DeepEqual(o.Readiness, n.Readiness) {
		d.add("readiness", "changed", NonBreaking, "the readiness declaration changed", "", "")
	}
	if !reflect.DeepEqual(o.Metadata, n.Metadata) {
		d.add("metadata", "changed", NonBreaking, "metadata changed", "", "")
	}
	if c, ok := versionChange(o.Service.Version, n.Service.Version, d.out); ok {
		d.out = slices.Insert(d.out, at, c)
	}
	return d.out, nil
}

// Classification is the most severe classification among changes.
func Classification(changes []Change) string {
	c := NonBreaking
	for _, ch := range changes {
		if classRank(ch.Classification) > classRank(c) {
			c = ch.Classification
		}
	}
	return c
}

type differ struct {
	ctx context.Context //nolint:containedctx // one Diff's, checked between interfaces
	out []Change
}

func (d *differ) add(path, kind, class, msg, o, n string) {
	d.out = append(d.out, Change{Path: path, Kind: kind, Classification: class, Message: msg, Old: o, New: n})
}

func (d *differ) scalar(path, o, n, class, why string) {
	if o == n {
		return
	}
	kind := "changed"
	switch {
	case o == "":
		kind, class = "added", NonBreaking
	case n == "":
		kind = "removed"
	}
	d.add(path, kind, class, path+": "+why, o, n)
}

func ownerTeam(c *contract.Contract) string {
	if c.Service.Owner == nil {
		return ""
	}
	return c.Service.Owner.Team
}

func capTypes(c *contract.Contract) []string {
	var out []string
	for _, cp := range c.Capabilities {
		out = append(out, cp.Type)
	}
	return out
}

// named diffs two name sets: a removal has class rm, an addition add.
func (d *differ) named(section string, o, n []string, rm, add string) {
	for _, name := range o {
		if !slices.Contains(n, name) {
			d.add(section+"."+name, "removed", rm, section+" "+name+" is removed", name, "")
		}
	}
	for _, name := range n {
		if !slices.Contains(o, name) {
			d.add(section+"."+name, "added", add, section+" "+name+" is added", "", name)
		}
	}
}

func (d *differ) state(o, n *contract.State) {
	if reflect.DeepEqual(o, n) {
		return
	}
	if o == nil || n == nil {
		d.add("state", "changed", PotentiallyBreaking, "the runtime state declaration is added or removed", "", "")
		return
	}
	d.scalar("state.type", o.Type, n.Type, PotentiallyBreaking, "state semantics change (stateless/stateful)")
	d.scalar("state.persistence.scope", o.Persistence.Scope, n.Persistence.Scope, PotentiallyBreaking, "the persistence scope changes")
	d.scalar("state.persistence.durability", o.Persistence.Durability, n.Persistence.Durability, PotentiallyBreaking, "the durability changes")
	d.scalar("state.dataCriticality", o.DataCriticality, n.DataCriticality, NonBreaking, "the data criticality changes")
}

func (d *differ) interfaces(ob, nb *bundle.Bundle) {
	oi := map[string]contract.Interface{}
	for _, i := range ob.Contract.Interfaces {
		oi[i.Name] = i
	}
	for _, ni := range nb.Contract.Interfaces {
		if d.ctx.Err() != nil {
			return // Diff returns the error
		}
		p := "interfaces." + ni.Name
		o, ok := oi[ni.Name]
		if !ok {
			d.add(p, "added", NonBreaking, "interface "+ni.Name+" is added", "", ni.Type)
			continue
		}
		delete(oi, ni.Name)
		d.scalar(p+".type", o.Type, ni.Type, Breaking, "the interface protocol changes")
		if o.Visibility != ni.Visibility {
			class := NonBreaking
			if ni.Visibility == "internal" {
				class = Breaking
			}
			d.add(p+".visibility", "changed", class, "interface "+ni.Name+" visibility changes", o.Visibility, ni.Visibility)
		}
		d.spec(p, o, ni, ob.FS, nb.FS)
	}
	for _, name := range slices.Sorted(maps.Keys(oi)) {
		d.add("interfaces."+name, "removed", Breaking, "interface "+name+" is removed: its consumers lose it", oi[name].Type, "")
	}
}

// spec compares an interface's spec file: for OpenAPI, operation by
// operation; otherwise a changed file is potentially breaking, and so is a
// spec that only one side can read (it cannot be compared).
func (d *differ) spec(p string, o, n contract.Interface, ofs, nfs fs.FS) {
	ob, oerr := readSpec(ofs, o.Ref)
	nb, nerr := readSpec(nfs, n.Ref)
	switch {
	case oerr != nil && nerr != nil:
		// Neither side can be read: only a changed ref says anything.
		if o.Ref != n.Ref {
			d.add(p+".spec", "changed", PotentiallyBreaking, "the spec reference changes from "+o.Ref+" to "+n.Ref+" and neither can be read to compare", o.Ref, n.Ref)
		}
		return
	case nerr != nil:
		d.add(p+".spec", "removed", PotentiallyBreaking, "the "+n.Type+" spec "+n.Ref+" cannot be read in the new revision, so its operations cannot be compared", o.Ref, n.Ref)
		return
	case oerr != nil:
		d.add(p+".spec", "added", PotentiallyBreaking, "the "+n.Type+" spec "+n.Ref+" can be read only in the new revision, so its operations cannot be compared", o.Ref, n.Ref)
		return
	case bytes.Equal(ob, nb):
		return
	}
	if o.Type == "openapi" && n.Type == "openapi" {
		odoc, err1 := openapiTree(ob)
		ndoc, err2 := openapiTree(nb)
		if err1 == nil && err2 == nil {
			oops, oat := opsOf(odoc)
			nops, nat := opsOf(ndoc)
			before := len(d.out)
			d.named(p+".operations", oops, nops, Breaking, NonBreaking)
			d.operations(p, odoc, ndoc, oat, nat)
			if len(d.out) > before {
				return
			}
		}
	}
	if o.Type == "grpc" && n.Type == "grpc" && d.protoChanges(p, contractRef{o.Ref}, contractRef{n.Ref}, ofs, nfs) {
		return
	}
	d.add(p+".spec", "changed", PotentiallyBreaking, "the "+n.Type+" spec "+n.Ref+" changed", "", "")
}

func readSpec(fsys fs.FS, ref string) ([]byte, error) {
	if fsys == nil || ref == "" {
		return nil, fs.ErrNotExist
	}
	return fs.ReadFile(fsys, strings.TrimPrefix(ref, "./"))
}

func (d *differ) configurations(o, n []contract.Configuration) {
	om := map[string]contract.Configuration{}
	for _, c := range o {
		om[c.Name] = c
	}
	for _, c := range n {
		p := "configurations." + c.Name
		old, ok := om[c.Name]
		if !ok {
			class := NonBreaking
			if c.Required {
				class = Breaking
			}
			d.add(p, "added", class, fmt.Sprintf("configuration %s is added (required: %t)", c.Name, c.Required), "", c.Name)
			continue
		}
		delete(om, c.Name)
		if !old.Required && c.Required {
			d.add(p+".required", "changed", Breaking, "configuration "+c.Name+" becomes required", "false", "true")
		}
		if old.Schema != c.Schema || old.Ref != c.Ref {
			d.add(p+".schema", "changed", PotentiallyBreaking, "configuration "+c.Name+" schema source changes", old.Schema+old.Ref, c.Schema+c.Ref)
		}
		if !reflect.DeepEqual(old.Values, c.Values) {
			d.add(p+".values", "changed", NonBreaking, "configuration "+c.Name+" values change", "", "")
		}
	}
	for _, name := range slices.Sorted(maps.Keys(om)) {
		d.add("configurations."+name, "removed", PotentiallyBreaking, "configuration "+name+" is removed", name, "")
	}
}

func (d *differ) policies(o, n []contract.Policy) {
	var on, nn []string
	for _, p := range o {
		on = append(on, p.Name)
	}
	for _, p := range n {
		nn = append(nn, p.Name)
	}
	d.named("policies", on, nn, NonBreaking, PotentiallyBreaking)
}

func (d *differ) dependencies(o, n []contract.Dependency) {
	om := map[string]contract.Dependency{}
	for _, dep := range o {
		om[dep.Name] = dep
	}
	for _, dep := range n {
		p := "dependencies." + dep.Name
		old, ok := om[dep.Name]
		if !ok {
			class := NonBreaking
			if dep.Required {
				class = PotentiallyBreaking
			}
			d.add(p, "added", class, "dependency "+dep.Name+" is added", "", dep.Ref)
			continue
		}
		delete(om, dep.Name)
		d.scalar(p+".compatibility", old.Compatibility, dep.Compatibility, PotentiallyBreaking, "the required version range changes")
		d.scalar(p+".ref", old.Ref, dep.Ref, PotentiallyBreaking, "the dependency reference changes")
		if !old.Required && dep.Required {
			d.add(p+".required", "changed", PotentiallyBreaking, "dependency "+dep.Name+" becomes required", "false", "true")
		}
	}
	for _, name := range slices.Sorted(maps.Keys(om)) {
		d.add("dependencies."+name, "removed", NonBreaking, "dependency "+name+" is removed", om[name].Ref, "")
	}
}
