package authoring

import (
	"context"
	"fmt"
	"os"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/kubepact/kubepact/bundle/contract"
)

// Create writes a new contract (pacto.yaml, stub specs for its interfaces
// and its configuration schema) from intent-level arguments. An existing
// pacto.yaml is replaced only with Overwrite; existing spec and schema files
// are kept (a schema gains the requested properties). The result is validated
// as it will be on disk before anything is written.
func (a *Authoring) Create(ctx context.Context, req CreateRequest) (*CreateResult, error) {
	plan, err := a.planCreate(req)
	if err != nil {
		return nil, err
	}
	root, err := a.openRoot()
	if err != nil {
		return nil, err
	}
	defer root.Close()

	manifest := join(plan.dir, contract.FileName)
	old, err := readIfExists(root, manifest)
	if err != nil {
		return nil, err
	}
	if old != nil && !req.Overwrite {
		return nil, &Error{Code: CodeAlreadyExists, Field: "path", Message: fmt.Sprintf(
			"%s already exists; use pacto_edit to change it, or pass overwrite: true to replace it", manifest)}
	}
	var changes []fileChange
	var warnings []string
	for _, it := range plan.interfaces {
		rel := join(plan.dir, interfaceRef(it.Name, it.Type))
		if exists(root, rel) {
			warnings = append(warnings, fmt.Sprintf("%s exists and is used as the %s spec of interface %q; it was not replaced", rel, it.Type, it.Name))
			continue
		}
		data, err := stubSpec(req.Name, plan.version, it)
		if err != nil {
			return nil, internalError("scaffolding "+rel, err)
		}
		changes = append(changes, fileChange{rel: rel, data: data, create: true})
	}
	if len(plan.config) > 0 {
		c, _, w, err := configSchemaChange(root, join(plan.dir, configSchemaPath), "config_properties", plan.config)
		if err != nil {
			return nil, err
		}
		warnings = append(warnings, w...)
		if c != nil {
			changes = append(changes, *c)
		}
	}
	data, err := encodeDocument(plan.doc)
	if err != nil {
		return nil, internalError("rendering pacto.yaml", err)
	}
	// A new pacto.yaml is placed only where none exists at the moment of
	// the write, not just when this call looked: overwrite is the only way
	// to replace one.
	changes = append(changes, fileChange{rel: manifest, data: data, old: old, create: old == nil})

	r := a.validateResult(ctx, root, plan.dir, changes)
	if !r.Valid() {
		return nil, invalidContract("the contract would not be valid, so nothing was written", r)
	}
	for _, w := range r.Warnings {
		warnings = append(warnings, fmt.Sprintf("%s %s: %s", w.Code, w.Path, w.Message))
	}
	res := &CreateResult{
		Path:      plan.dir,
		Summary:   summarize(plan.doc),
		Derived:   plan.derived,
		FileCount: len(changes),
		Files:     reportFiles(changes),
		DryRun:    req.DryRun,
		Warnings:  warnings,
	}
	if res.Warnings == nil {
		res.Warnings = []string{}
	}
	if req.DryRun {
		res.Diff = diffAll(changes)
		return res, nil
	}
	if err := a.writeAll(ctx, root, changes); err != nil {
		return nil, err
	}
	return res, nil
}

type createPlan struct {
	dir        string
	version    string
	doc        *yaml.Node
	interfaces []InterfaceSpec
	config     []ConfigProperty
	derived    []string
}

