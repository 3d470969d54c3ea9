package contract

// FileName is the name of the contract file at the root of every bundle.
const FileName = "pacto.yaml"

// Version is the only pactoVersion this package understands.
const Version = "2.0"

// Contract is a pacto.yaml document of pactoVersion "2.0".
//
// Optional sections are nil or empty when absent. Metadata, Extensions and
// Configuration.Values are free-form and hold JSON-compatible values
// (string, bool, int64, float64, nil, []any, map[string]any).
type Contract struct {
	PactoVersion   string          `json:"pactoVersion" yaml:"pactoVersion"`
	Service        Service         `json:"service" yaml:"service"`
	Interfaces     []Interface     `json:"interfaces,omitempty" yaml:"interfaces,omitempty"`
	Configurations []Configuration `json:"configurations,omitempty" yaml:"configurations,omitempty"`
	Policies       []Policy        `json:"policies,omitempty" yaml:"policies,omitempty"`
	Dependencies   []Dependency    `json:"dependencies,omitempty" yaml:"dependencies,omitempty"`
	// Workload is one of "service", "job" or "scheduled"; empty when absent.
	Workload     string         `json:"workload,omitempty" yaml:"workload,omitempty"`
	State        *State         `json:"state,omitempty" yaml:"state,omitempty"`
	Capabilities []Capability   `json:"capabilities,omitempty" yaml:"capabilities,omitempty"`
	Readiness    *Readiness     `json:"readiness,omitempty" yaml:"readiness,omitempty"`
	Metadata     map[string]any `json:"metadata,omitempty" yaml:"metadata,omitempty"`
	Extensions   map[string]any `json:"extensions,omitempty" yaml:"extensions,omitempty"`
}

// Service identifies the service the contract describes.
type Service struct {
	// Name is a DNS-label-like name: lowercase letters, digits and '-'.
	Name string `json:"name" yaml:"name"`
	// Version is the service's semantic version.
	Version string `json:"version" yaml:"version"`
	Owner   *Owner `json:"owner,omitempty" yaml:"owner,omitempty"`
}

// Owner says who owns the service. Its canonical key is Team when set, else DRI.
type Owner struct {
	Team     string    `json:"team,omitempty" yaml:"team,omitempty"`
	DRI      string    `json:"dri,omitempty" yaml:"dri,omitempty"`
	Contacts []Contact `json:"contacts,omitempty" yaml:"contacts,omitempty"`
}

// Contact is one way to reach the owner. Contacts are a set: order carries no
// meaning and duplicates count once.
type Contact struct {
	// Type is one of email, url, group, oncall, chat, other.
	Type  string `json:"type" yaml:"type"`
	Value string `json:"value" yaml:"value"`
	// Purpose is one of ownership, support, escalation, oncall, notifications.
	Purpose string `json:"purpose,omitempty" yaml:"purpose,omitempty"`
}

// Interface is an API the service exposes, described by a spec file inside
// the bundle.
type Interface struct {
	Name string `json:"name" yaml:"name"`
	// Type is one of openapi, asyncapi, grpc.
	Type string `json:"type" yaml:"type"`
	// Ref is the bundle-relative path of the spec file.
	Ref string `json:"ref" yaml:"ref"`
	// Visibility is public or internal; empty means internal.
	Visibility string `json:"visibility,omitempty" yaml:"visibility,omitempty"`
}

// Configuration declares configuration the service consumes: either an
// inline JSON Schema file in the bundle (Schema, optional Values), or a
// reference to another bundle whose configuration/schema.json applies (Ref).
type Configuration struct {
	Name string `json:"name" yaml:"name"`
	// Required has no default in the format: it is always written out.
	Required bool           `json:"required" yaml:"required"`
	Schema   string         `json:"schema,omitempty" yaml:"schema,omitempty"`
	Ref      string         `json:"ref,omitempty" yaml:"ref,omitempty"`
	Values   map[string]any `json:"values,omitempty" yaml:"values,omitempty"`
}

