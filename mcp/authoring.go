package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/kubepact/kubepact/bundle"
	"github.com/kubepact/kubepact/bundle/contract"
	"github.com/kubepact/kubepact/bundle/validate"
	"github.com/kubepact/kubepact/internal/authoring"
)

// Structured authoring arguments: a native JSON array (or object) or the
// same JSON encoded in a string. The argument decoder (args.go) takes
// both, checks them against these schemas and hands internal/authoring typed
// values; authoring checks only what a schema cannot say (a name usable as
// a file name, duplicates), naming the path (add_interfaces[1].name).
var (
	arrayArgs = map[string]*jsonschema.Schema{
		"interfaces":            itemSchema[authoring.InterfaceSpec](interfaceEnums),
		"add_interfaces":        itemSchema[authoring.InterfaceSpec](interfaceEnums),
		"dependencies":          itemSchema[authoring.DependencySpec](nil),
		"add_dependencies":      itemSchema[authoring.DependencySpec](nil),
		"config_properties":     itemSchema[authoring.ConfigProperty](configEnums),
		"add_config_properties": itemSchema[authoring.ConfigProperty](configEnums),
		"remove_interfaces":     {Type: "string"},
		"remove_dependencies":   {Type: "string"},
		"remove_metadata":       {Type: "string"},
	}
	objectArgs = []string{"metadata", "set_metadata"}

	interfaceEnums = map[string][]any{"type": {"openapi", "asyncapi", "grpc"}, "visibility": {"public", "internal"}}
	configEnums    = map[string][]any{"type": {"string", "integer", "number", "boolean"}}
	scalarEnums    = map[string][]any{"workload": {"service", "job", "scheduled"}, "data_loss_impact": {"low", "medium", "high"}}

	// metadataSchema stops inference from reading authoring.Metadata's
	// (unexported) fields; authoringInput writes the property's schema.
	metadataSchema = map[reflect.Type]*jsonschema.Schema{reflect.TypeFor[authoring.Metadata](): {}}
)

// itemSchema infers the schema of one structured item and adds enums.
func itemSchema[T any](enums map[string][]any) *jsonschema.Schema {
	s, err := jsonschema.For[T](nil)
	if err != nil {
		panic(err) // static types: fails in every test run or never
	}
	for name, values := range enums {
		if p := s.Properties[name]; p != nil {
			p.Enum = values
		}
	}
	return s
}

// authoringInput infers the input schema of an authoring request type and
// narrows what inference cannot know: which raw fields take arrays and
// which objects (each also as a JSON-encoded string), and the enums.
func authoringInput[T any]() (*jsonschema.Schema, error) {
	s, err := jsonschema.For[T](&jsonschema.ForOptions{TypeSchemas: metadataSchema})
	if err != nil {
		return nil, err
	}
	for name, p := range s.Properties {
		if items, ok := arrayArgs[name]; ok {
			p = &jsonschema.Schema{Description: p.Description, Types: []string{"array", "string"}, Items: items}
			s.Properties[name] = p
		}
		if slices.Contains(objectArgs, name) {
			p = &jsonschema.Schema{Description: p.Description, Types: []string{"object", "string"}}
			s.Properties[name] = p
		}
		if values, ok := scalarEnums[name]; ok {
			p.Enum = values
		}
	}
	return s, nil
}

// SchemaArgs are pacto_schema's arguments.
type SchemaArgs struct {
	Path string `json:"path,omitempty" jsonschema:"dotted field path to explain, e.g. state.persistence.durability or interfaces.type; omit for the whole schema"`
}

// SchemaResult is pacto_schema's answer: the whole schema, or one field.
type SchemaResult struct {
	Description string               `json:"description" jsonschema:"what a Pacto contract is"`
	Docs        string               `json:"docs" jsonschema:"where the format is documented"`
	Version     string               `json:"pactoVersion" jsonschema:"the contract format version the schema describes"`
	JSONSchema  json.RawMessage      `json:"jsonSchema,omitempty" jsonschema:"the embedded JSON Schema (draft 2020-12) of pacto.yaml, without path"`
	Field       *authoring.FieldHelp `json:"field,omitempty" jsonschema:"the explained field, with path"`
}

