package payload

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"

	"github.com/kubepact/kubepact/internal/didyoumean"
	"github.com/kubepact/kubepact/internal/jsonobj"
	"github.com/kubepact/kubepact/internal/openapischema"
	"github.com/kubepact/kubepact/internal/schemamsg"
)

// Bounds on a value: the MCP argument decoder's depth bound, and a size
// far above any message or configuration a contract describes.
const (
	MaxDepth       = openapischema.MaxValueDepth
	MaxValueBytes  = 1 << 20
	maxDiagnostics = 100
	maxShownValue  = 200 // bytes of an offending string shown
)

// Diagnostic severities.
const (
	SeverityError   = "error"
	SeverityWarning = "warning"
)

// Diagnostic codes.
const (
	DiagType        = "TYPE_MISMATCH"
	DiagRequired    = "REQUIRED"
	DiagUnknown     = "UNKNOWN_FIELD"
	DiagEnum        = "NOT_ALLOWED_VALUE"
	DiagConst       = "CONST_MISMATCH"
	DiagPattern     = "PATTERN_MISMATCH"
	DiagFormat      = "FORMAT_MISMATCH"
	DiagRange       = "OUT_OF_RANGE"
	DiagLength      = "LENGTH"
	DiagCount       = "COUNT"
	DiagMultipleOf  = "NOT_MULTIPLE"
	DiagUnique      = "NOT_UNIQUE"
	DiagAlternative = "NO_MATCHING_ALTERNATIVE"
	DiagForbidden   = "NOT_ALLOWED_HERE"
	DiagInvalid     = "INVALID_VALUE"
	DiagDeprecated  = "DEPRECATED"
	DiagWriteOnly   = "WRITE_ONLY_FIELD"
)

// Subject names what a value is checked against. Kind may be left empty
// when the other fields say it: Operation alone means the request body,
// Operation with Status a response, Message a message, Configuration a
// configuration. For an operation that takes no request body, Operation
// alone means its parameters only when the value is an object of
// parameter names; any other value is refused as ambiguous, naming the
// two kinds, rather than checked against a guess.
type Subject struct {
	Kind string
	// Operation is an operationId, or the tool name capability gives it.
	Operation string
	// Status is a response status as the contract writes it (200, 2XX,
	// default) or a concrete code a range or default covers; empty picks
	// the first 2XX response with a JSON body.
	Status string
	// Message is an AsyncAPI message: its components.messages key, its
	// key in a channel, or its name.
	Message string
	// Configuration is a configuration's name; empty picks the only one.
	Configuration string
}

// Resolved says what a value was checked against.
type Resolved struct {
	Kind          string `json:"kind"`
	Operation     string `json:"operation,omitempty"`
	Method        string `json:"method,omitempty"`
	Path          string `json:"path,omitempty"`
	Status        string `json:"status,omitempty"`
	MediaType     string `json:"mediaType,omitempty"`
	Interface     string `json:"interface,omitempty"`
	Message       string `json:"message,omitempty"`
	Channel       string `json:"channel,omitempty"`
	Configuration string `json:"configuration,omitempty"`
}

// Diagnostic is one fault of a value.
type Diagnostic struct {
	// Field is the dotted path into the value (lines[0].quantity); empty
	// for the value as a whole.
	Field string `json:"field"`
	Code  string `json:"code"`
	// Expected says what the contract accepts there.
	Expected string `json:"expected,omitempty"`
	// OffendingValue is the value found (a long string is cut; an object
	// or array is described in Message instead).
	OffendingValue any    `json:"offendingValue,omitempty"`
	Message        string `json:"message"`
	Severity       string `json:"severity"`
}

// Result is a check's answer. Warnings do not make a value invalid.
type Result struct {
	Valid       bool         `json:"valid"`
	Subject     Resolved     `json:"subject"`
	Diagnostics []Diagnostic `json:"diagnostics"`
	// Truncated is true when more faults were found than listed.
	Truncated bool `json:"truncated,omitempty"`
}

