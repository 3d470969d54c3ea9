package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kubepact/kubepact/bundle"
	"github.com/kubepact/kubepact/internal/grpctools"
	"github.com/kubepact/kubepact/internal/openapitools"
	"github.com/kubepact/kubepact/internal/openapitools/invoke"
)

// CapabilityBundle is what the capability family serves: a loaded bundle
// and its projection (see internal/openapitools).
type CapabilityBundle struct {
	Bundle     *bundle.Bundle
	Capability *openapitools.Capability
	// GRPC is the projection of the bundle's gRPC interfaces (see
	// internal/grpctools); nil without any.
	GRPC *grpctools.Capability
}

// Skill URIs: one resource per skill, and a template for skills added to a
// local bundle after start.
const (
	skillURIPrefix   = "pacto://skills/"
	skillURITemplate = "pacto://skills/{name}"
	withheldURI      = "pacto://capability/withheld"
)

// capabilityState is what the capability family keeps for the
// instructions and for the resources and prompts registered once the SDK
// server exists.
type capabilityState struct {
	cb     *CapabilityBundle
	skills []string // at start; pacto_skill itself lists at call time
	// confirms asks for, and on the 2026-07-28 era issues and checks, the
	// confirmations of the generated tools' calls.
	confirms *confirmations
	// readOnly is the server's ReadOnly: the discovery tools then call no
	// operation that writes.
	readOnly bool
	// discovery is set when the family offers the discovery tools instead
	// of one tool per operation (discover.go).
	discovery *discovery
}

// capabilityFamily is one bundle's OpenAPI operations as tools that call
// the live service, with the bundle's skills and its withheld operations.
var capabilityFamily = &family{
	name:    FamilyCapability,
	summary: "capability — one generated tool per OpenAPI operation of the bundle being served, each calling the live service; pacto_skill reads the bundle's skills and pacto_withheld lists the operations not exposed",
	build: func(_ context.Context, env *familyEnv) (*familyParts, error) {
		cb := env.opts.Capability
		if cb == nil || cb.Bundle == nil || cb.Capability == nil {
			return nil, errors.New("the capability family needs a bundle (kubepact mcp BUNDLE)")
		}
		st := &capabilityState{cb: cb, confirms: env.confirms, readOnly: env.opts.ReadOnly}
		if fsys, done, err := st.skillFS(); err == nil {
			if names, err := bundle.ListSkills(fsys); err == nil {
				st.skills = names
			}
			done()
		}
		tools, err := st.tools()
		if err != nil {
			return nil, err
		}
		return &familyParts{tools: tools, register: st.register, instructions: st.instructions, describesWrites: true, withheld: st.familyWithheld, readTTL: st.readTTL,
			leanList: st.discovery != nil}, nil
	},
}

// tools builds the generated tools, pacto_skill and pacto_withheld.
func (st *capabilityState) tools() ([]*tool, error) {
	cb := st.cb

	output, err := generatedOutput()
	if err != nil {
		return nil, err
	}

	var out []*tool
	for _, ct := range cb.Capability.Tools {
		t, err := generatedTool(ct, output, st.confirms)
		if err != nil {
			return nil, fmt.Errorf("generated tool %s: %w", ct.Name, err)
		}
		out = append(out, t)
	}
	if mode, why := cb.Capability.Mode(); mode == openapitools.ToolModeDiscover {
		if out, err = st.discoveryTools(out, output, why); err != nil {
			return nil, err
		}
	}
	grpcs, err := grpcTools(cb, st.confirms)
	if err != nil {
		return nil, err
	}
	out = append(out, grpcs...)
	skillInput, err := jsonschema.For[SkillArgs](nil)
	if err != nil {
		return nil, err
	}
	skillInput.Properties["name"].Description = st.skillNameHelp()
	skill, err := newTool(toolSpec{
		input: skillInput,
		name:  "pacto_skill",
		title: "Read the bundle's skills",
		description: "List the domain skills (skills/*.md) the " + serviceName(cb) + " bundle ships when called without arguments; " +
			"with name (a bare name from that list) return that skill's Markdown. Skills describe workflows and business rules the interface alone cannot; " +
			"read the relevant one before a multi-step task. A local bundle is read from disk on every call.",
		hints: hints{readOnly: true, idempotent: true},
	}, st.skill)
	if err != nil {
		return nil, err
	}
	withheld, err := newTool(toolSpec{
		name:  "pacto_withheld",
		title: "List operations not exposed as tools",
		description: "List every OpenAPI operation of the bundle that is not exposed as a tool, with its tool name and why " +
			"(WRITES_NOT_ALLOWED, DENIED, NOT_ALLOWED, FILTERED: by a tag or path filter, RESERVED_NAME, UNSUPPORTED, CREDENTIAL_IN_QUERY, DRIFT: differs from the tools lock), per interface the base URL and counts, " +
			"and, when the server is held to a tools lock, the lock's digest and the locked tools the bundle no longer has. Takes no arguments; calls nothing.",
		hints: hints{readOnly: true, idempotent: true},
	}, st.withheldList)
	if err != nil {
		return nil, err
	}
	return append(out, skill, withheld), nil
}

