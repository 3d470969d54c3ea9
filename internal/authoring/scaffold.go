package authoring

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"unicode"

	"go.yaml.in/yaml/v3"
)

// Stub files scaffolded for new interfaces and configuration properties.
// They are minimal but real documents of their type, so validation of the
// written bundle passes without pretending a file exists.

const configSchemaPath = "configuration/schema.json"

// interfaceRef is the bundle-relative spec path derived for an interface.
func interfaceRef(name, typ string) string {
	if typ == "grpc" {
		return "interfaces/" + name + ".proto"
	}
	return "interfaces/" + name + ".yaml"
}

// safeName restricts names that become file names: no separators, no dot
// segments, nothing a filesystem or a shell would treat specially.
var safeName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

func stubSpec(service, version string, iface InterfaceSpec) ([]byte, error) {
	title := service + " " + iface.Name
	switch iface.Type {
	case "openapi":
		doc := mapNode(
			"openapi", "3.1.0",
			"info", mapNode("title", title, "version", version),
			"paths", mapNode("/health", mapNode("get", mapNode(
				"operationId", identifier(iface.Name, false)+"Health",
				"summary", "Report whether the service is healthy.",
				"responses", mapNode("200", mapNode("description", "The service is healthy.")),
			))),
		)
		return encodeDocument(&yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{doc}})
	case "asyncapi":
		channel := identifier(iface.Name, false)
		doc := mapNode(
			"asyncapi", "3.0.0",
			"info", mapNode("title", title, "version", version),
			"channels", mapNode(channel, mapNode(
				"address", service+"."+iface.Name,
				"messages", mapNode("event", mapNode(
					"payload", mapNode("type", "object"),
				)),
			)),
			"operations", mapNode("publish"+identifier(iface.Name, true), mapNode(
				"action", "send",
				"channel", mapNode("$ref", "#/channels/"+channel),
				"messages", &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Content: []*yaml.Node{
					mapNode("$ref", "#/channels/"+channel+"/messages/event"),
				}},
			)),
		)
		return encodeDocument(&yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{doc}})
	case "grpc":
		pkg := strings.ToLower(identifier(service, false))
		svc := identifier(iface.Name, true)
		if svc == "CheckRequest" || svc == "CheckResponse" {
			// The stub's own message names: one package cannot hold both.
			svc += "Service"
		}
		return fmt.Appendf(nil, `syntax = "proto3";

package %s.v1;

// %s is a placeholder scaffolded by kubepact: replace Check with the
// service's real RPCs.
service %s {
  rpc Check(CheckRequest) returns (CheckResponse);
}

message CheckRequest {}

message CheckResponse {
  string status = 1;
}
`, pkg, svc, svc), nil
	}
	return nil, fmt.Errorf("no stub for interface type %q", iface.Type)
}

// identifier turns a name like "grpc-api" into grpcApi (or GrpcApi when
// exported), valid in proto, AsyncAPI ids and OpenAPI operationIds.
func identifier(name string, exported bool) string {
	var b strings.Builder
	upper := exported
	for _, r := range name {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) || r > unicode.MaxASCII {
			upper = b.Len() > 0 || exported
			continue
		}
		if b.Len() == 0 && unicode.IsDigit(r) {
			b.WriteByte('x')
		}
		if upper {
			r = unicode.ToUpper(r)
			upper = false
		}
		b.WriteRune(r)
	}
	if b.Len() == 0 {
		return "X"
	}
	return b.String()
}

// newConfigSchema is an empty draft 2020-12 object schema.
func newConfigSchema() *object {
	return &object{members: []member{
		{"$schema", "https://json-schema.org/draft/2020-12/schema"},
		{"type", "object"},
		{"properties", &object{}},
		{"additionalProperties", false},
	}}
}

// addConfigProperties merges props into schema (an ordered JSON object) and
// returns what changed. A property that exists with the same definition is
// reported in unchanged; one that exists with a different type is an error.
func addConfigProperties(field string, schema *object, props []ConfigProperty) (changed, unchanged []string, err error) {
	propsV, ok := schema.get("properties")
	if !ok {
		propsV = &object{}
		schema.set("properties", propsV)
	}
	properties, ok := propsV.(*object)
	if !ok {
		return nil, nil, &Error{Code: CodeInvalidContract, Field: field,
			Message: "the configuration schema's \"properties\" is not an object; edit it by hand"}
	}
	var required []any
	if r, ok := schema.get("required"); ok {
		if required, ok = r.([]any); !ok {
			return nil, nil, &Error{Code: CodeInvalidContract, Field: field,
				Message: "the configuration schema's \"required\" is not a list; edit it by hand"}
		}
	}
	isRequired := func(name string) bool {
		for _, r := range required {
			if r == name {
				return true
			}
		}
		return false
	}
	for _, p := range props {
		typ := p.Type
		if typ == "" {
			typ = "string"
		}
		if existing, ok := properties.get(p.Name); ok {
			def, _ := existing.(*object)
			var have any
			if def != nil {
				have, _ = def.get("type")
			}
			if have != typ {
				return nil, nil, &Error{Code: CodeAlreadyExists, Field: field, Message: fmt.Sprintf(
					"config property %q already exists with type %v; it cannot be re-added as %s", p.Name, jsonText(have), typ)}
			}
			if p.Required != nil && *p.Required != isRequired(p.Name) {
				required = setRequired(required, p.Name, *p.Required)
				changed = append(changed, fmt.Sprintf("set config property %q required to %t", p.Name, *p.Required))
				continue
			}
			unchanged = append(unchanged, p.Name)
			continue
		}
		def := &object{members: []member{{"type", typ}}}
		if p.Description != "" {
			def.set("description", p.Description)
		}
		properties.set(p.Name, def)
		req := p.Required != nil && *p.Required
		if req {
			required = setRequired(required, p.Name, true)
		}
		changed = append(changed, fmt.Sprintf("added config property %q (%s%s)", p.Name, typ, map[bool]string{true: ", required"}[req]))
	}
	if len(required) > 0 {
		schema.setAfter("required", required, "properties")
	} else if _, ok := schema.get("required"); ok {
		schema.set("required", []any{})
	}
	return changed, unchanged, nil
}

func setRequired(required []any, name string, on bool) []any {
	out := required[:0:0]
	for _, r := range required {
		if r != name {
			out = append(out, r)
		}
	}
	if on {
		out = append(out, name)
	}
	return out
}

func jsonText(v any) string {
	if v == nil {
		return "(none)"
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
