package authoring

import (
	"github.com/kubepact/kubepact/bundle/validate"
)

// CreateRequest holds pacto_create's arguments, decoded and checked
// against the tool's input schema by the caller (package mcp): authoring
// checks only what the schema cannot say (names, duplicates, limits). A
// nil slice or *Metadata is an argument not given; an empty one was given
// empty.
type CreateRequest struct {
	Name                      string           `json:"name" jsonschema:"service name (lowercase DNS label); required"`
	Description               string           `json:"description,omitempty" jsonschema:"what the service does, in prose; interfaces, state and workload are inferred from it unless given explicitly"`
	Path                      string           `json:"path,omitempty" jsonschema:"directory for the bundle, inside the workspace; default: the service name"`
	Version                   string           `json:"version,omitempty" jsonschema:"semantic version; default 0.1.0"`
	Owner                     string           `json:"owner,omitempty" jsonschema:"owning team, written as service.owner.team"`
	Interfaces                []InterfaceSpec  `json:"interfaces,omitempty" jsonschema:"array of {name, type (openapi|asyncapi|grpc), visibility? (public|internal)}, or that array JSON-encoded in a string; a stub spec is scaffolded for each"`
	Dependencies              []DependencySpec `json:"dependencies,omitempty" jsonschema:"array of {ref, name?, required? (default true), compatibility? (default: from the fleet service's known version, else ^1.0.0)}, or that array JSON-encoded in a string; with the fleet on, a bare ref such as payments names a fleet service"`
	Workload                  string           `json:"workload,omitempty" jsonschema:"service, job or scheduled; default service"`
	StoresData                *bool            `json:"stores_data,omitempty" jsonschema:"the service keeps data (state.type stateful)"`
	DataSurvivesRestart       *bool            `json:"data_survives_restart,omitempty" jsonschema:"with stores_data: the data is persistent"`
	DataSharedAcrossInstances *bool            `json:"data_shared_across_instances,omitempty" jsonschema:"with stores_data: the data is shared across instances"`
	DataLossImpact            string           `json:"data_loss_impact,omitempty" jsonschema:"low, medium or high: state.dataCriticality"`
	ConfigProperties          []ConfigProperty `json:"config_properties,omitempty" jsonschema:"array of {name, type? (default string), required?, description?}, or that array JSON-encoded in a string; written into configuration/schema.json"`
	Metadata                  *Metadata        `json:"metadata,omitempty" jsonschema:"object of free-form metadata, or that object JSON-encoded in a string"`
	DryRun                    bool             `json:"dry_run,omitempty" jsonschema:"validate and return the result and a diff without writing anything"`
	Overwrite                 bool             `json:"overwrite,omitempty" jsonschema:"replace an existing pacto.yaml at path; without it an existing contract is never overwritten"`
}

// EditRequest holds pacto_edit's arguments.
type EditRequest struct {
	Path                      string           `json:"path,omitempty" jsonschema:"bundle directory containing pacto.yaml, inside the workspace; default ."`
	Name                      string           `json:"name,omitempty" jsonschema:"new service name"`
	Version                   string           `json:"version,omitempty" jsonschema:"new service version"`
	Owner                     string           `json:"owner,omitempty" jsonschema:"new owning team (service.owner.team)"`
	AddInterfaces             []InterfaceSpec  `json:"add_interfaces,omitempty" jsonschema:"array of {name, type (openapi|asyncapi|grpc), visibility?}, or that array JSON-encoded in a string; a stub spec is scaffolded for each unless the file exists"`
	RemoveInterfaces          []string         `json:"remove_interfaces,omitempty" jsonschema:"array of interface names, or that array JSON-encoded in a string; an unknown name is an error"`
	AddDependencies           []DependencySpec `json:"add_dependencies,omitempty" jsonschema:"array of {ref, name?, required? (default true), compatibility? (default: from the fleet service's known version, else ^1.0.0)}, or that array JSON-encoded in a string; with the fleet on, a bare ref such as payments names a fleet service"`
	RemoveDependencies        []string         `json:"remove_dependencies,omitempty" jsonschema:"array of dependency refs (or names), or that array JSON-encoded in a string; an unknown one is an error"`
	Workload                  string           `json:"workload,omitempty" jsonschema:"service, job or scheduled"`
	StoresData                *bool            `json:"stores_data,omitempty" jsonschema:"the service keeps data (state.type stateful)"`
	DataSurvivesRestart       *bool            `json:"data_survives_restart,omitempty" jsonschema:"with stores_data: the data is persistent"`
	DataSharedAcrossInstances *bool            `json:"data_shared_across_instances,omitempty" jsonschema:"with stores_data: the data is shared across instances"`
	DataLossImpact            string           `json:"data_loss_impact,omitempty" jsonschema:"low, medium or high: state.dataCriticality"`
	AddConfigProperties       []ConfigProperty `json:"add_config_properties,omitempty" jsonschema:"array of {name, type? (default string), required?, description?}, or that array JSON-encoded in a string; written into the configuration schema file"`
	SetMetadata               *Metadata        `json:"set_metadata,omitempty" jsonschema:"object of metadata keys to set, or that object JSON-encoded in a string"`
	RemoveMetadata            []string         `json:"remove_metadata,omitempty" jsonschema:"array of metadata keys to remove, or that array JSON-encoded in a string; an unknown key is an error"`
	DryRun                    bool             `json:"dry_run,omitempty" jsonschema:"validate and return the result and a diff without writing anything"`
}