// Validate checks value (a JSON document) against the subject. A value
// that does not fit is a Result with Valid false; an *Error means the
// question could not be asked (see Error). The check stops when ctx is
// done (returning ctx's error) or past MaxSteps (SCHEMA_UNAVAILABLE),
// compiling included: no work goes on after Validate returns.
func (c *Contract) Validate(ctx context.Context, sub Subject, value json.RawMessage) (*Result, error) {
	v, err := decodeValue(value)
	if err != nil {
		return nil, err
	}
	if sub, err = c.inferKind(sub, v); err != nil {
		return nil, err
	}
	res, cs, err := c.resolve(ctx, sub)
	if err != nil {
		return nil, err
	}
	inst, err := cs.acquire(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, &Error{Code: CodeSchemaUnavailable, Message: "the schema could not be compiled again: " + firstLine(err.Error())}
	}
	defer cs.release(inst)
	cs.schema = inst.schema
	var verr error
	if err := inst.g.check(ctx, func() { verr = inst.schema.Validate(v) }); err != nil {
		return nil, stopped(err, res)
	}
	out := &Result{Subject: res, Diagnostics: []Diagnostic{}}
	if err := verr; err != nil {
		var ve *jsonschema.ValidationError
		if !errors.As(err, &ve) {
			return nil, &Error{Code: CodeSchemaUnavailable, Message: "the schema could not be evaluated on this value"}
		}
		if cyc := refCycle(ve); cyc != nil {
			return nil, &Error{Code: CodeSchemaUnavailable, Message: "the schema cannot be evaluated: it refers back to itself without descending into a field or an item (at " + cyc.KeywordLocation1 + "), so no validator can finish"}
		}
		out.Diagnostics = leafDiagnostics(ve, v)
		out.Diagnostics = closedBranches(ve, v, cs, out.Diagnostics)
	}
	var warnings []Diagnostic
	if cs.marks {
		if err := inst.g.check(ctx, func() { warnings = annotations(inst.g, cs.tree, cs.root, v, res.Kind) }); err != nil {
			return nil, stopped(err, res)
		}
	}
	slices.SortStableFunc(warnings, func(a, b Diagnostic) int { return strings.Compare(a.Field, b.Field) })
	out.Diagnostics = append(out.Diagnostics, slices.CompactFunc(warnings, func(a, b Diagnostic) bool { return a.Field == b.Field && a.Code == b.Code })...)
	out.Valid = true
	for _, d := range out.Diagnostics {
		if d.Severity == SeverityError {
			out.Valid = false
		}
	}
	if len(out.Diagnostics) > maxDiagnostics {
		out.Diagnostics, out.Truncated = out.Diagnostics[:maxDiagnostics], true
	}
	return out, nil
}

// stopped is the answer of a check its guard stopped: ctx's error as it
// is, or SCHEMA_UNAVAILABLE for one out of steps.
func stopped(err error, res Resolved) error {
	if !errors.Is(err, errTooManySteps) {
		return err
	}
	what := res.Kind
	switch {
	case res.Operation != "":
		what = res.Operation + " " + res.Kind
	case res.Message != "":
		what = "message " + res.Message
	case res.Configuration != "":
		what = "configuration " + res.Configuration
	}
	return tooManySteps(what)
}

