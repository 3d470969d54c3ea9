package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/kubepact/kubepact/bundle"
	"github.com/kubepact/kubepact/bundle/oci"
	"github.com/kubepact/kubepact/fleetgraph"
	"github.com/kubepact/kubepact/fleetgraph/source"
	"github.com/kubepact/kubepact/internal/openapitools"
	"github.com/kubepact/kubepact/internal/payload"
)

// FamilyPayload is pacto_validate_payload and pacto_explain_field:
// read-only questions about a service's contract (does this JSON value fit
// it, what does this field mean), answered from the contract alone.
//
// It is a family of its own, served by default, because it needs a
// contract and not a particular source of them: a bundle directory in the
// workspace or an oci:// reference (like pacto_impact), the bundle the
// capability family serves (by its service name), or, with the fleet
// family on, a fleet service by name, name@version or key. Keeping it out
// of the fleet family keeps that family's tools/list within its budget,
// and lets a server without a fleet answer for local bundles.
const FamilyPayload Family = "payload"

// payloadCacheSize bounds the contracts kept read, by bundle digest.
const payloadCacheSize = 32

// maxSetByRevisions bounds the fleet revisions pacto_explain_field reads
// to say which workloads set a configuration property.
const maxSetByRevisions = 16

// payloadFamily answers payload and field questions about one contract.
var payloadFamily = &family{
	name:    FamilyPayload,
	summary: "payload — pacto_validate_payload checks a JSON value (an operation's request body, parameters or response, an AsyncAPI message, configuration values) against a service's contract and answers diagnostics per field; pacto_explain_field says what a field means (type, constraints, description, examples, default, the operations using it and, for configuration, which fleet workloads set it). Both read-only; a service is a bundle directory in the workspace, an oci:// reference, the served bundle's name or, with the fleet, name or name@version",
	build: func(_ context.Context, env *familyEnv) (*familyParts, error) {
		st, err := newPayloadState(env)
		if err != nil {
			return nil, err
		}
		tools, err := st.tools()
		if err != nil {
			return nil, err
		}
		return &familyParts{tools: tools}, nil
	},
}

// payloadState resolves services to contracts and keeps them read.
type payloadState struct {
	env    *familyEnv
	loader *source.RefLoader

	mu      sync.Mutex
	cache   map[string]*payload.Contract // bundle digest → contract
	weights map[string]int64             // bundle digest → memory it is weighed with
	order   []string
	held    int64 // the weights of the contracts kept
}

func newPayloadState(env *familyEnv) (*payloadState, error) {
	client := env.opts.Registry
	if client == nil && len(env.opts.Fleet.OCI) > 0 {
		// The fleet's oci:// revisions are read again through the same
		// kind of client the fleet pulled them with.
		c, err := oci.NewClient(nil)
		if err != nil {
			return nil, err
		}
		client = c
	}
	workspace := env.opts.Workspace
	if env.opts.FleetRefsOnly {
		workspace = "" // fleet revisions' own locations only
	}
	return &payloadState{
		env:     env,
		loader:  source.NewRefLoader(&source.RefLoaderOptions{Workspace: workspace, Client: client, CacheBytes: env.opts.Budget.KeptBytes()}),
		cache:   map[string]*payload.Contract{},
		weights: map[string]int64{},
	}, nil
}

// Arguments. The subject fields are shared by both tools.
type (
	payloadSubject struct {
		Kind          string `json:"kind,omitempty" jsonschema:"which part; inferred when omitted: an operation's request_body, response with status, message, configuration; for an operation without a body, parameters only for an object of parameter names, else give kind"`
		Operation     string `json:"operation,omitempty" jsonschema:"operationId (or generated tool name)"`
		Status        string `json:"status,omitempty" jsonschema:"response status: 200, 2XX, default; empty: the first 2XX with a JSON body"`
		Message       string `json:"message,omitempty" jsonschema:"AsyncAPI message name, channel or operationId"`
		Configuration string `json:"configuration,omitempty" jsonschema:"configuration name; empty: the only one"`
	}
	validatePayloadArgs struct {
		Service string          `json:"service" jsonschema:"name or name@version (fleet, or the served bundle), a bundle directory in the workspace, or oci://ref"`
		Payload json.RawMessage `json:"payload" jsonschema:"the JSON value to check"`
		payloadSubject
	}
	explainFieldArgs struct {
		Service string `json:"service" jsonschema:"name or name@version (fleet, or the served bundle), a bundle directory in the workspace, or oci://ref"`
		Field   string `json:"field" jsonschema:"dotted path: price.currency, lines[].quantity"`
		payloadSubject
	}
)

