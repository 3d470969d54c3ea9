package grpctools

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net"
	"slices"
	"strings"

	"github.com/bufbuild/protocompile/linker"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/kubepact/kubepact/bundle"
	"github.com/kubepact/kubepact/internal/netx"
	"github.com/kubepact/kubepact/internal/openapischema"
	"github.com/kubepact/kubepact/internal/openapitools"
)

// MaxNameLength is the longest tool name MCP accepts (the OpenAPI
// tools' bound).
const MaxNameLength = openapitools.MaxNameLength

// ReservedPrefix starts the names of kubepact's own tools; an RPC whose
// tool name would start with it is withheld, never renamed.
const ReservedPrefix = openapitools.ReservedPrefix

// MaxSchemaBytes bounds one tool's input or output schema as JSON.
const MaxSchemaBytes = 256 << 10

// Reasons an RPC is withheld (the words of the OpenAPI tools, plus
// STREAMING).
const (
	WithheldWritesNotAllowed = openapitools.WithheldWritesNotAllowed // not NO_SIDE_EFFECTS and writes are not allowed
	WithheldDenied           = openapitools.WithheldDenied           // named in DenyMethods
	WithheldNotAllowed       = openapitools.WithheldNotAllowed       // AllowMethods is set and does not name it
	WithheldReservedName     = openapitools.WithheldReservedName     // its name starts with pacto_
	WithheldUnsupported      = openapitools.WithheldUnsupported      // its messages cannot be described (Any in the request, too large)
	WithheldStreaming        = "STREAMING"                           // client- or bidi-streaming: one tool call sends one request
	WithheldDrift            = openapitools.WithheldDrift            // a tools lock is in force and does not pin the tool unchanged
)

// Capability is the projection of a bundle's gRPC interfaces. It is not
// changed after Project returns and is safe for concurrent use.
type Capability struct {
	Service    string
	Tools      []*Tool
	Withheld   []Withheld
	Interfaces []InterfaceSummary
	// Warnings are the lines to print on stderr.
	Warnings []string
	// WritesAllowed echoes Options.AllowWrites.
	WritesAllowed bool
	// Lock says how the tools were held to Options.Lock; nil without one.
	Lock *LockHold

	opts     *Options
	metadata []MetadataPair
	tls      *tls.Config // nil: plaintext HTTP/2
	rpcs     [][2]string // tool name, full method name of every RPC, exposed or not
}

// LockHold says how a projection's gRPC tools were held to a tools lock.
type LockHold struct {
	// Drifted are the tools withheld with reason DRIFT.
	Drifted []string
	// Missing are the lock's gRPC entries the bundle no longer has.
	Missing []openapitools.LockedRPC
}

// TLSConfig is the TLS configuration calls to the target use (a copy);
// nil when they go over plaintext HTTP/2.
func (c *Capability) TLSConfig() *tls.Config {
	if c.tls == nil {
		return nil
	}
	return c.tls.Clone()
}

// Pins are the lock entries of the exposed tools (see Tool.Pin).
func (c *Capability) Pins() []openapitools.LockedRPC {
	out := make([]openapitools.LockedRPC, len(c.Tools))
	for i, t := range c.Tools {
		out[i] = t.Pin()
	}
	return out
}

// ToolName returns the tool name of the RPC ref names — by its tool name,
// as Service/Method or as package.Service/Method — exposed or withheld.
func (c *Capability) ToolName(ref string) (string, bool) {
	ref = strings.TrimSpace(ref)
	for _, r := range c.rpcs {
		if names([]string{ref}, r[0], r[1]) {
			return r[0], true
		}
	}
	return "", false
}

// names reports whether list names the tool name or the RPC (full
// method name /pkg.Service/Method) as Service/Method or
// pkg.Service/Method.
func names(list []string, name, rpc string) bool {
	for _, n := range list {
		n = strings.TrimSpace(n)
		if n == "" {
			continue
		}
		if n == name || "/"+n == rpc || (strings.Contains(n, "/") && strings.HasSuffix(rpc, "."+n)) {
			return true
		}
	}
	return false
}