// decodeValue decodes one JSON value with exact numbers, within the
// bounds: its size, its nesting and the digits and exponent of each
// number (exact arithmetic on 1e999999 alone takes a million digits).
func decodeValue(raw json.RawMessage) (any, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil, &Error{Code: CodeInvalidArgument, Field: "Value", Message: "no value was given: pass the JSON value to check"}
	}
	if len(raw) > MaxValueBytes {
		return nil, &Error{Code: CodeInvalidArgument, Field: "Value", Message: fmt.Sprintf("the value is %d bytes of JSON, more than the %d checked at once; check a smaller part (one item, one message)", len(raw), MaxValueBytes)}
	}
	if depth(raw) > MaxDepth {
		return nil, &Error{Code: CodeInvalidArgument, Field: "Value", Message: fmt.Sprintf("the value is nested deeper than %d levels of objects and arrays", MaxDepth)}
	}
	if f, ok := jsonobj.LongNumber(raw); ok {
		where := "the value"
		if f.Path != "" {
			where = strconv.Quote(f.Path)
		}
		return nil, &Error{Code: CodeInvalidArgument, Field: "Value", Message: fmt.Sprintf("the number at %s %s: it was not checked", where, f.Reason())}
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || dec.More() {
		return nil, &Error{Code: CodeInvalidArgument, Field: "Value", Message: "the value is not one JSON document"}
	}
	return v, nil
}

// depth is the deepest nesting of objects and arrays in raw, counted on
// the bytes so a deep value is refused before it is decoded.
func depth(raw []byte) int {
	d, deepest, inString, escaped := 0, 0, false, false
	for _, b := range raw {
		switch {
		case escaped:
			escaped = false
		case inString:
			switch b {
			case '\\':
				escaped = true
			case '"':
				inString = false
			}
		case b == '"':
			inString = true
		case b == '{' || b == '[':
			d++
			deepest = max(deepest, d)
		case b == '}' || b == ']':
			d--
		}
	}
	return deepest
}

// resolve finds the subject and its compiled schema; it fails with ctx's
// error when ctx ends while the schema is compiled.
func (c *Contract) resolve(ctx context.Context, sub Subject) (Resolved, *compiledAt, error) {
	k := sub.Kind
	if k == "" {
		switch {
		case sub.Operation != "" && sub.Status != "":
			k = KindResponse
		case sub.Operation != "":
			k = KindRequestBody
		case sub.Message != "":
			k = KindMessage
		case sub.Configuration != "":
			k = KindConfiguration
		default:
			return Resolved{}, nil, &Error{Code: CodeInvalidArgument, Field: "Kind", Accepted: Kinds(),
				Message: "say what to check the value against: an operation (its request body, parameters or a response), a message or a configuration"}
		}
	}
	if !slices.Contains(Kinds(), k) {
		return Resolved{}, nil, &Error{Code: CodeInvalidArgument, Field: "Kind", Accepted: Kinds(), DidYouMean: didyoumean.Nearest(k, Kinds()),
			Message: fmt.Sprintf("kind %q is not one of %s", k, strings.Join(Kinds(), ", "))}
	}
	if err := conflicting(k, sub); err != nil {
		return Resolved{}, nil, err
	}
	switch k {
	case KindMessage:
		return c.resolveMessage(ctx, sub.Message)
	case KindConfiguration:
		return c.resolveConfiguration(ctx, sub.Configuration)
	}
	op, err := c.operation(sub.Operation)
	if err != nil {
		return Resolved{}, nil, err
	}
	res := Resolved{Kind: k, Operation: opName(op), Method: op.Method, Path: op.Path, Interface: op.Interface}
	if op.Problem != "" && k != KindResponse {
		return res, nil, &Error{Code: CodeSchemaUnavailable, Field: "Operation", Message: fmt.Sprintf("operation %s's request schema cannot be evaluated: %s", res.Operation, op.Problem)}
	}
	trees := c.trees[op]
	var tree any
	switch k {
	case KindRequestBody:
		if op.Body == nil {
			return res, nil, &Error{Code: CodeNotFound, Field: "Operation", Message: fmt.Sprintf("operation %s (%s %s) takes no request body; check its parameters (kind %s) or a response instead", res.Operation, op.Method, op.Path, KindParameters)}
		}
		tree, res.MediaType = trees.body, op.BodyType
	case KindParameters:
		tree = trees.params
		if op.Parameters == nil {
			tree = map[string]any{"type": "object", "additionalProperties": false}
		}
	case KindResponse:
		i, err := pickResponse(op, sub.Status)
		if err != nil {
			return res, nil, err
		}
		r := op.Responses[i]
		res.Status, res.MediaType, tree = r.Status, r.MediaType, trees.responses[i]
	}
	if tree == nil {
		return res, nil, &Error{Code: CodeSchemaUnavailable, Message: "the schema does not decode"}
	}
	key := res.Kind + "\x00" + op.Name + "\x00" + res.Status
	u := bundleScheme + ":///operations/" + escapeToken(op.Name) + "/" + res.Kind + "/" + res.Status + ".json"
	cs, err := c.compile(ctx, key, c.fsys, u, tree, u)
	if err != nil {
		return res, nil, err
	}
	if cs.err != nil {
		return res, nil, &Error{Code: CodeSchemaUnavailable, Message: fmt.Sprintf("the schema of %s %s cannot be evaluated: %s", res.Operation, res.Kind, firstLine(cs.err.Error()))}
	}
	return res, &compiledAt{compiled: cs, root: tree}, nil
}