// generatedOutput is the output schema of the generated tools (and the
// discovery call tools): what invoke.Call answers. It is the same for
// every bundle, so it is made once a process, and frozen (freezeOutput).
var generatedOutput = sync.OnceValues(func() (*jsonschema.Schema, error) {
	output, err := jsonschema.For[invoke.Result](&jsonschema.ForOptions{})
	if err != nil {
		return nil, err
	}
	diags, err := jsonschema.For[[]invoke.Diagnostic](nil)
	if err != nil {
		return nil, err
	}
	output.Properties["diagnostics"] = diags
	// Inferred from an interface, body is the empty schema, which encodes
	// as true; say what it holds instead (mcpShape would make it {}).
	output.Properties["body"] = &jsonschema.Schema{
		Description: "the response body: the JSON value for a JSON response, else text, else base64 (bodyEncoding says so); null when empty",
	}
	return freezeOutput(output), nil
})

// generatedTool wraps one projected operation; confirms asks for the
// confirmations its calls need.
func generatedTool(ct *openapitools.Tool, output *jsonschema.Schema, confirms *confirmations) (*tool, error) {
	if !json.Valid(ct.InputSchema) {
		return nil, errors.New("the input schema is not JSON")
	}
	title := ct.Title
	if title == "" {
		title = ct.Method + " " + ct.Path
	}
	return &tool{
		name:        ct.Name,
		title:       title,
		description: ct.Description,
		hints:       hints{readOnly: ct.Hints.ReadOnly, destructive: ct.Hints.Destructive, idempotent: ct.Hints.Idempotent, openWorld: ct.Hints.OpenWorld},
		inputJSON:   ct.InputSchema,
		output:      output,
		generated:   true,
		call: generatedCall(callSteps{
			input:             ct.InputSchema,
			resolved:          ct.ArgumentSchemas,
			refuse:            func(diags []invoke.Diagnostic) *sdk.CallToolResult { return argumentRefusal(ct, diags) },
			confirms:          confirms,
			needsConfirmation: ct.NeedsConfirmation,
			send: func(ctx context.Context, dec *argDecoder, values map[string]any, _ json.RawMessage) (*sdk.CallToolResult, error) {
				res, err := invoke.Call(ctx, ct, values)
				if err != nil {
					// errors.As's target (on the heap) only for an error:
					// an object on every answered call otherwise.
					if ae := (*invoke.ArgumentError)(nil); errors.As(err, &ae) && len(ae.Diagnostics) > 0 {
						return argumentRefusal(ct, dec.expecting(ae.Diagnostics)), nil
					}
					return nil, err
				}
				return &sdk.CallToolResult{
					IsError:           res.IsError(),
					Content:           []sdk.Content{&sdk.TextContent{Text: resultText(ct, res)}},
					StructuredContent: res,
				}, nil
			},
		}),
	}, nil
}

// callSteps are what differs between generated tools' calls (OpenAPI,
// gRPC): the input schema (and, when the projection resolved them, its
// properties' schemas), the refusal of arguments that fail it, and the
// call itself.
type callSteps struct {
	input    json.RawMessage
	resolved func() map[string]*jsonschema.Resolved // nil: resolved here
	refuse   func([]invoke.Diagnostic) *sdk.CallToolResult
	confirms *confirmations
	// needsConfirmation is the tool's NeedsConfirmation: whether send may
	// ask a person through the confirmer.
	needsConfirmation func() bool
	// send makes the call with the checked values (and the arguments as
	// given); an error it does not answer itself is the tool's error.
	send func(ctx context.Context, dec *argDecoder, values map[string]any, args json.RawMessage) (*sdk.CallToolResult, error)
}

