package authoring

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/kubepact/kubepact/bundle/validate"
)

// Edit applies changes to an existing pacto.yaml on its node tree (comments,
// key order and untouched scalar text survive), scaffolds stub specs for
// added interfaces, writes requested config properties into the
// configuration schema, validates the result as it will be on disk and
// writes atomically.
//
// Every argument is checked before anything changes. Removing a name that is
// not there is a NOT_FOUND error (the whole call is refused), because a
// removal that silently does nothing hides a typo. An edit with no effective
// change writes nothing and returns changes: [] with a warning.
//
// An edit is refused when the result has a validation error the contract did
// not already have; errors it already had are reported as warnings, so a
// broken contract can be repaired one edit at a time.
func (a *Authoring) Edit(ctx context.Context, req EditRequest) (*EditResult, error) {
	ed, err := decodeEdit(req)
	if err != nil {
		return nil, err
	}
	resolved, err := a.completeDependencies("add_dependencies", ed.addDependencies)
	if err != nil {
		return nil, err
	}
	dir, err := a.ws.Rel("path", req.Path)
	if err != nil {
		return nil, err
	}
	root, err := a.openRoot()
	if err != nil {
		return nil, err
	}
	defer root.Close()

	manifest, old, err := readManifest(root, dir)
	if err != nil {
		return nil, err
	}
	doc, err := parseDocument(old)
	if err != nil {
		return nil, &Error{Code: CodeInvalidContract, Field: "path", Message: fmt.Sprintf(
			"%s cannot be edited because it does not parse as YAML (%s); fix it by hand, then pacto_check it", manifest, strings.TrimPrefix(err.Error(), "yaml: ")), err: err}
	}
	e := &editor{root: root, dir: dir, top: doc.Content[0], changes: []string{}, warnings: []string{}}
	if err := e.apply(ed); err != nil {
		return nil, err
	}
	// A resolved ref or a compatibility from a known version is said, as
	// every other inference is.
	e.warnings = append(e.warnings, resolved...)
	res := &EditResult{Path: dir, Changes: e.changes, Files: []FileChange{}, DryRun: req.DryRun, Warnings: e.warnings}
	if len(e.changes) == 0 {
		res.Summary = summarize(doc)
		res.Warnings = append(res.Warnings, "nothing changed: the contract already says what the arguments ask for, so nothing was written")
		return res, nil
	}
	data, err := encodeDocument(doc)
	if err != nil {
		return nil, internalError("rendering pacto.yaml", err)
	}
	changes := slices.Concat(e.files, []fileChange{{rel: manifest, data: data, old: old}})
	after := a.validateResult(ctx, root, dir, changes)
	if !after.Valid() {
		before := a.validateResult(ctx, root, dir, []fileChange{{rel: manifest, data: old}})
		if introduced := newErrors(before, after); len(introduced.Errors) > 0 {
			return nil, invalidContract("the edit would make the contract invalid, so nothing was written", introduced)
		}
		for _, f := range after.Errors {
			res.Warnings = append(res.Warnings, fmt.Sprintf("the contract was already invalid and still is: %s %s: %s", f.Code, f.Path, f.Message))
		}
	}
	for _, w := range after.Warnings {
		res.Warnings = append(res.Warnings, fmt.Sprintf("%s %s: %s", w.Code, w.Path, w.Message))
	}
	res.Summary = summarize(doc)
	res.Files = reportFiles(changes)
	if req.DryRun {
		res.Diff = diffAll(changes)
		return res, nil
	}
	if err := a.writeAll(ctx, root, changes); err != nil {
		return nil, err
	}
	return res, nil
}

func displayDir(dir string) string {
	if dir == "." {
		return "the workspace root"
	}
	return dir
}

// newErrors returns the errors of after that before did not have.
func newErrors(before, after validate.Result) validate.Result {
	type key struct{ path, code string }
	had := map[key]bool{}
	for _, f := range before.Errors {
		had[key{f.Path, f.Code}] = true
	}
	var out validate.Result
	for _, f := range after.Errors {
		if !had[key{f.Path, f.Code}] {
			out.Errors = append(out.Errors, f)
		}
	}
	return out
}