// compiledAt is a compiled schema and the schema node it starts at, for
// one check; schema is the compiled copy that check uses.
type compiledAt struct {
	*compiled
	root   any
	schema *jsonschema.Schema
}

// conflicting refuses subject fields that do not belong to the kind.
func conflicting(k string, sub Subject) error {
	type field struct{ name, val string }
	var allowed []string
	switch k {
	case KindRequestBody, KindParameters:
		allowed = []string{"Operation"}
	case KindResponse:
		allowed = []string{"Operation", "Status"}
	case KindMessage:
		allowed = []string{"Message"}
	case KindConfiguration:
		allowed = []string{"Configuration"}
	}
	for _, f := range []field{{"Operation", sub.Operation}, {"Status", sub.Status}, {"Message", sub.Message}, {"Configuration", sub.Configuration}} {
		if f.val != "" && !slices.Contains(allowed, f.name) {
			return &Error{Code: CodeInvalidArgument, Field: f.name, Message: fmt.Sprintf("a %s does not apply to kind %s, which is about %s", strings.ToLower(f.name), k, strings.ToLower(strings.Join(allowed, " and ")))}
		}
	}
	if slices.Contains(allowed, "Operation") && sub.Operation == "" {
		return &Error{Code: CodeInvalidArgument, Field: "Operation", Message: fmt.Sprintf("kind %s needs an operation: its operationId", k)}
	}
	return nil
}

func opName(op *openapischema.Shape) string {
	if op.OperationID != "" {
		return op.OperationID
	}
	return op.Name
}

// operation finds an operation by operationId, else by tool name.
func (c *Contract) operation(name string) (*openapischema.Shape, error) {
	var names []string
	for _, op := range c.operations {
		if op.OperationID == name {
			return op, nil
		}
	}
	for _, op := range c.operations {
		if op.Name == name {
			return op, nil
		}
		names = append(names, opName(op))
	}
	slices.Sort(names)
	msg := fmt.Sprintf("service %s has no operation %q; its operations: %s", c.Service, name, orNone(names))
	if len(c.operations) == 0 {
		msg = fmt.Sprintf("service %s declares no OpenAPI operation", c.Service)
	}
	if len(c.problems) > 0 {
		msg += " (" + strings.Join(c.problems, "; ") + ")"
	}
	return nil, &Error{Code: CodeNotFound, Field: "Operation", Message: msg, Accepted: acceptedList(names), DidYouMean: didyoumean.Nearest(name, names)}
}

