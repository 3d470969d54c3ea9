package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kubepact/kubepact/internal/openapitools"
)

// The discovery tools: what a capability family offers instead of one
// tool per operation when the bundle's tool mode is discover (see
// openapitools.ToolModeDiscover). They hold no state between calls — the
// index is the bundle's, built once — so a stateless 2026-07-28 client and
// any replica get the same answers.
const (
	toolSearchOperations   = "pacto_search_operations"
	toolDescribeOperations = "pacto_describe_operations"
	toolCallRead           = "pacto_call_read"
	toolCallWrite          = "pacto_call_write"
)

// Bounds of the discovery answers.
const (
	defaultSearchLimit = 10
	maxSearchLimit     = 50
	// maxSearchBytes caps the hits of one search as JSON; the rest are
	// left out and the answer says truncated.
	maxSearchBytes = 24 << 10
	// maxDescribe is how many operations one describe call returns.
	maxDescribe = 5
	// maxTagsListed bounds the tags the search tool's description names.
	maxTagsListed = 60
	// maxQueryBytes bounds a search query: a sentence, not a document;
	// longer would only cost CPU.
	maxQueryBytes = 1024
)

// discovery is one bundle's discovery tools and the generated tools
// they call.
type discovery struct {
	st    *capabilityState
	tools map[string]*tool // every exposed operation's tool, by name
	names []string         // their names, for did-you-mean
	why   string           // why the server is in discovery mode
}

// discoveryTools returns the discovery tools and the operations pinned as
// tools of their own, for the generated tools built from the capability.
func (st *capabilityState) discoveryTools(generated []*tool, output *jsonschema.Schema, why string) ([]*tool, error) {
	d := &discovery{st: st, tools: map[string]*tool{}, why: why}
	// On a read-only server the operations that write are not offered,
	// here as anywhere (lookup says so).
	generated = slices.DeleteFunc(slices.Clone(generated), func(t *tool) bool { return st.readOnly && t.writes() })
	for _, t := range generated {
		d.tools[t.name] = t
		d.names = append(d.names, t.name)
	}
	st.discovery = d
	var out []*tool
	for _, name := range st.cb.Capability.Pins() {
		if t := d.tools[name]; t != nil {
			out = append(out, t)
		}
	}
	search, err := newTool(toolSpec{
		name:        toolSearchOperations,
		title:       "Search the service's operations",
		description: d.searchDescription(),
		hints:       hints{readOnly: true, idempotent: true},
	}, d.search)
	if err != nil {
		return nil, err
	}
	describe, err := newTool(toolSpec{
		name:        toolDescribeOperations,
		title:       "Describe operations: their exact input and output schemas",
		description: fmt.Sprintf("Return the exact input schema (of arguments), output schema, annotations and description of up to %d operations found by pacto_search_operations. Calls nothing.", maxDescribe),
		hints:       hints{readOnly: true, idempotent: true},
	}, d.describe)
	if err != nil {
		return nil, err
	}
	out = append(out, search, describe)
	openWorld, writes := false, false
	for _, t := range generated {
		openWorld = openWorld || t.hints.openWorld
		writes = writes || t.writes()
	}
	read, err := d.callTool(toolCallRead, output, hints{readOnly: true, idempotent: true, openWorld: openWorld},
		"Call a read-only operation of the LIVE service by name with its arguments (see pacto_describe_operations); answers as the operation's own tool would. Refuses, sending nothing, an operation that writes.")
	if err != nil {
		return nil, err
	}
	out = append(out, read)
	if writes {
		write, err := d.callTool(toolCallWrite, output, hints{destructive: true, openWorld: openWorld},
			"Call an operation that changes the LIVE service (POST, PUT, PATCH, DELETE) by name with its arguments (see pacto_describe_operations); only when the user asked for that change. Asks the user to confirm where its own tool would.")
		if err != nil {
			return nil, err
		}
		out = append(out, write)
	}
	return out, nil
}

// searchDescription names what is behind the search: the API, how many
// operations, its tags with their counts.
func (d *discovery) searchDescription() string {
	c := d.st.cb.Capability
	var b strings.Builder
	fmt.Fprintf(&b, "Search the %d operations of %s (service %s; also the %d withheld, with why) by what they do, in words. Returns names, summaries, annotations and the call tool; pacto_describe_operations then gives the arguments.",
		len(c.Tools), c.Title(), serviceName(d.st.cb), len(c.Withheld))
	if tags := c.Tags(); len(tags) > 0 {
		b.WriteString(" Tags (operations): ")
		for i, tc := range tags {
			if i == maxTagsListed {
				fmt.Fprintf(&b, ", and %d more", len(tags)-i)
				break
			}
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "%s (%d)", tc.Tag, tc.Operations)
		}
		b.WriteString(".")
	}
	return b.String()
}