func (a payloadSubject) subject() payload.Subject {
	return payload.Subject{Kind: a.Kind, Operation: a.Operation, Status: a.Status, Message: a.Message, Configuration: a.Configuration}
}

// ServiceInfo says which contract answered.
type ServiceInfo struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Digest  string `json:"digest,omitempty"`
	// From is fleet, served, workspace or registry.
	From string `json:"from"`
	// SnapshotID is the fleet snapshot a name was resolved in.
	SnapshotID string `json:"snapshotId,omitempty"`
}

// Answers.
type (
	validatePayloadOut struct {
		*payload.Result
		Service ServiceInfo `json:"service"`
	}
	explainFieldOut struct {
		*payload.Explanation
		Service ServiceInfo `json:"service"`
		// SetBy lists, for a configuration property, the fleet revisions
		// of the service whose configuration values set it, with the
		// workloads that run them.
		SetBy []ConfigSetter `json:"setBy,omitempty"`
		// SetByPartial says some revisions could not be read.
		SetByPartial string `json:"setByPartial,omitempty"`
	}
)

// ConfigSetter is one fleet revision that sets a configuration property.
type ConfigSetter struct {
	Version string `json:"version"`
	Value   any    `json:"value"`
	// Targets are the first maxSetByTargets targets running the revision;
	// TargetCount is how many run it.
	Targets     []string `json:"targets"`
	TargetCount int      `json:"targetCount"`
}

// maxSetByTargets bounds the targets listed per revision in setBy.
const maxSetByTargets = 50

func (st *payloadState) tools() ([]*tool, error) {
	kinds := make([]any, 0, len(payload.Kinds()))
	for _, k := range payload.Kinds() {
		kinds = append(kinds, k)
	}
	ro := hints{readOnly: true, idempotent: true, openWorld: st.loader.UsesRegistry()}
	validateIn := enumInput[validatePayloadArgs](map[string][]any{"kind": kinds})
	// Any JSON value: a json.RawMessage would otherwise read as bytes.
	validateIn.Properties["payload"] = &jsonschema.Schema{Description: "the JSON value to check"}
	validate, err := newTool(toolSpec{
		name: "pacto_validate_payload", title: "Check a JSON value against a contract", hints: ro,
		description: "Check a JSON value you produced or received against a service's contract. A misfit is a normal answer: valid:false and diagnostics [{field, code, expected, offendingValue, message, severity}]; warnings do not flip valid. Only an unknown service or subject, or bad arguments, is an error.",
		input:       validateIn,
	}, st.validate)
	if err != nil {
		return nil, err
	}
	validate.output = compact([]string{"valid", "subject", "diagnostics", "service"}, map[string]string{"valid": "boolean", "subject": "object", "diagnostics": "array", "truncated": "boolean", "service": "object"})
	explain, err := newTool(toolSpec{
		name: "pacto_explain_field", title: "Explain a field of a contract", hints: ro,
		description: "What a field of a service's contract means at each place it is defined (request, response, parameter, message or configuration): type, constraints, description, examples, default, the operations using it; for configuration, which fleet workloads set it. A miss is found:false with candidates.",
		input:       enumInput[explainFieldArgs](map[string][]any{"kind": kinds}),
	}, st.explain)
	if err != nil {
		return nil, err
	}
	validate.expensive, explain.expensive = true, true
	explain.output = compact([]string{"found", "path", "definitions", "service"}, map[string]string{"found": "boolean", "path": "string", "definitions": "array", "operations": "array",
		"reason": "string", "candidates": "array", "truncated": "boolean", "service": "object", "setBy": "array", "setByPartial": "string"})
	return []*tool{validate, explain}, nil
}