// pickResponse finds the response for status: as written, else the
// range (2XX) or default that covers a concrete code; empty status picks
// the first 2XX with a JSON body.
func pickResponse(op *openapischema.Shape, status string) (int, error) {
	var statuses []string
	for _, r := range op.Responses {
		statuses = append(statuses, r.Status)
	}
	var found *openapischema.ResponseShape
	at := -1
	if status == "" {
		for i, r := range op.Responses {
			if strings.HasPrefix(r.Status, "2") && r.MediaType != "" {
				found, at = &op.Responses[i], i
				break
			}
		}
		if found == nil {
			return -1, &Error{Code: CodeNotFound, Field: "Status", Accepted: statuses,
				Message: fmt.Sprintf("operation %s declares no 2XX response with a JSON body; name a status (declared: %s)", opName(op), orNone(statuses))}
		}
	} else {
		st := strings.ToUpper(strings.TrimSpace(status))
		for _, want := range []string{st, rangeOf(st), "DEFAULT"} {
			for i, r := range op.Responses {
				if strings.EqualFold(r.Status, want) {
					found, at = &op.Responses[i], i
					break
				}
			}
			if found != nil || want == "" {
				break
			}
		}
		if found == nil {
			return -1, &Error{Code: CodeNotFound, Field: "Status", Accepted: statuses, DidYouMean: didyoumean.Nearest(status, statuses),
				Message: fmt.Sprintf("operation %s declares no response %s; declared: %s", opName(op), status, orNone(statuses))}
		}
	}
	switch {
	case found.Problem != "":
		return -1, &Error{Code: CodeSchemaUnavailable, Field: "Status", Message: fmt.Sprintf("response %s of %s cannot be evaluated: %s", found.Status, opName(op), found.Problem)}
	case found.MediaType == "":
		return -1, &Error{Code: CodeNotFound, Field: "Status", Message: fmt.Sprintf("response %s of %s declares no JSON body to check (%s)", found.Status, opName(op), orText(found.Description, "no description"))}
	}
	return at, nil
}

func rangeOf(status string) string {
	if len(status) == 3 && status[0] >= '1' && status[0] <= '5' {
		if _, err := strconv.Atoi(status); err == nil {
			return status[:1] + "XX"
		}
	}
	return ""
}