// SearchArgs are pacto_search_operations' arguments.
type SearchArgs struct {
	Query  string `json:"query,omitempty" jsonschema:"what the operation does, e.g. list open pull requests"`
	Tag    string `json:"tag,omitempty" jsonschema:"only operations with this tag"`
	Access string `json:"access,omitempty" jsonschema:"read or write: only operations that do"`
	Limit  int    `json:"limit,omitempty" jsonschema:"1 to 50, default 10"`
}

// OperationHit is one operation a search found.
type OperationHit struct {
	Name        string       `json:"name"`
	Method      string       `json:"method"`
	Path        string       `json:"path"`
	Summary     string       `json:"summary,omitempty"`
	Tags        []string     `json:"tags,omitempty"`
	Annotations *Annotations `json:"annotations"`
	CallWith    string       `json:"callWith,omitempty" jsonschema:"absent when withheld"`
	Withheld    *WithheldOp  `json:"withheld,omitempty"`
}

// Annotations are an operation's MCP tool annotations, as its own tool
// would carry them.
type Annotations struct {
	ReadOnly    bool `json:"readOnlyHint"`
	Destructive bool `json:"destructiveHint"`
	Idempotent  bool `json:"idempotentHint"`
	OpenWorld   bool `json:"openWorldHint"`
}

// WithheldOp is why an operation is not offered.
type WithheldOp struct {
	Code   string `json:"code"`
	Reason string `json:"reason"`
}

// SearchResult is pacto_search_operations' answer.
type SearchResult struct {
	Operations []OperationHit `json:"operations"`
	Matched    int            `json:"matched" jsonschema:"before limit"`
	Truncated  bool           `json:"truncated,omitempty" jsonschema:"cut to the byte cap"`
}

func (d *discovery) search(_ context.Context, in SearchArgs) (*SearchResult, string, error) {
	limit := in.Limit
	switch {
	case limit == 0:
		limit = defaultSearchLimit
	case limit < 1 || limit > maxSearchLimit:
		return nil, "", &ToolError{Code: CodeInvalidArgument, Field: "limit", Message: fmt.Sprintf("limit %d is out of range: give 1 to %d (default %d)", limit, maxSearchLimit, defaultSearchLimit)}
	}
	if len(in.Query) > maxQueryBytes {
		return nil, "", &ToolError{Code: CodeInvalidArgument, Field: "query", Message: fmt.Sprintf("the query is %d bytes; give at most %d: a few words saying what the operation does", len(in.Query), maxQueryBytes)}
	}
	access := strings.ToLower(strings.TrimSpace(in.Access))
	switch access {
	case "", openapitools.AccessRead, openapitools.AccessWrite:
	default:
		return nil, "", &ToolError{Code: CodeInvalidArgument, Field: "access", Message: fmt.Sprintf("access %q is not accepted: give read, write or leave it empty", in.Access),
			DidYouMean: suggest(in.Access, []string{openapitools.AccessRead, openapitools.AccessWrite})}
	}
	c := d.st.cb.Capability
	if in.Tag != "" {
		var tags []string
		for _, tc := range c.Tags() {
			tags = append(tags, tc.Tag)
		}
		if !slices.ContainsFunc(tags, func(t string) bool { return strings.EqualFold(t, in.Tag) }) {
			return nil, "", &ToolError{Code: "NOT_FOUND", Field: "tag", Message: fmt.Sprintf("no operation has the tag %q; the tags are listed in this tool's description", in.Tag), DidYouMean: suggest(in.Tag, tags)}
		}
	}
	res := c.Search(openapitools.Query{Text: in.Query, Tag: in.Tag, Access: access, Limit: limit})
	out := &SearchResult{Operations: []OperationHit{}, Matched: res.Matched}
	size := 0
	for _, h := range res.Hits {
		hit := d.hit(h)
		raw, _ := json.Marshal(hit)
		if size += len(raw); size > maxSearchBytes {
			out.Truncated = true
			break
		}
		out.Operations = append(out.Operations, hit)
	}
	var names []string
	for _, h := range out.Operations {
		names = append(names, h.Name)
	}
	summary := fmt.Sprintf("%d of %d matching operation(s)", len(out.Operations), res.Matched)
	if len(names) > 0 {
		summary += ": " + strings.Join(names, ", ") + ". pacto_describe_operations gives their arguments."
	}
	return out, summary, nil
}