// InterfaceSummary describes one projected grpc interface.
type InterfaceSummary struct {
	Name     string   `json:"name"`
	Proto    string   `json:"proto" jsonschema:"bundle path of the .proto file"`
	Services []string `json:"services" jsonschema:"full names of the services it declares"`
	Target   string   `json:"target,omitempty" jsonschema:"host:port its tools call; empty when none is configured"`
	Exposed  int      `json:"exposed"`
	Withheld int      `json:"withheld"`
	// Problem says why no tool is served from the interface (its .proto
	// does not compile); empty otherwise.
	Problem string `json:"problem,omitempty" jsonschema:"why no tool is served from it (its .proto does not compile); absent otherwise"`
}

// Withheld is an RPC not exposed as a tool.
type Withheld struct {
	Name      string `json:"name" jsonschema:"the tool name the RPC has (stable whether exposed or not)"`
	Interface string `json:"interface"`
	RPC       string `json:"rpc" jsonschema:"the full method name, /package.Service/Method"`
	Code      string `json:"code" jsonschema:"WRITES_NOT_ALLOWED, DENIED, NOT_ALLOWED, RESERVED_NAME, UNSUPPORTED, STREAMING or DRIFT"`
	Reason    string `json:"reason"`
}

// Hints are the MCP tool annotations a tool derives from its method's
// idempotency_level.
type Hints struct {
	ReadOnly    bool
	Destructive bool
	Idempotent  bool
	OpenWorld   bool
}

// Tool is one exposed RPC.
type Tool struct {
	Name      string
	Interface string
	// RPC is the full method name as it goes on the wire:
	// /package.Service/Method.
	RPC         string
	Title       string
	Description string
	// ServerStreaming: the call collects the stream's messages.
	ServerStreaming bool
	// InputSchema and OutputSchema are JSON Schema 2020-12, as JSON. The
	// output schema describes the structured result (see package invoke).
	InputSchema  json.RawMessage
	OutputSchema json.RawMessage
	Hints        Hints

	method protoreflect.MethodDescriptor
	types  *protoregistry.Types
	cap    *Capability
}

// Method is the RPC's descriptor.
func (t *Tool) Method() protoreflect.MethodDescriptor { return t.method }

// Types resolves every message and extension of the files the tool's
// interface reaches, then the linked-in ones (google.rpc error details):
// what Any values and error details are decoded with.
func (t *Tool) Types() Resolver { return resolver{t.types} }

// Options are the options the tool was projected under, defaults applied.
func (t *Tool) Options() *Options { return t.cap.opts }

// Metadata is what every call of the tool sends as metadata.
func (t *Tool) Metadata() []MetadataPair { return slices.Clone(t.cap.metadata) }

// NeedsConfirmation reports whether a call to t waits for a person's
// confirmation (Options.ConfirmWrites): under the default policy, an RPC
// that is not NO_SIDE_EFFECTS and whose name reads as a delete.
func (t *Tool) NeedsConfirmation() bool {
	if t.Hints.ReadOnly {
		return false
	}
	switch t.cap.opts.ConfirmWrites {
	case ConfirmNever:
		return false
	case ConfirmAlways:
		return true
	}
	n := string(t.method.Name())
	for _, p := range []string{"Delete", "Remove", "Destroy", "Purge"} {
		if strings.HasPrefix(n, p) {
			return true
		}
	}
	return false
}

// Tool returns the exposed tool with the given name, or nil.
func (c *Capability) Tool(name string) *Tool {
	for _, t := range c.Tools {
		if t.Name == name {
			return t
		}
	}
	return nil
}