func orText(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func (c *Contract) resolveMessage(ctx context.Context, name string) (Resolved, *compiledAt, error) {
	var names []string
	var m *message
	for _, x := range c.messages {
		names = append(names, x.name)
		if x.name == name && m == nil {
			m = x
		}
	}
	if m == nil {
		for _, x := range c.messages {
			if x.title == name || x.channel == name || (x.operation != "" && x.operation == name) {
				m = x
				break
			}
		}
	}
	if m == nil {
		slices.Sort(names)
		names = slices.Compact(names)
		msg := fmt.Sprintf("service %s has no message %q; its messages: %s", c.Service, name, orNone(names))
		if name == "" {
			msg = fmt.Sprintf("kind %s needs a message name; service %s has: %s", KindMessage, c.Service, orNone(names))
		}
		if len(c.problems) > 0 {
			msg += " (" + strings.Join(c.problems, "; ") + ")"
		}
		code := CodeNotFound
		if name == "" {
			code = CodeInvalidArgument
		}
		return Resolved{}, nil, &Error{Code: code, Field: "Message", Message: msg, Accepted: acceptedList(names), DidYouMean: didyoumean.Nearest(name, names)}
	}
	res := Resolved{Kind: KindMessage, Message: m.name, Channel: m.channel, Interface: m.iface}
	if m.problem != "" {
		return res, nil, &Error{Code: CodeSchemaUnavailable, Field: "Message", Message: fmt.Sprintf("message %s cannot be checked: %s", m.name, m.problem)}
	}
	u := fileURL(m.file)
	cs, err := c.compile(ctx, "m\x00"+m.file+"#"+m.pointer, c.fsys, u, m.doc, u+"#"+m.pointer)
	if err != nil {
		return res, nil, err
	}
	if cs.err != nil {
		return res, nil, &Error{Code: CodeSchemaUnavailable, Field: "Message", Message: fmt.Sprintf("message %s's payload schema cannot be evaluated: %s", m.name, firstLine(cs.err.Error()))}
	}
	return res, &compiledAt{compiled: cs, root: m.payload}, nil
}

func (c *Contract) resolveConfiguration(ctx context.Context, name string) (Resolved, *compiledAt, error) {
	var names []string
	var cfg *configuration
	for _, x := range c.configs {
		names = append(names, x.name)
		if x.name == name {
			cfg = x
		}
	}
	if name == "" && len(c.configs) == 1 {
		cfg = c.configs[0]
	}
	if cfg == nil {
		msg := fmt.Sprintf("service %s has no configuration %q; its configurations: %s", c.Service, name, orNone(names))
		code := CodeNotFound
		switch {
		case name == "" && len(names) == 0:
			msg = fmt.Sprintf("service %s declares no configuration", c.Service)
		case name == "":
			code, msg = CodeInvalidArgument, fmt.Sprintf("service %s has several configurations; name one: %s", c.Service, orNone(names))
		}
		return Resolved{}, nil, &Error{Code: code, Field: "Configuration", Message: msg, Accepted: acceptedList(names), DidYouMean: didyoumean.Nearest(name, names)}
	}
	res := Resolved{Kind: KindConfiguration, Configuration: cfg.name}
	if cfg.problem != "" {
		return res, nil, &Error{Code: CodeSchemaUnavailable, Field: "Configuration", Message: fmt.Sprintf("configuration %s cannot be checked: %s", cfg.name, cfg.problem)}
	}
	u := fileURL(cfg.file)
	cs, err := c.compile(ctx, "c\x00"+cfg.file, c.fsys, u, cfg.doc, u)
	if err != nil {
		return res, nil, err
	}
	if cs.err != nil {
		return res, nil, &Error{Code: CodeSchemaUnavailable, Field: "Configuration", Message: fmt.Sprintf("configuration %s's schema %s cannot be evaluated: %s", cfg.name, cfg.file, firstLine(cs.err.Error()))}
	}
	return res, &compiledAt{compiled: cs, root: cfg.doc}, nil
}

// refCycle finds a reference cycle the validator stopped at.
func refCycle(e *jsonschema.ValidationError) *kind.RefCycle {
	if k, ok := e.ErrorKind.(*kind.RefCycle); ok {
		return k
	}
	for _, c := range e.Causes {
		if k := refCycle(c); k != nil {
			return k
		}
	}
	return nil
}

// leafDiagnostics turns the validator's error tree into one diagnostic
// per leaf fault.
func leafDiagnostics(ve *jsonschema.ValidationError, inst any) []Diagnostic {
	var out []Diagnostic
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		switch e.ErrorKind.(type) {
		case *kind.Schema, *kind.Group, *kind.Reference, *kind.AllOf:
			if len(e.Causes) > 0 {
				for _, c := range e.Causes {
					walk(c)
				}
				return
			}
		}
		out = append(out, describe(e, inst)...)
	}
	walk(ve)
	// One fault once: allOf branches can report the same.
	slices.SortStableFunc(out, func(a, b Diagnostic) int { return strings.Compare(a.Field, b.Field) })
	return slices.CompactFunc(out, func(a, b Diagnostic) bool { return a.Field == b.Field && a.Code == b.Code && a.Message == b.Message })
}