func (d *discovery) hit(h openapitools.Hit) OperationHit {
	out := OperationHit{Name: h.Name, Method: h.Method, Path: h.Path, Summary: h.Summary, Tags: h.Tags,
		Annotations: annotationsOf(hints{readOnly: h.Hints.ReadOnly, destructive: h.Hints.Destructive, idempotent: h.Hints.Idempotent, openWorld: h.Hints.OpenWorld})}
	switch {
	case h.Withheld != nil:
		out.Withheld = &WithheldOp{Code: h.Withheld.Code, Reason: FlagWords(h.Withheld.Reason, openapitools.FlagNames)}
	case d.tools[h.Name] == nil:
		// Exposed by the projection, left out by this server (read-only).
		out.Withheld = &WithheldOp{Code: withheldReadOnly, Reason: "it can write and this server is read-only (--read-only)"}
	default:
		out.CallWith = d.callerOf(d.tools[h.Name])
	}
	return out
}

func (d *discovery) callerOf(t *tool) string {
	if t.writes() {
		return toolCallWrite
	}
	return toolCallRead
}

func annotationsOf(h hints) *Annotations {
	return &Annotations{ReadOnly: h.readOnly, Destructive: h.destructive, Idempotent: h.idempotent, OpenWorld: h.openWorld}
}

// DescribeArgs are pacto_describe_operations' arguments.
type DescribeArgs struct {
	Names []string `json:"names" jsonschema:"1 to 5 operation names"`
}

// OperationDescription is one described operation.
type OperationDescription struct {
	Name         string          `json:"name"`
	Method       string          `json:"method"`
	Path         string          `json:"path"`
	Title        string          `json:"title,omitempty"`
	Description  string          `json:"description,omitempty"`
	Annotations  *Annotations    `json:"annotations"`
	CallWith     string          `json:"callWith"`
	Confirmation bool            `json:"needsConfirmation"`
	InputSchema  json.RawMessage `json:"inputSchema" jsonschema:"of arguments"`
	OutputSchema json.RawMessage `json:"outputSchema"`
}

// DescribeResult is pacto_describe_operations' answer.
type DescribeResult struct {
	Operations []OperationDescription `json:"operations"`
}

func (d *discovery) describe(_ context.Context, in DescribeArgs) (*DescribeResult, string, error) {
	if len(in.Names) == 0 || len(in.Names) > maxDescribe {
		return nil, "", &ToolError{Code: CodeInvalidArgument, Field: "names", Message: fmt.Sprintf("give 1 to %d operation names (got %d); pacto_search_operations finds them", maxDescribe, len(in.Names))}
	}
	out := &DescribeResult{}
	for i, name := range in.Names {
		t, te := d.lookup(name, fmt.Sprintf("names[%d]", i))
		if te != nil {
			return nil, "", te
		}
		ct := d.st.cb.Capability.Tool(name)
		st := t.sdkTool()
		input, _ := st.InputSchema.(json.RawMessage)
		output, _ := st.OutputSchema.(json.RawMessage)
		out.Operations = append(out.Operations, OperationDescription{Name: name, Method: ct.Method, Path: ct.Path, Title: t.title, Description: t.description,
			Annotations: annotationsOf(t.hints), CallWith: d.callerOf(t), Confirmation: ct.NeedsConfirmation(), InputSchema: input, OutputSchema: output})
	}
	return out, fmt.Sprintf("%d operation(s) described; call one with %s or %s as {operation, arguments}.", len(out.Operations), toolCallRead, toolCallWrite), nil
}

// lookup finds an offered operation by name, or says in field why not.
func (d *discovery) lookup(name, field string) (*tool, *ToolError) {
	if t := d.tools[name]; t != nil {
		return t, nil
	}
	if te := d.st.withheldError(name); te != nil {
		te.Field = field
		return nil, te
	}
	if d.st.cb.Capability.Tool(name) != nil { // exposed, left out by --read-only
		return nil, &ToolError{Code: CodeToolWithheld, Field: field, Reason: withheldReadOnly,
			Message: fmt.Sprintf("%s is not offered: it can write and this server is read-only. Nothing was done.", name), Remedy: "start the server without the read-only option (--read-only)"}
	}
	shown := strconv.Quote(name)
	if len(name) > openapitools.MaxNameLength {
		shown = fmt.Sprintf("of %d bytes (names are at most %d)", len(name), openapitools.MaxNameLength)
	}
	return nil, &ToolError{Code: "NOT_FOUND", Field: field, Message: fmt.Sprintf("no operation is named %s; pacto_search_operations finds operations by what they do", shown), DidYouMean: suggest(name, d.names)}
}