// editArgs is an EditRequest with its structured arguments checked.
type editArgs struct {
	req                 EditRequest
	addInterfaces       []InterfaceSpec
	removeInterfaces    []string
	addDependencies     []DependencySpec
	removeDependencies  []string
	addConfigProperties []ConfigProperty
	setMetadata         []member
	removeMetadata      []string
	given               []string // structured arguments given, even if empty
}

func decodeEdit(req EditRequest) (*editArgs, error) {
	ed := &editArgs{req: req}
	if err := oneOf("workload", req.Workload, "service", "job", "scheduled"); err != nil {
		return nil, err
	}
	if err := oneOf("data_loss_impact", req.DataLossImpact, "low", "medium", "high"); err != nil {
		return nil, err
	}
	note := func(field string, ok bool) {
		if ok {
			ed.given = append(ed.given, field)
		}
	}
	var err error
	if ed.addInterfaces, err = checkInterfaces("add_interfaces", req.AddInterfaces); err != nil {
		return nil, err
	}
	note("add_interfaces", req.AddInterfaces != nil)
	if ed.removeInterfaces, err = checkNames("remove_interfaces", req.RemoveInterfaces); err != nil {
		return nil, err
	}
	note("remove_interfaces", req.RemoveInterfaces != nil)
	if ed.addDependencies, err = checkDependencies("add_dependencies", req.AddDependencies); err != nil {
		return nil, err
	}
	note("add_dependencies", req.AddDependencies != nil)
	if ed.removeDependencies, err = checkNames("remove_dependencies", req.RemoveDependencies); err != nil {
		return nil, err
	}
	note("remove_dependencies", req.RemoveDependencies != nil)
	if ed.addConfigProperties, err = checkConfigProperties("add_config_properties", req.AddConfigProperties); err != nil {
		return nil, err
	}
	note("add_config_properties", req.AddConfigProperties != nil)
	if ed.setMetadata, err = metadataMembers("set_metadata", req.SetMetadata); err != nil {
		return nil, err
	}
	note("set_metadata", req.SetMetadata != nil)
	if ed.removeMetadata, err = checkNames("remove_metadata", req.RemoveMetadata); err != nil {
		return nil, err
	}
	note("remove_metadata", req.RemoveMetadata != nil)
	return ed, nil
}

// editor applies decoded edits to one document.
type editor struct {
	root     *os.Root
	dir      string
	top      *yaml.Node
	changes  []string
	warnings []string
	files    []fileChange
}

func (e *editor) changed(format string, args ...any) {
	e.changes = append(e.changes, fmt.Sprintf(format, args...))
}

func (e *editor) warn(format string, args ...any) {
	e.warnings = append(e.warnings, fmt.Sprintf(format, args...))
}

func (e *editor) apply(ed *editArgs) error {
	for _, step := range []func(*editArgs) error{
		e.service, e.removeInterfaces, e.addInterfaces, e.removeDependencies, e.addDependencies,
		e.workload, e.state, e.configProperties, e.metadata,
	} {
		if err := step(ed); err != nil {
			return err
		}
	}
	for _, f := range ed.given {
		empty := false
		switch f {
		case "add_interfaces":
			empty = len(ed.addInterfaces) == 0
		case "remove_interfaces":
			empty = len(ed.removeInterfaces) == 0
		case "add_dependencies":
			empty = len(ed.addDependencies) == 0
		case "remove_dependencies":
			empty = len(ed.removeDependencies) == 0
		case "add_config_properties":
			empty = len(ed.addConfigProperties) == 0
		case "set_metadata":
			empty = len(ed.setMetadata) == 0
		case "remove_metadata":
			empty = len(ed.removeMetadata) == 0
		}
		if empty {
			e.warn("%s is empty, so it changes nothing", f)
		}
	}
	return nil
}