func describe(e *jsonschema.ValidationError, inst any) []Diagnostic {
	at := jsonobj.InstancePath(inst, e.InstanceLocation)
	got := valueAt(inst, e.InstanceLocation)
	d := Diagnostic{Field: at, Severity: SeverityError, OffendingValue: shown(got)}
	where := "the value"
	if at != "" {
		where = strconv.Quote(at)
	}
	switch k := e.ErrorKind.(type) {
	case *kind.Required:
		var out []Diagnostic
		for _, name := range k.Missing {
			out = append(out, Diagnostic{Field: joinField(at, name), Code: DiagRequired, Expected: "present", Severity: SeverityError,
				Message: fmt.Sprintf("%q is required and missing", joinField(at, name))})
		}
		return out
	case *kind.DependentRequired:
		var out []Diagnostic
		for _, name := range k.Missing {
			out = append(out, Diagnostic{Field: joinField(at, name), Code: DiagRequired, Expected: "present when " + k.Prop + " is", Severity: SeverityError,
				Message: fmt.Sprintf("%q is required when %q is given", joinField(at, name), joinField(at, k.Prop))})
		}
		return out
	case *kind.AdditionalProperties:
		var out []Diagnostic
		for _, name := range k.Properties {
			out = append(out, Diagnostic{Field: joinField(at, name), Code: DiagUnknown, Expected: "no such field", Severity: SeverityError,
				Message: fmt.Sprintf("%q is not a field the contract declares here", joinField(at, name))})
		}
		return out
	case *kind.Type:
		d.Code, d.Expected = DiagType, strings.Join(k.Want, " or ")
		d.Message = fmt.Sprintf("%s must be %s; got %s", where, article(d.Expected), article(k.Got))
		if str, ok := got.(string); ok && holdsJSON(str) {
			d.Message += " that holds JSON: pass the JSON value itself, not encoded in a string"
		}
	case *kind.Enum:
		want := make([]string, 0, len(k.Want))
		for _, w := range k.Want {
			want = append(want, display(w))
		}
		d.Code, d.Expected = DiagEnum, "one of "+strings.Join(want, ", ")
		d.Message = fmt.Sprintf("%s must be one of %s; got %s", where, strings.Join(want, ", "), display(got))
	case *kind.Const:
		d.Code, d.Expected = DiagConst, display(k.Want)
		d.Message = fmt.Sprintf("%s must be exactly %s; got %s", where, display(k.Want), display(got))
	case *kind.Pattern:
		d.Code, d.Expected = DiagPattern, "a string matching "+k.Want
		d.Message = fmt.Sprintf("%s must match the pattern %s; got %s", where, k.Want, display(got))
	case *kind.Format:
		d.Code, d.Expected = DiagFormat, "a "+k.Want
		d.Message = fmt.Sprintf("%s must be a valid %s; got %s", where, k.Want, display(got))
	case *kind.Minimum:
		d.bound(where, DiagRange, "at least "+ratString(k.Want), ratString(k.Got))
	case *kind.Maximum:
		d.bound(where, DiagRange, "at most "+ratString(k.Want), ratString(k.Got))
	case *kind.ExclusiveMinimum:
		d.bound(where, DiagRange, "more than "+ratString(k.Want), ratString(k.Got))
	case *kind.ExclusiveMaximum:
		d.bound(where, DiagRange, "less than "+ratString(k.Want), ratString(k.Got))
	case *kind.MultipleOf:
		d.bound(where, DiagMultipleOf, "a multiple of "+ratString(k.Want), ratString(k.Got))
	case *kind.MinLength:
		d.size(where, DiagLength, "at least "+count(k.Want, "character"), k.Got)
	case *kind.MaxLength:
		d.size(where, DiagLength, "at most "+count(k.Want, "character"), k.Got)
	case *kind.MinItems:
		d.size(where, DiagCount, "at least "+count(k.Want, "item"), k.Got)
	case *kind.MaxItems:
		d.size(where, DiagCount, "at most "+count(k.Want, "item"), k.Got)
	case *kind.MinProperties:
		d.size(where, DiagCount, "at least "+count(k.Want, "field"), k.Got)
	case *kind.MaxProperties:
		d.size(where, DiagCount, "at most "+count(k.Want, "field"), k.Got)
	case *kind.UniqueItems:
		d.Code, d.Expected = DiagUnique, "items that differ"
		d.Message = fmt.Sprintf("%s must not repeat an item; items %d and %d are equal", where, k.Duplicates[0], k.Duplicates[1])
	case *kind.OneOf:
		d.Code, d.Expected = DiagAlternative, "exactly one of the declared forms"
		if len(k.Subschemas) == 0 {
			d.Message = fmt.Sprintf("%s matches none of the forms the contract allows here", where)
		} else {
			d.Message = fmt.Sprintf("%s matches more than one of the forms the contract allows here (forms %s); it must match exactly one", where, joinInts(k.Subschemas))
		}
	case *kind.AnyOf:
		d.Code, d.Expected = DiagAlternative, "one of the declared forms"
		d.Message = fmt.Sprintf("%s matches none of the forms the contract allows here", where)
	case *kind.FalseSchema:
		d.Code, d.Expected = DiagForbidden, "nothing"
		d.Message = fmt.Sprintf("%s is not allowed here", where)
	case *kind.Not:
		d.Code, d.Expected = DiagForbidden, "a value the contract does not exclude"
		d.Message = fmt.Sprintf("%s has a form the contract excludes here", where)
	default:
		d.Code = DiagInvalid
		d.Message = fmt.Sprintf("%s does not satisfy the contract's %s rule", where, keyword(e.ErrorKind))
	}
	return []Diagnostic{d}
}