const pactoDescription = "A Pacto contract (pacto.yaml at the root of a bundle) describes a service operationally: identity and owner, interfaces (openapi, asyncapi, grpc specs inside the bundle), configuration schemas, policies, dependencies on other contracts, runtime state semantics, workload kind, capabilities and readiness."

// authoringFamily is pacto_create, pacto_edit, pacto_check and
// pacto_schema over one internal/authoring instance confined to the workspace.
var authoringFamily = &family{
	name:    FamilyAuthoring,
	summary: "authoring — pacto_create, pacto_edit, pacto_check and pacto_schema create, edit, validate and explain Pacto contracts (pacto.yaml bundles) in the local workspace; they never touch a running service (validating may pull referenced policy and configuration bundles from a registry when one is configured)",
	build: func(_ context.Context, env *familyEnv) (*familyParts, error) {
		tools, err := authoringTools(env)
		if err != nil {
			return nil, err
		}
		return &familyParts{tools: tools}, nil
	},
}

func authoringTools(env *familyEnv) ([]*tool, error) {
	opts := env.opts
	// Validating follows a contract's policy and configuration refs; with a
	// registry client configured, that reaches registries: open world.
	refsReachRegistries := opts.Registry != nil
	a, err := authoring.New(&authoring.Options{
		Workspace: opts.Workspace,
		// References are followed from each bundle's own directory, never
		// out of the workspace, and to registries only through the
		// operator-configured client.
		ResolverFor: func(dir string) validate.Resolver {
			return bundle.NewResolver(&bundle.ResolverOptions{BaseDir: dir, Root: opts.Workspace, Client: opts.Registry})
		},
		Dependencies: env.fleetDependencies(),
	})
	if err != nil {
		return nil, err
	}
	createIn, err := authoringInput[authoring.CreateRequest]()
	if err != nil {
		return nil, err
	}
	editIn, err := authoringInput[authoring.EditRequest]()
	if err != nil {
		return nil, err
	}
	create, err := newTool(toolSpec{
		name:  "pacto_create",
		title: "Create a Pacto contract",
		description: "Create a new Pacto contract bundle from intent-level inputs: name (required), a prose description " +
			"(interfaces, state and workload are inferred from it unless given), interfaces, dependencies, configuration properties, " +
			"runtime-state flags and metadata. Writes pacto.yaml plus stub specs for every interface and the configuration schema below " +
			"the workspace, atomically, after validating the real result; refuses to replace an existing pacto.yaml unless overwrite is true. " +
			"dry_run returns the result and a diff without writing. Structured arguments take a JSON array/object or the same JSON as a string.",
		hints: hints{destructive: true, idempotent: true, openWorld: refsReachRegistries}, // overwrite:true replaces a contract
		input: createIn,
	}, func(ctx context.Context, in authoring.CreateRequest) (*authoring.CreateResult, string, error) {
		res, err := a.Create(ctx, in)
		if err != nil {
			return nil, "", err
		}
		verb := "Created"
		if res.DryRun {
			verb = "Dry run: would create"
		}
		return res, fmt.Sprintf("%s contract %s %s at %s (%d files).%s", verb, res.Summary.Name, res.Summary.Version, res.Path, res.FileCount, warnings(res.Warnings)), nil
	})
	if err != nil {
		return nil, err
	}
	edit, err := newTool(toolSpec{
		name:  "pacto_edit",
		title: "Edit a Pacto contract",
		description: "Edit an existing pacto.yaml below the workspace: rename, version, owner, add/remove interfaces and dependencies, " +
			"workload, runtime-state flags, configuration properties and metadata. Keeps comments, key order and scalar text; scaffolds stub specs " +
			"for added interfaces; validates the real result and writes atomically. Lists every change (changes is [] with a warning when " +
			"nothing changed). dry_run returns the result and a diff without writing. Structured arguments take a JSON array/object or the same JSON as a string.",
		hints: hints{destructive: true, openWorld: refsReachRegistries}, // removes interfaces, dependencies, metadata
		input: editIn,
	}, func(ctx context.Context, in authoring.EditRequest) (*authoring.EditResult, string, error) {
		res, err := a.Edit(ctx, in)
		if err != nil {
			return nil, "", err
		}
		verb := "Edited"
		if res.DryRun {
			verb = "Dry run: would edit"
		}
		return res, fmt.Sprintf("%s %s: %d change(s)%s.%s", verb, res.Path, len(res.Changes), listed(res.Changes), warnings(res.Warnings)), nil
	})
	if err != nil {
		return nil, err
	}
	check, err := newTool(toolSpec{
		name:  "pacto_check",
		title: "Validate a Pacto contract",
		description: "Validate the pacto.yaml in a bundle directory below the workspace (structure, cross-field rules and referenced files) " +
			"and return errors, warnings, a summary and suggestions. A suggestion's toolCall holds pacto_edit arguments that can be sent as they are.",
		hints: hints{readOnly: true, idempotent: true, openWorld: refsReachRegistries},
	}, func(ctx context.Context, in authoring.CheckRequest) (*authoring.CheckResult, string, error) {
		res, err := a.Check(ctx, in)
		if err != nil {
			return nil, "", err
		}
		if res.CouldNotCheck {
			return res, fmt.Sprintf("Contract could not be checked: %d referenced bundle(s) could not be fetched (REF_UNREACHABLE: the registry was not reachable); it is not known to be invalid. Check again when the registry is reachable.", len(res.Errors)), nil
		}
		verdict := "valid"
		if !res.Valid {
			verdict = "invalid"
		}
		return res, fmt.Sprintf("Contract is %s: %d error(s), %d warning(s), %d suggestion(s).", verdict, len(res.Errors), len(res.Warnings), len(res.Suggestions)), nil
	})
	if err != nil {
		return nil, err
	}
	schema, err := newTool(toolSpec{
		name:  "pacto_schema",
		title: "Explain the Pacto contract schema",
		description: "Return the Pacto v" + contract.Version + " contract format and its full JSON Schema; with path (e.g. state.persistence.durability) " +
			"explain just that field: type, allowed values, meaning and an example. Call it before writing a contract by hand.",
		hints: hints{readOnly: true, idempotent: true},
	}, func(_ context.Context, in SchemaArgs) (*SchemaResult, string, error) {
		res := &SchemaResult{Description: pactoDescription, Docs: "https://pacto.run", Version: contract.Version}
		if in.Path == "" {
			res.JSONSchema = json.RawMessage(contract.Schema)
			return res, "The Pacto v" + contract.Version + " contract schema (JSON Schema 2020-12) is in structuredContent.jsonSchema; pass path to explain one field.", nil
		}
		help, err := authoring.ExplainField(in.Path)
		if err != nil {
			return nil, "", err
		}
		res.Field = help
		return res, fieldSummary(help), nil
	})
	if err != nil {
		return nil, err
	}
	// They read and validate whole bundles (and may pull what they refer
	// to): calls the budget bounds.
	create.expensive, edit.expensive, check.expensive = true, true, true
	return []*tool{create, edit, check, schema}, nil
}

func fieldSummary(h *authoring.FieldHelp) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s", h.Path, h.Type)
	if len(h.AllowedValues) > 0 {
		vals := make([]string, len(h.AllowedValues))
		for i, v := range h.AllowedValues {
			vals[i] = fmt.Sprint(v)
		}
		fmt.Fprintf(&b, ", one of %s", strings.Join(vals, ", "))
	}
	if h.Required {
		b.WriteString(", required")
	}
	if h.Description != "" {
		fmt.Fprintf(&b, ". %s", h.Description)
	}
	return b.String()
}

func listed(items []string) string {
	if len(items) == 0 {
		return ""
	}
	const most = 5
	if len(items) > most {
		return ": " + strings.Join(items[:most], "; ") + fmt.Sprintf("; and %d more", len(items)-most)
	}
	return ": " + strings.Join(items, "; ")
}

func warnings(ws []string) string {
	if len(ws) == 0 {
		return ""
	}
	return " Warnings: " + strings.Join(ws, "; ")
}