// Project compiles every grpc interface of b (see Compile) and projects
// its RPCs under opts (nil means defaults). An interface whose .proto does
// not compile serves no tool: a warning and its summary's Problem say
// why. It fails when the options are invalid, when an
// allow or deny list names no RPC, and when two RPCs claim one name.
func Project(ctx context.Context, b *bundle.Bundle, opts *Options) (*Capability, error) {
	if b.Contract == nil {
		return nil, fmt.Errorf("bundle %s: the contract does not parse: %w", b.Source, b.ParseErr)
	}
	o := opts.withDefaults()
	md, tc, err := o.check()
	if err != nil {
		return nil, err
	}
	c := &Capability{Service: b.Contract.Service.Name, WritesAllowed: o.AllowWrites, opts: o, metadata: md, tls: tc}
	var grpcs []string
	for _, in := range b.Contract.Interfaces {
		if in.Type == "grpc" {
			grpcs = append(grpcs, in.Name)
		}
	}
	names := map[string]string{} // tool name → RPC
	seen := map[string]bool{}    // every name, exposed or not
	for _, in := range b.Contract.Interfaces {
		if in.Type != "grpc" {
			continue
		}
		if in.Ref == "" {
			return nil, fmt.Errorf("interface %s: a grpc interface needs ref, the bundle path of its .proto file", in.Name)
		}
		files, err := Compile(ctx, b.FS, in.Ref, o.Limits)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			// A broken .proto costs its own tools, not the server: the
			// OpenAPI tools and the other interfaces are still served.
			c.Warnings = append(c.Warnings, fmt.Sprintf("interface %s: no gRPC tool is served from it: %v (pacto_check shows every problem)", in.Name, err))
			c.Interfaces = append(c.Interfaces, InterfaceSummary{Name: in.Name, Proto: in.Ref, Target: o.Target, Services: []string{}, Problem: err.Error()})
			continue
		}
		prefix := ""
		if len(grpcs) > 1 {
			prefix = openapitools.NamePart(in.Name)
		}
		sum := InterfaceSummary{Name: in.Name, Proto: in.Ref, Target: o.Target, Services: []string{}}
		types := typesOf(files)
		for _, f := range files {
			svcs := f.Services()
			for i := range svcs.Len() {
				sd := svcs.Get(i)
				sum.Services = append(sum.Services, string(sd.FullName()))
				for j := range sd.Methods().Len() {
					m := sd.Methods().Get(j)
					t, wh := c.project(in.Name, prefix, m, types, seen)
					if wh != nil {
						c.Withheld = append(c.Withheld, *wh)
						sum.Withheld++
						continue
					}
					if other, dup := names[t.Name]; dup {
						return nil, fmt.Errorf("interface %s: RPCs %s and %s both have the tool name %s", in.Name, other, t.RPC, t.Name)
					}
					names[t.Name] = t.RPC
					c.Tools = append(c.Tools, t)
					sum.Exposed++
				}
			}
		}
		if sum.Withheld > 0 {
			c.Warnings = append(c.Warnings, fmt.Sprintf("interface %s: %d of %d RPCs withheld (pacto_withheld lists them and why)", in.Name, sum.Withheld, sum.Withheld+sum.Exposed))
		}
		c.Interfaces = append(c.Interfaces, sum)
	}
	if l := o.Lock; l != nil {
		var drifted, missing []string
		c.Lock = &LockHold{Drifted: []string{}, Missing: []openapitools.LockedRPC{}}
		for _, w := range c.Withheld {
			if w.Code == WithheldDrift {
				drifted = append(drifted, w.Name)
			}
		}
		for _, lr := range l.GRPC {
			if !seen[lr.Name] {
				missing = append(missing, lr.Name+" ("+lr.RPC.Method+")")
				c.Lock.Missing = append(c.Lock.Missing, lr)
			}
		}
		c.Lock.Drifted = append(c.Lock.Drifted, drifted...)
		c.Warnings = append(c.Warnings, openapitools.LockWarnings("gRPC tool(s)", l.Source(), drifted, missing)...)
	}
	for field, list := range map[string][]string{"AllowMethods": o.AllowMethods, "DenyMethods": o.DenyMethods} {
		for _, n := range list {
			if _, ok := c.ToolName(n); !ok {
				return nil, fmt.Errorf("%s: no RPC has the tool name or the Service/Method %q (names: %s)", field, n, strings.Join(openapischema.SortedKeys(seen), ", "))
			}
		}
	}
	return c, nil
}