func (e *editor) service(ed *editArgs) error {
	if ed.req.Name == "" && ed.req.Version == "" && ed.req.Owner == "" {
		return nil
	}
	svc, err := ensureMap(e.top, "service", topLevelOrder)
	if err != nil {
		return &Error{Code: CodeInvalidContract, Message: err.Error()}
	}
	order := []string{"name", "version", "owner"}
	if ed.req.Name != "" && setScalar(svc, "name", strNode(ed.req.Name), order) {
		e.changed("set service name to %q", ed.req.Name)
	}
	if ed.req.Version != "" && setScalar(svc, "version", strNode(ed.req.Version), order) {
		e.changed("set version to %q", ed.req.Version)
	}
	if ed.req.Owner != "" {
		owner := get(svc, "owner")
		if owner == nil || owner.Kind != yaml.MappingNode {
			set(svc, "owner", mapNode("team", ed.req.Owner), order)
			e.changed("set owner team to %q", ed.req.Owner)
		} else if setScalar(owner, "team", strNode(ed.req.Owner), []string{"team", "dri", "contacts"}) {
			e.changed("set owner team to %q", ed.req.Owner)
		}
	}
	return nil
}

func names(seq *yaml.Node, field string) []string {
	var out []string
	if seq != nil {
		for _, it := range seq.Content {
			out = append(out, scalar(get(resolveAlias(it), field)))
		}
	}
	return out
}

func notFound(field, what, name string, have []string) *Error {
	list := "there are none"
	if len(have) > 0 {
		list = "the contract has " + strings.Join(have, ", ")
	}
	e := &Error{Code: CodeNotFound, Field: field, Accepted: have,
		Message: fmt.Sprintf("%s %q is not in the contract (%s).", what, name, list)}
	if s := didYouMean(name, have); s != "" {
		e.DidYouMean = s
		e.Message += fmt.Sprintf(" Did you mean %q?", s)
	}
	e.Message += " Nothing was changed."
	return e
}

func (e *editor) removeInterfaces(ed *editArgs) error {
	seq := get(e.top, "interfaces")
	for _, name := range ed.removeInterfaces {
		i := findItem(seq, "name", name)
		if i < 0 {
			return notFound("remove_interfaces", "interface", name, names(seq, "name"))
		}
		ref := scalar(get(seq.Content[i], "ref"))
		seq.Content = slices.Delete(seq.Content, i, i+1)
		if len(seq.Content) == 0 {
			remove(e.top, "interfaces")
		}
		e.changed("removed interface %q", name)
		if ref != "" {
			e.warn("the spec file %s of removed interface %q is kept; delete it if nothing else uses it", ref, name)
		}
	}
	return nil
}

func (e *editor) addInterfaces(ed *editArgs) error {
	if len(ed.addInterfaces) == 0 {
		return nil
	}
	seq, err := ensureSeq(e.top, "interfaces", topLevelOrder)
	if err != nil {
		return &Error{Code: CodeInvalidContract, Message: err.Error()}
	}
	svc := get(e.top, "service")
	for _, it := range ed.addInterfaces {
		if i := findItem(seq, "name", it.Name); i >= 0 {
			have := seq.Content[i]
			if scalar(get(have, "type")) == it.Type && (it.Visibility == "" || scalar(get(have, "visibility")) == it.Visibility) {
				e.warn("interface %q (%s) is already in the contract; unchanged", it.Name, it.Type)
				continue
			}
			return &Error{Code: CodeAlreadyExists, Field: "add_interfaces", Message: fmt.Sprintf(
				"interface %q already exists as type %s; remove it first (remove_interfaces) to replace it", it.Name, scalar(get(have, "type")))}
		}
		seq.Content = append(seq.Content, interfaceNode(it))
		e.changed("added interface %q (%s)", it.Name, it.Type)
		ref := interfaceRef(it.Name, it.Type)
		rel := join(e.dir, ref)
		if exists(e.root, rel) {
			e.warn("%s exists and is used as the spec of interface %q; it was not replaced", rel, it.Name)
			continue
		}
		data, err := stubSpec(scalar(get(svc, "name")), scalar(get(svc, "version")), it)
		if err != nil {
			return internalError("scaffolding "+rel, err)
		}
		e.files = append(e.files, fileChange{rel: rel, data: data, create: true})
		e.changed("scaffolded %s (%s stub)", ref, it.Type)
	}
	return nil
}