// planCreate checks the arguments and builds the new pacto.yaml in memory.
func (a *Authoring) planCreate(req CreateRequest) (*createPlan, error) {
	if strings.TrimSpace(req.Name) == "" {
		return nil, argError("name", `"name" is required: the service name, e.g. "payments"`)
	}
	if err := oneOf("workload", req.Workload, "service", "job", "scheduled"); err != nil {
		return nil, err
	}
	if err := oneOf("data_loss_impact", req.DataLossImpact, "low", "medium", "high"); err != nil {
		return nil, err
	}
	interfaces, err := checkInterfaces("interfaces", req.Interfaces)
	if err != nil {
		return nil, err
	}
	haveInterfaces := req.Interfaces != nil
	deps, err := checkDependencies("dependencies", req.Dependencies)
	if err != nil {
		return nil, err
	}
	config, err := checkConfigProperties("config_properties", req.ConfigProperties)
	if err != nil {
		return nil, err
	}
	metadata, err := metadataMembers("metadata", req.Metadata)
	if err != nil {
		return nil, err
	}
	pathArg := req.Path
	if pathArg == "" {
		pathArg = req.Name
	}
	dir, err := a.ws.Rel("path", pathArg)
	if err != nil {
		return nil, err
	}

	p := &createPlan{dir: dir, version: req.Version}
	if p.derived, err = a.completeDependencies("dependencies", deps); err != nil {
		return nil, err
	}
	inf := infer(req.Description)
	if p.version == "" {
		p.version = "0.1.0"
		p.derived = append(p.derived, "version 0.1.0: default")
	}
	if !haveInterfaces {
		for _, it := range inf.interfaces {
			interfaces = append(interfaces, InterfaceSpec{Name: it.name, Type: it.typ, Visibility: it.visibility})
		}
	}
	si := stateIntent{stores: inf.stores, survives: inf.survives, shared: inf.shared, criticality: req.DataLossImpact}
	if req.StoresData != nil {
		si.stores = *req.StoresData
	}
	if req.DataSurvivesRestart != nil {
		si.survives = *req.DataSurvivesRestart
	}
	if req.DataSharedAcrossInstances != nil {
		si.shared = *req.DataSharedAcrossInstances
	}
	for _, d := range inf.derived {
		if strings.HasPrefix(d, "interface ") && haveInterfaces {
			continue // explicit interfaces win
		}
		if strings.HasPrefix(d, "workload ") && req.Workload != "" {
			continue
		}
		p.derived = append(p.derived, d)
	}
	workload := req.Workload
	if workload == "" {
		workload = inf.workload
	}
	if workload == "" {
		workload = "service"
		p.derived = append(p.derived, "workload service: default")
	}
	st := mapState(si, "")
	if req.StoresData == nil && !inf.stores {
		p.derived = append(p.derived, "state stateless: default (nothing says the service stores data)")
	}
	p.interfaces, p.config = interfaces, config

	service := mapNode("name", req.Name, "version", p.version)
	if req.Owner != "" {
		service.Content = append(service.Content, strNode("owner"), mapNode("team", req.Owner))
	}
	version := strNode(contract.Version)
	version.Style = yaml.DoubleQuotedStyle
	root := mapNode("pactoVersion", version, "service", service)
	if len(interfaces) > 0 {
		seq := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
		for _, it := range interfaces {
			seq.Content = append(seq.Content, interfaceNode(it))
		}
		root.Content = append(root.Content, strNode("interfaces"), seq)
	}
	if len(config) > 0 {
		root.Content = append(root.Content, strNode("configurations"), &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq",
			Content: []*yaml.Node{mapNode("name", "default", "schema", configSchemaPath, "required", true)}})
	}
	if len(deps) > 0 {
		seq := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
		for _, d := range deps {
			seq.Content = append(seq.Content, dependencyNode(d))
		}
		root.Content = append(root.Content, strNode("dependencies"), seq)
	}
	root.Content = append(root.Content, strNode("state"), stateNode(st))
	root.Content = append(root.Content, strNode("workload"), strNode(workload))
	if len(metadata) > 0 {
		root.Content = append(root.Content, strNode("metadata"), toNode(&object{members: metadata}))
	}
	p.doc = &yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{root}}
	return p, nil
}

func interfaceNode(it InterfaceSpec) *yaml.Node {
	n := mapNode("name", it.Name, "type", it.Type, "ref", interfaceRef(it.Name, it.Type))
	if it.Visibility != "" {
		n.Content = append(n.Content, strNode("visibility"), strNode(it.Visibility))
	}
	return n
}

func dependencyNode(d DependencySpec) *yaml.Node {
	return mapNode("name", d.Name, "ref", d.Ref, "required", *d.Required, "compatibility", d.Compatibility)
}

func stateNode(st contractState) *yaml.Node {
	return mapNode(
		"type", st.typ,
		"persistence", mapNode("scope", st.scope, "durability", st.durability),
		"dataCriticality", st.criticality,
	)
}

// configSchemaChange returns the write that puts props into the JSON schema
// at rel: a new schema when the file does not exist, the existing one with
// the properties merged in otherwise (nil when nothing changes).
func configSchemaChange(root *os.Root, rel, field string, props []ConfigProperty) (c *fileChange, changed, warnings []string, err error) {
	old, err := readIfExists(root, rel)
	if err != nil {
		return nil, nil, nil, err
	}
	schema := newConfigSchema()
	if old != nil {
		v, err := parseOrdered(old)
		obj, ok := v.(*object)
		if err != nil || !ok {
			why := "its top level is not an object"
			if err != nil {
				why = err.Error()
			}
			return nil, nil, nil, &Error{Code: CodeInvalidContract, Field: field, Message: fmt.Sprintf(
				"%s is not a JSON schema object (%s); fix or remove it before adding config properties", rel, why)}
		}
		schema = obj
	}
	changed, unchanged, err := addConfigProperties(field, schema, props)
	if err != nil {
		return nil, nil, nil, err
	}
	for _, u := range unchanged {
		warnings = append(warnings, fmt.Sprintf("config property %q is already in %s with the same definition; unchanged", u, rel))
	}
	if len(changed) == 0 {
		return nil, nil, warnings, nil
	}
	return &fileChange{rel: rel, data: encodeOrdered(schema), old: old, create: old == nil}, changed, warnings, nil
}