// generatedCall is the call of a generated tool. The decoder is built on
// the tool's first call (a large API's tools are registered without
// compiling a schema for the ones never called); the arguments are checked
// against it, every fault at once, and a fault is refused with nothing
// sent; then send calls under the confirmer of the checked values, and a
// call that waits for the user's confirmation answers input-required.
func generatedCall(s callSteps) func(context.Context, json.RawMessage) *sdk.CallToolResult {
	var (
		decOnce sync.Once
		dec     *argDecoder
		decErr  error
	)
	return func(ctx context.Context, args json.RawMessage) *sdk.CallToolResult {
		decOnce.Do(func() {
			var input jsonschema.Schema
			if decErr = json.Unmarshal(s.input, &input); decErr != nil {
				return
			}
			var resolved map[string]*jsonschema.Resolved
			if s.resolved != nil {
				resolved = s.resolved()
			}
			if dec, decErr = newArgDecoderResolved(&input, resolved); decErr == nil {
				dec.encoded = false // a string is a value of its own here
			}
		})
		if decErr != nil {
			return errorResult(fmt.Errorf("the tool's input schema could not be compiled: %w", decErr))
		}
		values, diags := dec.checkAll(args)
		if len(diags) > 0 {
			return s.refuse(diags)
		}
		// Only a call that may ask a person carries the confirmer (invoke
		// asks no one else): two objects a call for the others.
		if s.needsConfirmation() {
			ctx = invoke.WithConfirmer(ctx, s.confirms.confirmer(values))
		}
		res, err := s.send(ctx, dec, values, args)
		if err != nil {
			if ask := (*inputRequired)(nil); errors.As(err, &ask) {
				return ask.result()
			}
			return errorResult(err)
		}
		return res
	}
}

// resultText is the text beside the structured result: one line of
// outcome. The result itself (status, headers, body) is carried once, in
// structuredContent, so the response cap bounds the whole answer.
func resultText(ct *openapitools.Tool, res *invoke.Result) string {
	var head string
	switch {
	case res.TimedOut:
		head = fmt.Sprintf("%s %s timed out after %.0f ms", ct.Method, ct.Path, res.DurationMs)
	case res.Status == 0:
		head = fmt.Sprintf("%s %s did not complete: %s", ct.Method, ct.Path, res.Failure)
	case res.Failure != "":
		head = fmt.Sprintf("%s %s → %d, but %s (%.1f ms)", ct.Method, ct.Path, res.Status, res.Failure, res.DurationMs)
	default:
		// every successful call's line: built in one buffer, one string
		// (a Sprintf boxes the status and duration, then the string is
		// built again below)
		b := make([]byte, 0, 256)
		b = append(append(append(b, ct.Method...), ' '), ct.Path...)
		b = strconv.AppendInt(append(b, " → "...), int64(res.Status), 10)
		b = strconv.AppendFloat(append(b, " ("...), res.DurationMs, 'f', 1, 64)
		b = append(b, " ms)"...)
		if res.Truncated {
			b = append(b, truncatedNote...)
		}
		return string(append(b, structuredNote...))
	}
	if res.Truncated && res.Failure == "" {
		head += truncatedNote
	}
	return head + structuredNote
}

// The tails of resultText's line.
const (
	truncatedNote  = "; cut to the response byte cap"
	structuredNote = "; the response is in structuredContent {status, headers, body, bodyEncoding, truncated, timedOut, durationMs, failure}"
)

// skillFS is where skills are read: the directory itself for a local
// bundle (so edits and new skills show without a restart), else the
// pulled bundle's files. The directory is read through an [os.Root]: it
// was checked when it was loaded, not since, and a link out of it (to a
// key or a credentials file) must not be served as a skill. Call done
// when finished.
func (st *capabilityState) skillFS() (fsys fs.FS, done func(), err error) {
	if dir := st.cb.Bundle.Source.Dir; dir != "" {
		root, err := os.OpenRoot(dir)
		if err != nil {
			return nil, nil, fmt.Errorf("opening the bundle directory: %w", err)
		}
		return root.FS(), func() { _ = root.Close() }, nil
	}
	return st.cb.Bundle.FS, func() {}, nil
}