// CallArgs are the call tools' arguments.
type CallArgs struct {
	Operation string          `json:"operation" jsonschema:"operation name"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
}

// callTool is one of the two call tools; hints are its own, honest for
// every operation it accepts.
func (d *discovery) callTool(name string, output *jsonschema.Schema, h hints, description string) (*tool, error) {
	input, err := jsonschema.For[CallArgs](&jsonschema.ForOptions{TypeSchemas: rawTypeSchemas})
	if err != nil {
		return nil, err
	}
	input.Properties["arguments"] = &jsonschema.Schema{Type: "object", Description: "as its inputSchema says"}
	dec, err := newArgDecoder(input)
	if err != nil {
		return nil, err
	}
	title := map[bool]string{true: "Call a read-only operation", false: "Call an operation that changes the service"}[h.readOnly]
	return &tool{
		name: name, title: title, description: description, hints: h, input: input, output: output, dispatches: true,
		call: func(ctx context.Context, raw json.RawMessage) *sdk.CallToolResult {
			var in CallArgs
			if err := dec.decode(raw, &in); err != nil {
				return errorResult(err)
			}
			t, te := d.lookup(in.Operation, "operation")
			if te != nil {
				return errorResult(te)
			}
			if t.writes() && h.readOnly {
				return errorResult(&ToolError{Code: CodeInvalidArgument, Field: "operation", Reason: "WRITE_OPERATION",
					Message: fmt.Sprintf("%s changes the service (%s); %s calls only read-only operations, so nothing was sent", in.Operation, d.methodPath(in.Operation), name),
					Remedy:  "call it with " + toolCallWrite + ", only when the user asked for that change"})
			}
			if !t.writes() && !h.readOnly {
				return errorResult(&ToolError{Code: CodeInvalidArgument, Field: "operation", Reason: "READ_OPERATION",
					Message: fmt.Sprintf("%s is read-only (%s); %s calls only operations that change the service, so nothing was sent", in.Operation, d.methodPath(in.Operation), name),
					Remedy:  "call it with " + toolCallRead})
			}
			args := in.Arguments
			if len(args) == 0 || string(args) == "null" {
				args = json.RawMessage("{}")
			}
			return t.call(ctx, args)
		},
	}, nil
}

func (d *discovery) methodPath(name string) string {
	if ct := d.st.cb.Capability.Tool(name); ct != nil {
		return ct.Method + " " + ct.Path
	}
	return name
}

// operationOf is the operation a call tool's raw arguments name, for the
// audit line; empty when they name none.
func operationOf(raw json.RawMessage) string {
	var in struct {
		Operation string `json:"operation"`
	}
	if json.Unmarshal(raw, &in) != nil || len(in.Operation) > openapitools.MaxNameLength {
		return ""
	}
	return in.Operation
}

// discoveryInstructions is the capability paragraph of a server in
// discovery mode.
func (d *discovery) instructions(registered []*tool) string {
	c := d.st.cb.Capability
	var b strings.Builder
	fmt.Fprintf(&b, "\n\nService %s: its %d operations (%s) are offered through discovery, not one tool each — %s. ", serviceName(d.st.cb), len(c.Tools), c.Title(), d.why)
	b.WriteString("Find an operation with pacto_search_operations (words; filters tag and access), read its exact arguments with pacto_describe_operations, then call it with " + toolCallRead + " (read-only operations)")
	hasWrite := slices.ContainsFunc(registered, func(t *tool) bool { return t.name == toolCallWrite })
	if hasWrite {
		b.WriteString(" or " + toolCallWrite + " (operations that change the live service; call them only when the user asked for that change)")
	}
	b.WriteString(", as {operation, arguments}. A call reaches the LIVE service and returns structuredContent {status, headers, body, truncated, timedOut, durationMs}; its arguments are checked against the operation before anything is sent (INVALID_ARGUMENT with per-field diagnostics).")
	var pinned []string
	for _, t := range registered {
		if t.generated {
			pinned = append(pinned, t.name)
		}
	}
	if len(pinned) > 0 {
		fmt.Fprintf(&b, " Also offered as tools of their own: %s.", strings.Join(pinned, ", "))
	}
	switch {
	case hasWrite && c.ConfirmWrites != openapitools.ConfirmNever:
		fmt.Fprintf(&b, " A call that needs the user's confirmation (needsConfirmation in pacto_describe_operations) first asks the user to confirm the exact request; a declined call, or one from a client that cannot ask, is not sent and answers error.code %s. On protocol 2026-07-28 it answers input-required: retry the same call once with the user's answer and the requestState unchanged.", CodeNotConfirmed)
	case !c.WritesAllowed:
		b.WriteString(" Writes are OFF: only GET and HEAD operations are offered; the others are found by search with their withheld reason (the operator can start the server with --allow-writes).")
	}
	if l := c.Lock; l != nil {
		fmt.Fprintf(&b, " The operations are held to a tools lock (lockDigest %s): one that differs from it is withheld with reason DRIFT.", l.LockDigest)
	}
	if len(c.Withheld) > 0 {
		fmt.Fprintf(&b, " %d operation(s) are withheld: pacto_withheld (or the resource %s) lists each with its reason.", len(c.Withheld), withheldURI)
	}
	b.WriteString(" Skills: the bundle's domain guides are read with pacto_skill; read the relevant one before a multi-step task.")
	return b.String()
}