// CheckRequest holds pacto_check's arguments.
type CheckRequest struct {
	Path string `json:"path,omitempty" jsonschema:"bundle directory containing pacto.yaml, inside the workspace; default ."`
}

// InterfaceSpec is one item of interfaces / add_interfaces.
type InterfaceSpec struct {
	Name       string `json:"name"`
	Type       string `json:"type"`
	Visibility string `json:"visibility,omitempty"`
}

// DependencySpec is one item of dependencies / add_dependencies.
type DependencySpec struct {
	Name          string `json:"name,omitempty"`
	Ref           string `json:"ref"`
	Required      *bool  `json:"required,omitempty"`
	Compatibility string `json:"compatibility,omitempty"`
}

// ConfigProperty is one item of config_properties / add_config_properties.
type ConfigProperty struct {
	Name        string `json:"name"`
	Type        string `json:"type,omitempty"`
	Required    *bool  `json:"required,omitempty"`
	Description string `json:"description,omitempty"`
}

// Summary is a short overview of a contract.
type Summary struct {
	Name         string   `json:"name"`
	Version      string   `json:"version"`
	Owner        string   `json:"owner,omitempty"`
	Interfaces   []string `json:"interfaces"`   // "name (type)"
	Dependencies []string `json:"dependencies"` // refs
	Workload     string   `json:"workload,omitempty"`
	StateType    string   `json:"stateType,omitempty"`
	// Sections maps every top-level section to "present" or "absent".
	Sections map[string]string `json:"sections"`
}

// CreateResult is pacto_create's output.
type CreateResult struct {
	// Path is the bundle directory, relative to the workspace.
	Path    string  `json:"path"`
	Summary Summary `json:"summary"`
	// Derived lists what was inferred or defaulted, and why.
	Derived []string `json:"derived"`
	// FileCount is len(Files).
	FileCount int          `json:"fileCount"`
	Files     []FileChange `json:"files"`
	DryRun    bool         `json:"dryRun"`
	// Diff is a unified diff of every file, with dry_run only.
	Diff     string   `json:"diff,omitempty"`
	Warnings []string `json:"warnings"`
}

// EditResult is pacto_edit's output.
type EditResult struct {
	Path    string  `json:"path"`
	Summary Summary `json:"summary"`
	// Changes lists each effective change; [] when nothing changed.
	Changes  []string     `json:"changes"`
	Files    []FileChange `json:"files"`
	DryRun   bool         `json:"dryRun"`
	Diff     string       `json:"diff,omitempty"`
	Warnings []string     `json:"warnings"`
}

// CheckResult is pacto_check's output.
type CheckResult struct {
	Valid bool `json:"valid"`
	// CouldNotCheck is true when the only errors are REF_UNREACHABLE: a
	// referenced bundle's registry could not be reached, so the contract
	// is not known to be invalid.
	CouldNotCheck bool               `json:"couldNotCheck,omitempty" jsonschema:"true when the only errors are REF_UNREACHABLE: not known to be invalid; check again when the registry is reachable"`
	Summary       *Summary           `json:"summary,omitempty"`
	Errors        []validate.Finding `json:"errors"`
	Warnings      []validate.Finding `json:"warnings"`
	Suggestions   []Suggestion       `json:"suggestions"`
}

// Suggestion is an improvement for a valid contract.
type Suggestion struct {
	Message string `json:"message"`
	// ToolCall, when set, is a pacto_edit call that applies the suggestion;
	// its params are valid pacto_edit arguments as they stand.
	ToolCall *ToolCall `json:"toolCall,omitempty"`
}

// ToolCall names a tool and the arguments to call it with.
type ToolCall struct {
	Tool   string         `json:"tool"`
	Params map[string]any `json:"params"`
}