// holdsJSON reports whether s is a JSON object or array written as text.
func holdsJSON(s string) bool {
	s = strings.TrimSpace(s)
	if s == "" || (s[0] != '{' && s[0] != '[') {
		return false
	}
	return json.Valid([]byte(s))
}

// count is "1 item", "2 items".
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

func keyword(k jsonschema.ErrorKind) string {
	p := k.KeywordPath()
	if len(p) == 0 {
		return "schema"
	}
	return p[len(p)-1]
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x + 1)
	}
	return strings.Join(s, ", ")
}

// bound fills d for a value outside a numeric constraint: the message is
// "<where> must be <expected>; got <got>".
func (d *Diagnostic) bound(where, code, expected, got string) {
	d.Code, d.Expected = code, expected
	d.Message = fmt.Sprintf("%s must be %s; got %s", where, expected, got)
}

// size fills d for a length or count outside its constraint: the message
// is "<where> must have <expected>; it has <got>".
func (d *Diagnostic) size(where, code, expected string, got int) {
	d.Code, d.Expected = code, expected
	d.Message = fmt.Sprintf("%s must have %s; it has %d", where, expected, got)
}

func ratString(r *big.Rat) string {
	if r == nil {
		return "?"
	}
	if r.IsInt() {
		return r.Num().String()
	}
	f, _ := r.Float64()
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// article puts the article before a type name (schemamsg.WithArticle).
func article(s string) string { return schemamsg.WithArticle(s) }

// display renders a JSON value for a message: scalars as JSON, objects and
// arrays by kind.
func display(v any) string {
	switch x := v.(type) {
	case map[string]any:
		return fmt.Sprintf("an object of %d fields", len(x))
	case []any:
		return fmt.Sprintf("an array of %d items", len(x))
	case string:
		return strconv.Quote(schemamsg.Cut(x, maxShownValue))
	case nil:
		return "null"
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return "a value"
	}
	return string(raw)
}

// shown is the offending value as a diagnostic carries it: scalars, a
// long string cut; objects and arrays are left to the message.
func shown(v any) any {
	switch x := v.(type) {
	case map[string]any, []any, nil:
		return nil
	case string:
		return schemamsg.Cut(x, maxShownValue)
	}
	return v
}

func valueAt(inst any, tokens []string) any {
	cur := inst
	for _, tok := range tokens {
		switch c := cur.(type) {
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(c) {
				return nil
			}
			cur = c[i]
		case map[string]any:
			cur = c[tok]
		default:
			return nil
		}
	}
	return cur
}

func joinField(at, name string) string {
	if at == "" {
		return name
	}
	return at + "." + name
}