// project makes the tool of one RPC, or says why it is withheld.
func (c *Capability) project(iface, prefix string, m protoreflect.MethodDescriptor, types *protoregistry.Types, seen map[string]bool) (*Tool, *Withheld) {
	o := c.opts
	name := toolName(prefix, m)
	rpc := fmt.Sprintf("/%s/%s", m.Parent().FullName(), m.Name())
	seen[name] = true
	c.rpcs = append(c.rpcs, [2]string{name, rpc})
	wh := func(code, reason string) (*Tool, *Withheld) {
		return nil, &Withheld{Name: name, Interface: iface, RPC: rpc, Code: code, Reason: reason}
	}
	level := idempotency(m)
	switch {
	case m.IsStreamingClient() && m.IsStreamingServer():
		return wh(WithheldStreaming, "bidirectional streaming: a tool call sends one request and waits for one answer")
	case m.IsStreamingClient():
		return wh(WithheldStreaming, "client streaming: a tool call sends one request, not a stream of them")
	case openapitools.Reserved(name):
		return wh(WithheldReservedName, "tool names starting with "+ReservedPrefix+" are kubepact's own")
	case names(o.DenyMethods, name, rpc):
		return wh(WithheldDenied, "named in DenyMethods")
	case (len(o.AllowMethods) > 0 || o.AllowListSet) && !names(o.AllowMethods, name, rpc):
		return wh(WithheldNotAllowed, "AllowMethods is set and does not name it")
	case level != descriptorpb.MethodOptions_NO_SIDE_EFFECTS && !o.AllowWrites:
		return wh(WithheldWritesNotAllowed, fmt.Sprintf("idempotency_level is %s, not NO_SIDE_EFFECTS: it may change state, and writes are not allowed (AllowWrites)", level))
	}
	in, err := c.inputSchema(m.Input())
	if err != nil {
		return wh(WithheldUnsupported, "the request message "+string(m.Input().FullName())+": "+err.Error())
	}
	out, err := c.outputSchema(m)
	if err != nil {
		return wh(WithheldUnsupported, "the response message "+string(m.Output().FullName())+": "+err.Error())
	}
	loopback := true
	if o.Target != "" {
		host, _, _ := net.SplitHostPort(o.Target)
		loopback = netx.IsLoopbackHost(host)
	}
	t := &Tool{
		Name:            name,
		Interface:       iface,
		RPC:             rpc,
		Title:           "gRPC " + string(m.Parent().Name()) + "." + string(m.Name()),
		Description:     description(m),
		ServerStreaming: m.IsStreamingServer(),
		InputSchema:     in,
		OutputSchema:    out,
		Hints:           hintsFor(level, loopback),
		method:          m,
		types:           types,
		cap:             c,
	}
	if o.Lock != nil {
		if reason := o.Lock.DriftOf(t.Pin()); reason != "" {
			return wh(WithheldDrift, reason)
		}
	}
	return t, nil
}

// Pin is the tool's entry in a tools lock: its name, RPC, annotations
// (openWorldHint aside: it follows the deployment's target) and the
// digests of its text and schemas.
func (t *Tool) Pin() openapitools.LockedRPC {
	streaming := "unary"
	if t.ServerStreaming {
		streaming = "server"
	}
	return openapitools.PinRPC(t.Name, openapitools.LockedCall{Interface: t.Interface, Method: t.RPC, Streaming: streaming},
		openapitools.LockedHints{ReadOnly: t.Hints.ReadOnly, Destructive: t.Hints.Destructive, Idempotent: t.Hints.Idempotent},
		t.Title, t.Description, t.InputSchema, t.OutputSchema)
}

// hintsFor derives the annotations from idempotency_level: read-only only
// for NO_SIDE_EFFECTS, idempotent for IDEMPOTENT, destructive otherwise.
func hintsFor(level descriptorpb.MethodOptions_IdempotencyLevel, loopback bool) Hints {
	h := Hints{OpenWorld: !loopback}
	switch level {
	case descriptorpb.MethodOptions_NO_SIDE_EFFECTS:
		h.ReadOnly, h.Idempotent = true, true
	case descriptorpb.MethodOptions_IDEMPOTENT:
		h.Destructive, h.Idempotent = true, true
	default:
		h.Destructive = true
	}
	return h
}

func idempotency(m protoreflect.MethodDescriptor) descriptorpb.MethodOptions_IdempotencyLevel {
	if mo, ok := m.Options().(*descriptorpb.MethodOptions); ok && mo != nil {
		return mo.GetIdempotencyLevel()
	}
	return descriptorpb.MethodOptions_IDEMPOTENCY_UNKNOWN
}

func (c *Capability) inputSchema(md protoreflect.MessageDescriptor) (json.RawMessage, error) {
	s, err := newSchemaBuilder(inputMode).message(md)
	if err != nil {
		return nil, err
	}
	s["$schema"] = "https://json-schema.org/draft/2020-12/schema"
	return marshalSchema(s)
}