func (e *editor) removeDependencies(ed *editArgs) error {
	seq := get(e.top, "dependencies")
	for _, ref := range ed.removeDependencies {
		i := findItem(seq, "ref", ref)
		if i < 0 {
			i = findItem(seq, "name", ref)
		}
		if i < 0 {
			return notFound("remove_dependencies", "dependency", ref, names(seq, "ref"))
		}
		name := scalar(get(seq.Content[i], "name"))
		seq.Content = slices.Delete(seq.Content, i, i+1)
		if len(seq.Content) == 0 {
			remove(e.top, "dependencies")
		}
		e.changed("removed dependency %q", name)
	}
	return nil
}

func (e *editor) addDependencies(ed *editArgs) error {
	if len(ed.addDependencies) == 0 {
		return nil
	}
	seq, err := ensureSeq(e.top, "dependencies", topLevelOrder)
	if err != nil {
		return &Error{Code: CodeInvalidContract, Message: err.Error()}
	}
	for _, d := range ed.addDependencies {
		n := dependencyNode(d)
		if i := findItem(seq, "name", d.Name); i >= 0 {
			if nodeEqual(seq.Content[i], n) {
				e.warn("dependency %q is already in the contract as given; unchanged", d.Name)
				continue
			}
			return &Error{Code: CodeAlreadyExists, Field: "add_dependencies", Message: fmt.Sprintf(
				"dependency %q already exists (ref %s); remove it first (remove_dependencies) to replace it", d.Name, scalar(get(seq.Content[i], "ref")))}
		}
		seq.Content = append(seq.Content, n)
		e.changed("added dependency %q (%s)", d.Name, d.Ref)
	}
	return nil
}

func (e *editor) workload(ed *editArgs) error {
	if ed.req.Workload != "" && setScalar(e.top, "workload", strNode(ed.req.Workload), topLevelOrder) {
		e.changed("set workload to %s", ed.req.Workload)
	}
	return nil
}

// state re-derives the state section from the current state and the
// requested intent, then writes only the fields that differ.
func (e *editor) state(ed *editArgs) error {
	r := ed.req
	if r.StoresData == nil && r.DataSurvivesRestart == nil && r.DataSharedAcrossInstances == nil && r.DataLossImpact == "" {
		return nil
	}
	cur := get(e.top, "state")
	persistence := get(cur, "persistence")
	curType := scalar(get(cur, "type"))
	si := stateIntent{
		stores:   curType != "" && curType != "stateless",
		survives: scalar(get(persistence, "durability")) == "persistent",
		shared:   scalar(get(persistence, "scope")) == "shared",
	}
	criticality := scalar(get(cur, "dataCriticality"))
	wasStoring := si.stores
	if r.StoresData != nil {
		si.stores = *r.StoresData
	}
	if r.DataSurvivesRestart != nil {
		si.survives = *r.DataSurvivesRestart
	}
	if r.DataSharedAcrossInstances != nil {
		si.shared = *r.DataSharedAcrossInstances
	}
	if !si.stores {
		if r.DataSurvivesRestart != nil && *r.DataSurvivesRestart {
			e.warn("data_survives_restart is ignored: the service stores no data (pass stores_data: true)")
		}
		if r.DataSharedAcrossInstances != nil && *r.DataSharedAcrossInstances {
			e.warn("data_shared_across_instances is ignored: the service stores no data (pass stores_data: true)")
		}
	}
	switch {
	case r.DataLossImpact != "":
		si.criticality = r.DataLossImpact
	case cur != nil && si.stores == wasStoring:
		si.criticality = criticality
	}
	st := mapState(si, curType)
	if cur == nil || cur.Kind != yaml.MappingNode {
		set(e.top, "state", stateNode(st), topLevelOrder)
		e.changed("set state to %s, %s, %s, dataCriticality %s", st.typ, st.scope, st.durability, st.criticality)
		return nil
	}
	stateOrder := []string{"type", "persistence", "dataCriticality"}
	if setScalar(cur, "type", strNode(st.typ), stateOrder) {
		e.changed("set state.type to %s", st.typ)
	}
	p, err := ensureMap(cur, "persistence", stateOrder)
	if err != nil {
		return &Error{Code: CodeInvalidContract, Message: "state." + err.Error()}
	}
	if setScalar(p, "scope", strNode(st.scope), []string{"scope", "durability"}) {
		e.changed("set state.persistence.scope to %s", st.scope)
	}
	if setScalar(p, "durability", strNode(st.durability), []string{"scope", "durability"}) {
		e.changed("set state.persistence.durability to %s", st.durability)
	}
	if setScalar(cur, "dataCriticality", strNode(st.criticality), stateOrder) {
		e.changed("set state.dataCriticality to %s", st.criticality)
	}
	return nil
}