// compact is an output schema naming the top-level fields and their
// types; the full shapes are documented on internal/payload's types.
func compact(required []string, props map[string]string) *jsonschema.Schema {
	s := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{}, Required: required}
	for name, typ := range props {
		s.Properties[name] = &jsonschema.Schema{Type: typ}
	}
	return s
}

func (st *payloadState) validate(ctx context.Context, in validatePayloadArgs) (*validatePayloadOut, string, error) {
	c, info, err := st.contract(ctx, in.Service)
	if err != nil {
		return nil, "", err
	}
	res, err := c.Validate(ctx, in.subject(), in.Payload)
	if err != nil {
		return nil, "", payloadToolError(err)
	}
	out := &validatePayloadOut{Result: res, Service: info}
	return out, validateSummary(res, info), nil
}

func validateSummary(res *payload.Result, info ServiceInfo) string {
	what := res.Subject.Kind
	switch {
	case res.Subject.Operation != "":
		what = res.Subject.Operation + " " + what
		if res.Subject.Status != "" {
			what += " " + res.Subject.Status
		}
	case res.Subject.Message != "":
		what = "message " + res.Subject.Message
	case res.Subject.Configuration != "":
		what = "configuration " + res.Subject.Configuration
	}
	errs, warns := 0, 0
	for _, d := range res.Diagnostics {
		if d.Severity == payload.SeverityError {
			errs++
		} else {
			warns++
		}
	}
	if res.Valid {
		return fmt.Sprintf("Valid against %s of %s %s (%d warning(s)).", what, info.Name, info.Version, warns)
	}
	first := res.Diagnostics[0].Message
	return fmt.Sprintf("Invalid against %s of %s %s: %d error(s), %d warning(s); first: %s.", what, info.Name, info.Version, errs, warns, first)
}

func (st *payloadState) explain(ctx context.Context, in explainFieldArgs) (*explainFieldOut, string, error) {
	c, info, err := st.contract(ctx, in.Service)
	if err != nil {
		return nil, "", err
	}
	ex, err := c.Explain(ctx, payload.FieldQuery{Path: in.Field, Subject: in.subject()})
	if err != nil {
		return nil, "", payloadToolError(err)
	}
	out := &explainFieldOut{Explanation: ex, Service: info}
	if !ex.Found {
		msg := "Not found: " + ex.Reason
		if len(ex.Candidates) > 0 {
			msg += "; did you mean " + strings.Join(ex.Candidates, ", ") + "?"
		}
		return out, msg + " (found:false).", nil
	}
	var cfgs []string
	for _, d := range ex.Definitions {
		if d.Where.Kind == payload.KindConfiguration {
			cfgs = append(cfgs, d.Where.Configuration)
		}
	}
	if len(cfgs) > 0 && st.env.fleet != nil {
		// The fleet's revisions of the same service, however this one
		// was addressed.
		out.SetBy, out.SetByPartial = st.setBy(ctx, info.Name, cfgs, in.Field)
	}
	where := make([]string, 0, len(ex.Definitions))
	for _, d := range ex.Definitions {
		w := d.Where.Kind
		switch {
		case d.Where.Operation != "":
			w = d.Where.Operation + " " + w
		case d.Where.Message != "":
			w = "message " + d.Where.Message
		case d.Where.Configuration != "":
			w = "configuration " + d.Where.Configuration
		}
		where = append(where, w)
	}
	d := ex.Definitions[0]
	return out, fmt.Sprintf("%s of %s %s: %s, defined in %d place(s): %s.", in.Field, info.Name, info.Version, orAny(d.Type), len(ex.Definitions), strings.Join(where, "; ")), nil
}

func orAny(t string) string {
	if t == "" {
		return "any type"
	}
	return t
}