// outputSchema describes the structured result of a call: the status code,
// the response (unary) or the messages (server-streaming), and the error.
func (c *Capability) outputSchema(m protoreflect.MethodDescriptor) (json.RawMessage, error) {
	msg, err := newSchemaBuilder(outputMode).message(m.Output())
	if err != nil {
		return nil, err
	}
	props := map[string]any{
		"code":   map[string]any{"type": "string", "description": "the gRPC status code name: OK, NOT_FOUND, DEADLINE_EXCEEDED, …"},
		"status": statusErrorSchema(),
	}
	if m.IsStreamingServer() {
		props["messages"] = map[string]any{"type": "array", "items": msg, "description": "the stream's messages in order"}
		props["truncated"] = map[string]any{"type": "boolean", "description": "true when the stream was cut at the message or byte bound"}
	} else {
		props["response"] = msg
	}
	return marshalSchema(map[string]any{"type": "object", "properties": props, "required": []string{"code"}})
}

func statusErrorSchema() map[string]any {
	return map[string]any{
		"type":        "object",
		"description": "set when code is not OK: the status message and its google.rpc.Status details",
		"properties": map[string]any{
			"message": map[string]any{"type": "string"},
			"details": map[string]any{"type": "array", "items": map[string]any{"type": "object"}, "description": "each detail as JSON with its @type"},
		},
	}
}

func marshalSchema(s map[string]any) (json.RawMessage, error) {
	data, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	if len(data) > MaxSchemaBytes {
		return nil, &unsupportedError{fmt.Sprintf("its schema is %d bytes; at most %d are served", len(data), MaxSchemaBytes)}
	}
	return data, nil
}

func description(m protoreflect.MethodDescriptor) string {
	d := comments(m)
	kind := "Unary"
	if m.IsStreamingServer() {
		kind = "Server-streaming (the messages are collected up to a bound; truncated says when cut)"
	}
	line := fmt.Sprintf("%s gRPC call /%s/%s with a %s request.", kind, m.Parent().FullName(), m.Name(), m.Input().FullName())
	if d == "" {
		return line
	}
	return d + "\n\n" + line
}

// toolName is <Service>_<Method>, prefixed <interface>_ when the bundle
// has several grpc interfaces, each part named as an OpenAPI tool's
// (openapitools.NamePart); a name past MaxNameLength is shortened as an
// OpenAPI tool's is (openapitools.ShortenName).
func toolName(prefix string, m protoreflect.MethodDescriptor) string {
	n := openapitools.NamePart(string(m.Parent().Name())) + "_" + openapitools.NamePart(string(m.Name()))
	if prefix != "" {
		n = prefix + "_" + n
	}
	return openapitools.ShortenName(n, MaxNameLength)
}

// typesOf registers every message, enum and extension of files and of
// the files they import, transitively.
func typesOf(files linker.Files) *protoregistry.Types {
	reg := &protoregistry.Types{}
	done := map[string]bool{}
	var walk func(f protoreflect.FileDescriptor)
	walk = func(f protoreflect.FileDescriptor) {
		if done[f.Path()] {
			return
		}
		done[f.Path()] = true
		registerMessages(reg, f.Messages())
		for i := range f.Enums().Len() {
			_ = reg.RegisterEnum(dynamicpb.NewEnumType(f.Enums().Get(i)))
		}
		for i := range f.Extensions().Len() {
			_ = reg.RegisterExtension(dynamicpb.NewExtensionType(f.Extensions().Get(i)))
		}
		for i := range f.Imports().Len() {
			walk(f.Imports().Get(i).FileDescriptor)
		}
	}
	for _, f := range files {
		walk(f)
	}
	return reg
}

func registerMessages(reg *protoregistry.Types, ms protoreflect.MessageDescriptors) {
	for i := range ms.Len() {
		md := ms.Get(i)
		if !md.IsMapEntry() {
			_ = reg.RegisterMessage(dynamicpb.NewMessageType(md))
		}
		registerMessages(reg, md.Messages())
		for j := range md.Enums().Len() {
			_ = reg.RegisterEnum(dynamicpb.NewEnumType(md.Enums().Get(j)))
		}
	}
}