// Policy is a JSON Schema that the contract itself must satisfy: a file in
// the bundle (Schema) or the policies of another bundle (Ref).
type Policy struct {
	Name   string `json:"name" yaml:"name"`
	Schema string `json:"schema,omitempty" yaml:"schema,omitempty"`
	Ref    string `json:"ref,omitempty" yaml:"ref,omitempty"`
	// Target is "contract" (the only target); empty means contract.
	Target string `json:"target,omitempty" yaml:"target,omitempty"`
}

// Dependency is another service this one calls, pinned by a bundle reference
// and a semver compatibility range.
type Dependency struct {
	Name string `json:"name" yaml:"name"`
	// Ref is oci://registry/repo[:tag][@digest], file://path or a bare path.
	Ref string `json:"ref" yaml:"ref"`
	// Required has no default in the format: it is always written out.
	Required bool `json:"required" yaml:"required"`
	// Compatibility is a semver constraint such as "^1.2.0".
	Compatibility string `json:"compatibility" yaml:"compatibility"`
}

// State describes the service's data state.
type State struct {
	// Type is stateless, stateful or hybrid.
	Type        string      `json:"type" yaml:"type"`
	Persistence Persistence `json:"persistence" yaml:"persistence"`
	// DataCriticality is low, medium or high.
	DataCriticality string `json:"dataCriticality" yaml:"dataCriticality"`
}

// Persistence says where state lives and how long it survives.
type Persistence struct {
	// Scope is local or shared.
	Scope string `json:"scope" yaml:"scope"`
	// Durability is ephemeral or persistent; a stateless service is ephemeral.
	Durability string `json:"durability" yaml:"durability"`
}

// Capability is an observability capability (health, metrics) or a
// namespaced extension.
type Capability struct {
	// Type is health, metrics or extension.
	Type string `json:"type" yaml:"type"`
	// Ref is the namespaced id of an extension (e.g. example.com/custom);
	// only for type extension.
	Ref string `json:"ref,omitempty" yaml:"ref,omitempty"`
	// Binding says where a standard capability is served; not for extensions.
	Binding *CapabilityBinding `json:"binding,omitempty" yaml:"binding,omitempty"`
}

// CapabilityBinding ties a standard capability to one of the contract's
// interfaces.
type CapabilityBinding struct {
	// Type is http, the only transport.
	Type string `json:"type" yaml:"type"`
	// Interface is the name of an entry in Contract.Interfaces.
	Interface string `json:"interface" yaml:"interface"`
	// Path is an absolute URL path such as /healthz.
	Path string `json:"path,omitempty" yaml:"path,omitempty"`
}

// Readiness is the production-readiness declaration: claims with evidence
// and weights, scored against MinScore until Expires.
type Readiness struct {
	// Expires is a date written YYYY-MM-DD, kept as written.
	Expires string `json:"expires" yaml:"expires"`
	// MinScore is 0–100; nil means the default 100.
	MinScore *int `json:"minScore,omitempty" yaml:"minScore,omitempty"`
	// PartialCredit is 0–1; nil means the default 0.5.
	PartialCredit *float64            `json:"partialCredit,omitempty" yaml:"partialCredit,omitempty"`
	History       []ReadinessRevision `json:"history,omitempty" yaml:"history,omitempty"`
	Claims        []ReadinessClaim    `json:"claims" yaml:"claims"`
}

// ReadinessRevision records one change to the readiness declaration.
type ReadinessRevision struct {
	// Date is YYYY-MM-DD, kept as written.
	Date        string `json:"date" yaml:"date"`
	Version     string `json:"version" yaml:"version"`
	Author      string `json:"author" yaml:"author"`
	Description string `json:"description" yaml:"description"`
}

// ReadinessClaim is one readiness item with its evidence.
type ReadinessClaim struct {
	ID string `json:"id" yaml:"id"`
	// Type is url, document, ticket, report, artifact, identifier or other.
	Type string `json:"type" yaml:"type"`
	// Category is optional; see the schema for the allowed values.
	Category string `json:"category,omitempty" yaml:"category,omitempty"`
	// Status is done, partial, not-done or deferred.
	Status   string `json:"status" yaml:"status"`
	Evidence string `json:"evidence" yaml:"evidence"`
	// Weight is 0–100.
	Weight      int    `json:"weight" yaml:"weight"`
	Description string `json:"description,omitempty" yaml:"description,omitempty"`
}