// SkillArgs are pacto_skill's arguments. The description of name is
// written per bundle (skillNameHelp), so its example is a skill the
// served bundle has.
type SkillArgs struct {
	Name string `json:"name,omitempty"`
}

// skillNameHelp describes pacto_skill's name argument with an example
// from the bundle's own skills at start.
func (st *capabilityState) skillNameHelp() string {
	if len(st.skills) == 0 {
		return "bare skill name from the list pacto_skill returns without arguments (this bundle shipped no skills at start); omit to list the skills"
	}
	return fmt.Sprintf("bare skill name from the list (e.g. %s); omit to list the skills", st.skills[0])
}

// SkillResult is pacto_skill's answer: the list, or one skill.
type SkillResult struct {
	Skills   []string `json:"skills,omitempty" jsonschema:"bare names of the bundle's skills (without name)"`
	Name     string   `json:"name,omitempty" jsonschema:"the skill returned (with name)"`
	Markdown string   `json:"markdown,omitempty" jsonschema:"the skill's Markdown (with name)"`
}

func (st *capabilityState) skill(_ context.Context, in SkillArgs) (*SkillResult, string, error) {
	fsys, done, err := st.skillFS()
	if err != nil {
		return nil, "", err
	}
	defer done()
	if in.Name == "" {
		names, err := bundle.ListSkills(fsys)
		if err != nil {
			return nil, "", err
		}
		if len(names) == 0 {
			return &SkillResult{Skills: []string{}}, "This bundle ships no skills.", nil
		}
		return &SkillResult{Skills: names}, "Skills: " + strings.Join(names, ", ") + ". Call pacto_skill with name to read one.", nil
	}
	md, err := bundle.ReadSkill(fsys, in.Name)
	if err != nil {
		names, _ := bundle.ListSkills(fsys)
		has := "This bundle ships no skills."
		if len(names) > 0 {
			has = fmt.Sprintf("Skills: %s; for example {\"name\": %q}.", strings.Join(names, ", "), names[0])
		}
		if strings.ContainsAny(in.Name, `/\`) || strings.HasPrefix(in.Name, ".") || strings.TrimSuffix(in.Name, ".md") == "" {
			return nil, "", &ToolError{Code: CodeInvalidArgument, Field: "name",
				Message: fmt.Sprintf("skill name %q is not accepted: give a bare name, without folders or a leading dot. %s", in.Name, has)}
		}
		if bare := strings.TrimSuffix(in.Name, ".md"); !slices.Contains(names, bare) {
			return nil, "", &ToolError{Code: "NOT_FOUND", Field: "name", Message: fmt.Sprintf("no skill is named %q. %s", bare, has), DidYouMean: suggest(bare, names)}
		}
		return nil, "", err // present but unreadable: too big, not a regular file
	}
	name := strings.TrimSuffix(in.Name, ".md")
	return &SkillResult{Name: name, Markdown: md}, md, nil
}

// WithheldResult is pacto_withheld's answer.
type WithheldResult struct {
	Service       string                          `json:"service"`
	WritesAllowed bool                            `json:"writesAllowed" jsonschema:"whether operations other than GET and HEAD may be exposed"`
	Interfaces    []openapitools.InterfaceSummary `json:"interfaces"`
	Withheld      []openapitools.Withheld         `json:"withheld" jsonschema:"every operation not exposed, with its reason"`
	LockDigest    string                          `json:"lockDigest" jsonschema:"digest of the generated tools offered, OpenAPI and gRPC (equals the lock's lockDigest when exactly the locked tools are offered)"`
	Lock          *LockSummary                    `json:"lock,omitempty" jsonschema:"the tools lock the generated tools are held to; absent without one"`
	// GRPCInterfaces and GRPCWithheld are the bundle's gRPC interfaces and
	// the RPCs not exposed; absent without gRPC interfaces.
	GRPCInterfaces []grpctools.InterfaceSummary `json:"grpcInterfaces,omitempty" jsonschema:"the bundle's gRPC interfaces (absent without any)"`
	GRPCWithheld   []grpctools.Withheld         `json:"grpcWithheld,omitempty" jsonschema:"every gRPC method not exposed, with its reason (STREAMING: client- or bidi-streaming)"`
}

type noArgs struct{}

func (st *capabilityState) withheldList(context.Context, noArgs) (*WithheldResult, string, error) {
	res := st.withheld()
	if res.GRPCInterfaces != nil {
		return res, fmt.Sprintf("%d operation(s) and %d gRPC method(s) withheld.", len(res.Withheld), len(res.GRPCWithheld)), nil
	}
	return res, fmt.Sprintf("%d operation(s) withheld.", len(res.Withheld)), nil
}

func (st *capabilityState) withheld() *WithheldResult {
	c := st.cb.Capability
	res := &WithheldResult{Service: c.Service, WritesAllowed: c.WritesAllowed, Interfaces: c.Interfaces, Withheld: make([]openapitools.Withheld, len(c.Withheld)),
		LockDigest: st.cb.lockDigest(), Lock: st.cb.lockSummary()}
	if res.Interfaces == nil {
		res.Interfaces = []openapitools.InterfaceSummary{}
	}
	// The reasons name option fields; this server's agent is told the
	// flags that set them.
	for i, w := range c.Withheld {
		w.Reason = FlagWords(w.Reason, openapitools.FlagNames)
		res.Withheld[i] = w
	}
	if g := st.cb.GRPC; g != nil {
		res.GRPCInterfaces = g.Interfaces
		for _, w := range g.Withheld {
			w.Reason = FlagWords(w.Reason, openapitools.FlagNames)
			res.GRPCWithheld = append(res.GRPCWithheld, w)
		}
	}
	return res
}

// readTTL is how long a read of the family's resources stays valid: the
// withheld list and a pulled bundle's skills are fixed for the server's
// life, while a local bundle's skills are read from disk on every call, so
// a read of one is stale at once.
func (st *capabilityState) readTTL(uri string) (time.Duration, bool) {
	switch {
	case uri == withheldURI:
		return FixedListTTL, true
	case !strings.HasPrefix(uri, skillURIPrefix):
		return 0, false
	case st.cb.Bundle.Source.Dir != "":
		return 0, true
	default:
		return FixedListTTL, true
	}
}

// register publishes the skills as resources and prompts, and the
// withheld list as a resource, once the SDK server exists.
func (st *capabilityState) register(srv *sdk.Server) {
	read := func(_ context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
		uri := req.Params.URI
		name, ok := strings.CutPrefix(uri, skillURIPrefix)
		if !ok {
			return nil, sdk.ResourceNotFoundError(uri)
		}
		if n, err := url.PathUnescape(name); err == nil {
			name = n
		}
		fsys, done, err := st.skillFS()
		if err != nil {
			return nil, err
		}
		defer done()
		md, err := bundle.ReadSkill(fsys, name)
		if err != nil {
			return nil, sdk.ResourceNotFoundError(uri)
		}
		return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: uri, MIMEType: "text/markdown", Text: md}}}, nil
	}
	for _, name := range st.skills {
		srv.AddResource(&sdk.Resource{URI: skillURIPrefix + url.PathEscape(name), Name: name, Title: "Skill: " + name, MIMEType: "text/markdown",
			Description: "A domain skill of the " + serviceName(st.cb) + " bundle (skills/" + name + ".md)."}, read)
		srv.AddPrompt(&sdk.Prompt{Name: name, Title: "Skill: " + name, Description: "Load the " + name + " skill of the " + serviceName(st.cb) + " bundle into the conversation."},
			func(_ context.Context, _ *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
				fsys, done, err := st.skillFS()
				if err != nil {
					return nil, err
				}
				defer done()
				md, err := bundle.ReadSkill(fsys, name)
				if err != nil {
					return nil, err
				}
				return &sdk.GetPromptResult{Description: "Skill " + name, Messages: []*sdk.PromptMessage{{Role: "user", Content: &sdk.TextContent{Text: md}}}}, nil
			})
	}
	srv.AddResourceTemplate(&sdk.ResourceTemplate{URITemplate: skillURITemplate, Name: "skill", Title: "A skill of the bundle", MIMEType: "text/markdown",
		Description: "Any skill of the bundle by bare name, read at call time."}, read)
	srv.AddResource(&sdk.Resource{URI: withheldURI, Name: "withheld-operations", Title: "Operations not exposed as tools", MIMEType: "application/json",
		Description: "Every OpenAPI operation of the bundle that is not a tool here, with its reason (the same as pacto_withheld)."},
		func(_ context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			raw, err := json.MarshalIndent(st.withheld(), "", "  ")
			if err != nil {
				return nil, err
			}
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: req.Params.URI, MIMEType: "application/json", Text: string(raw)}}}, nil
		})
}

// instructions is the capability part of the server instructions, given
// the family's registered tools.
func (st *capabilityState) instructions(registered []*tool) string {
	if st.discovery != nil {
		return st.discovery.instructions(registered)
	}
	c := st.cb.Capability
	var b strings.Builder
	var generated, writes []string
	for _, t := range registered {
		if t.generated {
			generated = append(generated, t.name)
			if t.writes() {
				writes = append(writes, t.name)
			}
		}
	}
	fmt.Fprintf(&b, "\n\nService %s: ", serviceName(st.cb))
	var bases []string
	for _, in := range c.Interfaces {
		bases = append(bases, fmt.Sprintf("interface %q (OpenAPI %s) at %s", in.Name, in.Version, in.BaseURL))
	}
	if len(generated) == 0 {
		b.WriteString("no operation is exposed as a tool here.")
	} else {
		fmt.Fprintf(&b, "the tools %s are generated from the bundle's OpenAPI operations and call the LIVE service (%s). A call has real effects and returns structuredContent {status, headers, body, truncated, timedOut, durationMs}; a status of 400 or more, a timeout, no response or a body cut short (truncated with a failure) is an isError result that still carries what arrived; the response byte cap bounds the whole result, headers included. Arguments are checked against the operation before anything is sent: a refused call has error.code INVALID_ARGUMENT and per-field diagnostics {field, code, expected, message}, and nothing reached the service. Redirects are returned (3xx), never followed.",
			strings.Join(generated, ", "), strings.Join(bases, "; "))
	}
	b.WriteString(grpcInstructions(st.cb.GRPC))
	b.WriteString(" Writes to the service: ")
	switch {
	case len(writes) > 0:
		fmt.Fprintf(&b, "ON — %s change the live service (see destructiveHint); call them only when the user asked for that change.", strings.Join(writes, ", "))
	case c.WritesAllowed:
		b.WriteString("allowed, but no operation that writes is exposed.")
	default:
		b.WriteString("OFF — only GET and HEAD operations are exposed; the others are withheld (the operator can start the server with --allow-writes).")
	}
	var confirm []string
	for _, name := range writes {
		if ct := c.Tool(name); ct != nil && ct.NeedsConfirmation() {
			confirm = append(confirm, name)
		}
		if g := st.cb.GRPC; g != nil {
			if gt := g.Tool(name); gt != nil && gt.NeedsConfirmation() {
				confirm = append(confirm, name)
			}
		}
	}
	if len(confirm) > 0 {
		fmt.Fprintf(&b, " A call to %s first asks the user to confirm the exact request (MCP elicitation); a declined or cancelled call, or one made by a client that cannot ask the user, is not sent and answers error.code %s. "+
			"On protocol 2026-07-28 the call answers input-required: retry it once, with the same arguments, the user's answer and the requestState unchanged, within %s; a state is good for one call.",
			strings.Join(confirm, ", "), CodeNotConfirmed, durationWords(DefaultConfirmationTTL))
	}
	if l := c.Lock; l != nil {
		fmt.Fprintf(&b, " The generated tools are held to a tools lock (lockDigest %s): a tool that differs from it, or that it does not pin, is withheld with reason DRIFT.", l.LockDigest)
	}
	if len(c.Withheld) > 0 {
		fmt.Fprintf(&b, " %d operation(s) are withheld: pacto_withheld (or the resource %s) lists each with its reason.", len(c.Withheld), withheldURI)
	}
	b.WriteString(" Skills: the bundle's domain guides (workflows, business rules) are read with pacto_skill — no arguments lists them, name returns one; they are also resources " + skillURITemplate + " and prompts. Read the relevant skill before a multi-step task.")
	return b.String()
}

func serviceName(cb *CapabilityBundle) string {
	if cb.Capability != nil && cb.Capability.Service != "" {
		return cb.Capability.Service
	}
	return "this"
}