// configProperties writes the properties into the schema file of the
// contract's schema-based configuration, adding a "default" configuration
// (and its schema file) when there is none.
func (e *editor) configProperties(ed *editArgs) error {
	if len(ed.addConfigProperties) == 0 {
		return nil
	}
	const field = "add_config_properties"
	seq := get(e.top, "configurations")
	schemaRef := ""
	if seq != nil {
		if i := findItem(seq, "name", "default"); i >= 0 {
			schemaRef = scalar(get(seq.Content[i], "schema"))
			if schemaRef == "" {
				return &Error{Code: CodeInvalidContract, Field: field, Message: `configuration "default" has no schema file (it uses a ref); add the properties to the referenced contract instead`}
			}
		} else {
			for _, it := range seq.Content {
				if s := scalar(get(resolveAlias(it), "schema")); s != "" {
					schemaRef = s
					break
				}
			}
		}
	}
	if schemaRef == "" {
		s, err := ensureSeq(e.top, "configurations", topLevelOrder)
		if err != nil {
			return &Error{Code: CodeInvalidContract, Message: err.Error()}
		}
		schemaRef = configSchemaPath
		if exists(e.root, join(e.dir, schemaRef)) {
			e.warn("%s already exists; the new configuration \"default\" uses it", join(e.dir, schemaRef))
		}
		s.Content = append(s.Content, mapNode("name", "default", "schema", schemaRef, "required", true))
		e.changed("added configuration \"default\" with schema %s", schemaRef)
	}
	if !filepath.IsLocal(filepath.FromSlash(schemaRef)) {
		return &Error{Code: CodePathOutsideWorkspace, Field: field, Message: fmt.Sprintf(
			"the configuration schema %q is not inside the bundle directory, so it is not edited here", schemaRef)}
	}
	rel := join(e.dir, path.Clean(schemaRef))
	c, changed, warnings, err := configSchemaChange(e.root, rel, field, ed.addConfigProperties)
	if err != nil {
		return err
	}
	e.warnings = append(e.warnings, warnings...)
	for _, ch := range changed {
		e.changed("%s in %s", ch, schemaRef)
	}
	if c != nil {
		e.files = append(e.files, *c)
	}
	return nil
}

func (e *editor) metadata(ed *editArgs) error {
	if len(ed.setMetadata) > 0 {
		md, err := ensureMap(e.top, "metadata", topLevelOrder)
		if err != nil {
			return &Error{Code: CodeInvalidContract, Message: err.Error()}
		}
		for _, m := range ed.setMetadata {
			n := toNode(m.value)
			if old := get(md, m.key); old != nil && nodeEqual(old, n) {
				e.warn("metadata %q already has that value; unchanged", m.key)
				continue
			}
			if old := get(md, m.key); old != nil && old.Kind == yaml.ScalarNode && n.Kind == yaml.ScalarNode {
				setScalar(md, m.key, n, nil)
			} else {
				set(md, m.key, n, nil)
			}
			e.changed("set metadata %q", m.key)
		}
	}
	if len(ed.removeMetadata) > 0 {
		md := get(e.top, "metadata")
		var have []string
		for i := 0; md != nil && i+1 < len(md.Content); i += 2 {
			have = append(have, md.Content[i].Value)
		}
		for _, k := range ed.removeMetadata {
			if !remove(md, k) {
				return notFound("remove_metadata", "metadata key", k, have)
			}
			e.changed("removed metadata %q", k)
		}
		if md != nil && len(md.Content) == 0 {
			remove(e.top, "metadata")
		}
	}
	return nil
}
