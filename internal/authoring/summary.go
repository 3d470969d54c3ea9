package authoring

import (
	"fmt"

	"go.yaml.in/yaml/v3"
)

// summarize reads a Summary off a parsed pacto.yaml. It works on the node
// tree, so it also describes a contract that does not validate.
func summarize(doc *yaml.Node) Summary {
	root := doc.Content[0]
	service := get(root, "service")
	s := Summary{
		Name:         scalar(get(service, "name")),
		Version:      scalar(get(service, "version")),
		Interfaces:   []string{},
		Dependencies: []string{},
		Workload:     scalar(get(root, "workload")),
		StateType:    scalar(get(get(root, "state"), "type")),
		Sections:     map[string]string{},
	}
	if owner := get(service, "owner"); owner != nil {
		switch {
		case owner.Kind == yaml.ScalarNode:
			s.Owner = owner.Value
		case scalar(get(owner, "team")) != "":
			s.Owner = scalar(get(owner, "team"))
		default:
			s.Owner = scalar(get(owner, "dri"))
		}
	}
	if seq := get(root, "interfaces"); seq != nil {
		for _, it := range seq.Content {
			it = resolveAlias(it)
			s.Interfaces = append(s.Interfaces, fmt.Sprintf("%s (%s)", scalar(get(it, "name")), scalar(get(it, "type"))))
		}
	}
	if seq := get(root, "dependencies"); seq != nil {
		for _, it := range seq.Content {
			s.Dependencies = append(s.Dependencies, scalar(get(resolveAlias(it), "ref")))
		}
	}
	for _, k := range topLevelOrder[2:] {
		state := "absent"
		if v := get(root, k); v != nil && (v.Kind == yaml.ScalarNode || len(v.Content) > 0) {
			state = "present"
		}
		s.Sections[k] = state
	}
	return s
}