// setBy reads the fleet revisions of the service and lists those whose
// configuration values set the field, with the targets running them.
func (st *payloadState) setBy(ctx context.Context, name string, cfgs []string, field string) ([]ConfigSetter, string) {
	b := st.env.fleet
	if b == nil {
		return nil, ""
	}
	revs, miss := b.Current().Locate(fleetgraph.LocateQuery{Service: name, Targets: true})
	if !miss.Found {
		return nil, ""
	}
	var partial []string
	if len(revs) > maxSetByRevisions {
		partial = append(partial, fmt.Sprintf("only the newest %d of %d revisions were read", maxSetByRevisions, len(revs)))
		revs = revs[:maxSetByRevisions]
	}
	out := []ConfigSetter{}
	for _, r := range revs {
		c, err := st.readLocation(ctx, r)
		if err != nil {
			partial = append(partial, fmt.Sprintf("revision %s could not be read", r.Version))
			continue
		}
		for _, cfg := range cfgs {
			if v, ok := c.ConfigValue(cfg, field); ok {
				tk := orEmpty(r.Targets)
				out = append(out, ConfigSetter{Version: r.Version, Value: v, Targets: tk[:min(len(tk), maxSetByTargets)], TargetCount: len(tk)})
				break
			}
		}
	}
	return out, strings.Join(partial, "; ")
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// contract resolves the service argument to a read contract: an oci://
// reference or a path (with a separator, or naming a directory in the
// workspace that no name matches) through the loader confined to the
// workspace; otherwise a name, name@version or key of the served bundle
// or the fleet.
func (st *payloadState) contract(ctx context.Context, service string) (*payload.Contract, ServiceInfo, error) {
	service = strings.TrimSpace(service)
	if service == "" {
		return nil, ServiceInfo{}, &ToolError{Code: CodeInvalidArgument, Field: "service", Message: "service is empty: give a service name, name@version, a bundle directory in the workspace or an oci:// reference"}
	}
	refsOnly := st.env.opts.FleetRefsOnly
	if te := refusedFleetRef("service", service); refsOnly && te != nil {
		return nil, ServiceInfo{}, te // nothing outside the fleet is read
	}
	if !refsOnly && (bundle.IsOCIRef(service) || strings.ContainsAny(service, `/\`) || strings.HasPrefix(service, ".")) {
		return st.fromRef(ctx, service)
	}
	name, version := splitVersion(service)
	if cb := st.env.opts.Capability; cb != nil && cb.Bundle != nil && cb.Bundle.Contract != nil {
		if c := cb.Bundle.Contract.Service; c.Name == name && (version == "" || version == c.Version) {
			pc, err := st.read(ctx, cb.Bundle)
			return pc, ServiceInfo{Name: c.Name, Version: c.Version, Digest: cb.Bundle.Identity.String(), From: "served"}, err
		}
	}
	var miss fleetgraph.Miss
	if b := st.env.fleet; b != nil {
		snap := b.Current()
		revs, m := snap.Locate(fleetgraph.LocateQuery{Service: name, Version: version})
		if m.Found {
			r := revs[0]
			c, err := st.readLocation(ctx, r)
			if err != nil {
				return nil, ServiceInfo{}, err
			}
			return c, ServiceInfo{Name: c.Service, Version: r.Version, Digest: r.Digest, From: "fleet", SnapshotID: snap.ID()}, nil
		}
		miss = m
	}
	// A bare directory name in the workspace.
	if ws := st.env.opts.Workspace; ws != "" && !refsOnly {
		if fi, err := os.Stat(filepath.Join(ws, service, "pacto.yaml")); err == nil && fi.Mode().IsRegular() {
			return st.fromRef(ctx, service)
		}
	}
	te := &ToolError{Code: payload.CodeNotFound, Field: "service"}
	switch {
	case st.env.fleet != nil:
		te.Message = miss.Reason
		if len(miss.Candidates) > 0 {
			te.DidYouMean = miss.Candidates[0]
			te.Accepted = miss.Candidates
		}
	default:
		te.Message = fmt.Sprintf("no service %q is known here: without a fleet (--fleet), give a bundle directory in the workspace or an oci:// reference", service)
		if cb := st.env.opts.Capability; cb != nil && cb.Bundle != nil && cb.Bundle.Contract != nil {
			te.Message += fmt.Sprintf(", or %s, the bundle this server serves", cb.Bundle.Contract.Service.Name)
			te.Accepted = []string{cb.Bundle.Contract.Service.Name}
		}
	}
	return nil, ServiceInfo{}, te
}

// splitVersion splits name@version.
func splitVersion(s string) (string, string) {
	if i := strings.LastIndexByte(s, '@'); i > 0 {
		return s[:i], s[i+1:]
	}
	return s, ""
}

func (st *payloadState) fromRef(ctx context.Context, ref string) (*payload.Contract, ServiceInfo, error) {
	b, err := readRef(ctx, st.loader, "service", ref)
	if err != nil {
		return nil, ServiceInfo{}, err
	}
	from := "workspace"
	if bundle.IsOCIRef(ref) {
		from = "registry"
	}
	c, err := st.read(ctx, b)
	if err != nil {
		return nil, ServiceInfo{}, err
	}
	return c, ServiceInfo{Name: c.Service, Version: c.Version, Digest: b.Identity.String(), From: from}, nil
}

// readLocation reads a fleet revision's bundle where its source found it:
// a local source's directory (a source the operator configured), or its
// digest-pinned reference through the registry client.
func (st *payloadState) readLocation(ctx context.Context, r fleetgraph.RevisionLocation) (*payload.Contract, error) {
	st.mu.Lock()
	c, ok := st.cache[r.Digest]
	st.mu.Unlock()
	if ok {
		return c, nil
	}
	var b *bundle.Bundle
	var err error
	switch {
	case r.Location == "":
		return nil, &ToolError{Code: source.CodeRefUnavailable, Field: "service", Message: fmt.Sprintf("revision %s of %s came from a source that does not say where its bundle can be read again; pass its bundle directory or oci:// reference instead", r.Version, r.Service)}
	case bundle.IsOCIRef(r.Location):
		b, err = readRef(ctx, st.loader, "service", r.Location)
		if err != nil {
			return nil, err
		}
	default:
		b, err = readDir(ctx, "service", r.Service+" "+r.Version, r.Location)
		var te *ToolError
		if errors.As(err, &te) {
			return nil, err
		}
		if err != nil {
			return nil, &ToolError{Code: source.CodeRefUnavailable, Field: "service", Message: fmt.Sprintf("revision %s of %s could not be read again from its source directory; it may have changed since the fleet snapshot", r.Version, r.Service)}
		}
	}
	return st.read(ctx, b)
}

// read reads b's contract, once per bundle digest.
func (st *payloadState) read(ctx context.Context, b *bundle.Bundle) (*payload.Contract, error) {
	key := b.Identity.String()
	st.mu.Lock()
	c, ok := st.cache[key]
	st.mu.Unlock()
	if ok {
		return c, nil
	}
	weight := b.FS.Size() * projectFactor
	if err := leaseOf(ctx).charge(weight, "service", "projecting the interfaces of "+b.Source.String()); err != nil {
		return nil, err
	}
	c, err := payload.ReadWithGRPC(ctx, b, openapitools.Shapes, grpcMessages)
	if err != nil {
		return nil, payloadToolError(err)
	}
	st.keep(key, c, weight)
	return c, nil
}

// keep caches c under key, evicting the oldest contracts past the count
// bound and past the memory the budget allows all calls together (a
// contract is weighed as projecting it was charged); one heavier than
// that is not kept.
func (st *payloadState) keep(key string, c *payload.Contract, weight int64) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if _, ok := st.cache[key]; ok || key == "" || weight > st.env.budget.memory {
		return
	}
	st.cache[key] = c
	st.weights[key] = weight
	st.held += weight
	st.order = append(st.order, key)
	for len(st.order) > payloadCacheSize || st.held > st.env.budget.memory {
		st.held -= st.weights[st.order[0]]
		delete(st.cache, st.order[0])
		delete(st.weights, st.order[0])
		st.order = st.order[1:]
	}
}

// payloadArgs maps internal/payload's field names to the tools' arguments.
var payloadArgs = map[string]string{"Kind": "kind", "Operation": "operation", "Status": "status", "Message": "message",
	"Configuration": "configuration", "Value": "payload", "Path": "field"}

func payloadToolError(err error) error {
	var pe *payload.Error
	if !errors.As(err, &pe) {
		return err
	}
	return &ToolError{Code: pe.Code, Field: payloadArgs[pe.Field], Message: pe.Message, Accepted: pe.Accepted, DidYouMean: pe.DidYouMean}
}
