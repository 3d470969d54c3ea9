package openapitools

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/kubepact/kubepact/bundle"
	"github.com/kubepact/kubepact/internal/netx"
	"github.com/kubepact/kubepact/internal/openapischema"
	"github.com/kubepact/kubepact/internal/schemacycle"
)

// MaxInputSchemaBytes bounds one tool's input schema as JSON: every tool
// definition is sent whole in a tools/list page.
const MaxInputSchemaBytes = 256 << 10

// maxSpecBytes bounds one spec file the projection reads, unless
// Options.MaxSpecBytes is larger.
const maxSpecBytes = 16 << 20

// Capability is the projection of a bundle: the tools to expose, the
// operations withheld and why, and what to say about it on stderr. It is
// not changed after Project returns and is safe for concurrent use.
type Capability struct {
	// Service is the contract's service name.
	Service string
	// Tools are the exposed tools in document order (interfaces in contract
	// order, operations as the spec writes them).
	Tools []*Tool
	// Withheld lists every operation not exposed, with its reason.
	Withheld []Withheld
	// Interfaces summarises each projected interface.
	Interfaces []InterfaceSummary
	// Warnings are the lines to print on stderr (without a program prefix):
	// skipped reserved names and per-interface withheld counts.
	Warnings []string
	// WritesAllowed echoes Options.AllowWrites.
	WritesAllowed bool
	// ConfirmWrites is the confirmation policy in force (Options.ConfirmWrites,
	// ConfirmDelete when that is empty).
	ConfirmWrites string
	// LockDigest is the digest of the exposed tools' lock entries (see
	// Lock): equal to a lock's lockDigest when exactly its tools are
	// exposed.
	LockDigest string
	// Lock says how the projection was held to a tools lock; nil without
	// one.
	Lock *LockStatus

	held *Lock // the lock the projection was held to

	// ops are every operation, exposed or withheld, in document order
	// (Index).
	ops []*operation
	// Discovery (discover.go): the mode asked for, the pinned operations,
	// every operation's searchable text, and the index built from it.
	toolMode string
	pins     []string
	texts    map[string]*opText
	search   *lazyIndex
}

// InterfaceSummary describes one projected openapi interface.
type InterfaceSummary struct {
	Name     string `json:"name"`
	Spec     string `json:"spec" jsonschema:"bundle path of the OpenAPI document"`
	Version  string `json:"version" jsonschema:"OpenAPI (or Swagger) version the document declares"`
	BaseURL  string `json:"baseUrl" jsonschema:"where its tools send requests"`
	Exposed  int    `json:"exposed"`
	Withheld int    `json:"withheld"`

	title string // info.title, for the discovery tools
}

// Withheld is an operation that is not exposed as a tool.
type Withheld struct {
	Name        string `json:"name" jsonschema:"the tool name the operation has (stable whether exposed or not)"`
	Interface   string `json:"interface"`
	Method      string `json:"method"`
	Path        string `json:"path"`
	OperationID string `json:"operationId,omitempty"`
	Code        string `json:"code" jsonschema:"WRITES_NOT_ALLOWED, DENIED, NOT_ALLOWED, FILTERED, RESERVED_NAME, UNSUPPORTED, CREDENTIAL_IN_QUERY or DRIFT"`
	Reason      string `json:"reason"`
}

// Reasons an operation is withheld.
const (
	WithheldWritesNotAllowed = "WRITES_NOT_ALLOWED" // not GET/HEAD and writes are not allowed
	WithheldDenied           = "DENIED"             // named in DenyOperations
	WithheldNotAllowed       = "NOT_ALLOWED"        // AllowOperations is set and does not name it
	WithheldReservedName     = "RESERVED_NAME"      // its name starts with pacto_
	WithheldUnsupported      = "UNSUPPORTED"        // its input schema could not be built, or it declares what a tool cannot send
	// WithheldCredentialInQuery: the credentials given would go in the URL
	// query and AllowCredentialsInQuery is not set.
	WithheldCredentialInQuery = "CREDENTIAL_IN_QUERY"
)

// Hints are the MCP tool annotations a tool derives from its HTTP method.
type Hints struct {
	ReadOnly    bool
	Destructive bool
	Idempotent  bool
	OpenWorld   bool
}

// Tool is one exposed operation.
type Tool struct {
	Name        string
	Interface   string
	Method      string // upper case
	Path        string // as written in the spec
	OperationID string
	Title       string
	Description string
	// InputSchema is the JSON Schema 2020-12 of the arguments, as JSON.
	InputSchema json.RawMessage
	Hints       Hints

	op *operation
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

// Project reads every openapi interface of b and projects its operations
// under opts (nil means defaults). It fails when an interface cannot be read
// or has no base URL, when credentials are given without an explicit base
// URL or for an unknown security scheme, and when an allow or deny list
// names no operation.
func Project(ctx context.Context, b *bundle.Bundle, opts *Options) (*Capability, error) {
	c, err := projectHeld(ctx, b, opts)
	if err != nil {
		return nil, err
	}
	if err := c.checkHeldMode(); err != nil {
		return nil, err
	}
	return c, nil
}

// ModeProjection is a bundle's projection offered in one tool mode
// (ProjectModes).
type ModeProjection struct {
	// Mode is the tool mode asked for, as Options.ToolMode.
	Mode string
	// Capability is what Project returns with Options.ToolMode set to
	// Mode; nil when Err is set.
	Capability *Capability
	// Err is what Project returns in Mode alone: the tools lock the
	// projection is held to records another mode than Mode settles to.
	Err error
}

// ProjectModes projects b once under opts and offers the projection in
// each of modes: element i is what Project returns with opts.ToolMode set
// to modes[i] (opts.ToolMode itself is not read). A tool mode changes how
// package mcp offers the operations, never what they are, so the modes'
// Capabilities share their tools, withheld operations and search index,
// and cost one projection. It fails as Project does for what does not
// depend on the mode, and on a mode Project refuses (checkToolMode).
func ProjectModes(ctx context.Context, b *bundle.Bundle, opts *Options, modes []string) ([]ModeProjection, error) {
	for _, m := range modes {
		if err := checkToolMode(m); err != nil {
			return nil, err
		}
	}
	o := Options{}
	if opts != nil {
		o = *opts
	}
	o.ToolMode = ""
	base, err := projectHeld(ctx, b, &o)
	if err != nil {
		return nil, err
	}
	out := make([]ModeProjection, 0, len(modes))
	for _, m := range modes {
		c := base.inMode(m)
		if err := c.checkHeldMode(); err != nil {
			out = append(out, ModeProjection{Mode: m, Err: err})
			continue
		}
		out = append(out, ModeProjection{Mode: m, Capability: c})
	}
	return out, nil
}

// inMode is a copy of c offered in tool mode m. The copy shares what
// projection built (none of it is changed after Project returns), the
// search index included: the index does not depend on the mode.
func (c *Capability) inMode(m string) *Capability {
	d := *c
	d.toolMode = cmp.Or(m, ToolModeAll)
	return &d
}

// projectHeld is Project but for the check of the tools lock's mode
// (checkHeldMode): the projection held to its lock, with its LockDigest.
func projectHeld(ctx context.Context, b *bundle.Bundle, opts *Options) (*Capability, error) {
	if b.Contract == nil {
		return nil, fmt.Errorf("bundle %s: the contract does not parse: %w", b.Source, b.ParseErr)
	}
	var specs []spec
	for _, in := range b.Contract.Interfaces {
		if in.Type == "openapi" && in.Ref != "" {
			specs = append(specs, spec{name: in.Name, file: path.Clean(strings.TrimPrefix(in.Ref, "./"))})
		}
	}
	lock, fromBundle := (*Lock)(nil), false
	switch {
	case opts != nil && opts.Lock != nil:
		lock = opts.Lock
	case opts == nil || !opts.IgnoreBundleLock:
		var err error
		if lock, err = readBundleLock(b.FS); err != nil {
			return nil, err
		}
		fromBundle = lock != nil
	}
	o := Options{}
	if opts != nil {
		o = *opts
	}
	o.lockedNames = lockedNames(lock)
	c, err := project(ctx, b.FS, specs, &o)
	if err != nil {
		return nil, err
	}
	c.Service = b.Contract.Service.Name
	if lock != nil {
		holdToLock(c, lock, fromBundle, opts != nil && opts.BaseURL != "")
	}
	c.LockDigest = LockDigestOf(c)
	return c, nil
}

// checkHeldMode refuses c when the tools lock it is held to records
// another tool mode than c is in force in (Lock.checkMode).
func (c *Capability) checkHeldMode() error {
	if c.held == nil {
		return nil
	}
	return c.held.checkMode(c)
}

// spec is one openapi interface to project.
type spec struct{ name, file string }

// projector holds what one projection shares across interfaces.
type projector struct {
	opts   Options
	creds  map[string]string
	client *http.Client
	// shapesOnly describes operations (Shapes) instead of preparing calls:
	// no base URL is needed, and responses are converted too.
	shapesOnly bool
}

func project(ctx context.Context, fsys fs.FS, specs []spec, opts *Options) (*Capability, error) {
	p := &projector{opts: opts.withDefaults()}
	var err error
	if p.creds, err = p.opts.credentials(); err != nil {
		return nil, err
	}
	if err := checkConfirmPolicy(p.opts.ConfirmWrites); err != nil {
		return nil, err
	}
	if err := checkNameCap(p.opts.MaxNameLength); err != nil {
		return nil, err
	}
	if err := checkToolMode(p.opts.ToolMode); err != nil {
		return nil, err
	}
	if p.opts.BaseURL != "" {
		if err := checkBaseURL(p.opts.BaseURL); err != nil {
			return nil, fmt.Errorf("BaseURL: %w", err)
		}
	} else if len(p.creds) > 0 {
		return nil, errors.New("credentials (Auth, AuthFiles) need an explicit base URL (BaseURL): they are never sent to a host chosen by bundle content")
	}
	p.client = newHTTPClient(p.opts.Transport)

	c := &Capability{WritesAllowed: p.opts.AllowWrites, ConfirmWrites: cmp.Or(p.opts.ConfirmWrites, ConfirmDelete)}
	var all []*operation
	knownSchemes := map[string]bool{}
	for _, s := range specs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		ops, sum, err := p.projectSpec(fsys, s, len(specs) > 1)
		if err != nil {
			return nil, fmt.Errorf("interface %q: %w", s.name, err)
		}
		for _, op := range ops {
			for name := range op.schemes {
				knownSchemes[name] = true
			}
		}
		all = append(all, ops...)
		c.Interfaces = append(c.Interfaces, sum)
	}
	if err := nameAll(all, p.opts.MaxNameLength, p.opts.lockedNames); err != nil {
		return nil, err
	}
	for name := range p.creds {
		if !knownSchemes[name] {
			return nil, fmt.Errorf("security scheme %s (Auth): no interface declares a security scheme of that name (declared: %s)", name, orNone(openapischema.SortedKeys(knownSchemes)))
		}
	}
	if err := p.checkLists(all); err != nil {
		return nil, err
	}
	if err := p.checkFilters(all); err != nil {
		return nil, err
	}
	if f := p.opts.DescriptionsFile; f != "" {
		overrides, err := readDescriptions(f)
		if err != nil {
			return nil, err
		}
		if err := applyDescriptions(all, overrides, f); err != nil {
			return nil, err
		}
	}
	p.expose(c, all)
	c.ops = all
	c.toolMode, c.pins, c.texts, c.search = cmp.Or(p.opts.ToolMode, ToolModeAll), cleanList(p.opts.ToolPins), texts(all), &lazyIndex{}
	return c, nil
}

// projectSpec names and builds every operation of one interface.
func (p *projector) projectSpec(fsys fs.FS, s spec, prefixed bool) ([]*operation, InterfaceSummary, error) {
	sum := InterfaceSummary{Name: s.name, Spec: s.file}
	if !fs.ValidPath(s.file) {
		return nil, sum, fmt.Errorf("ref %q leaves the bundle", s.file)
	}
	d, err := openapischema.LoadDocument(fsys, s.file, int(max(p.opts.MaxSpecBytes, maxSpecBytes)))
	if err != nil {
		return nil, sum, err
	}
	sum.Version = d.Version()
	info, _ := d.Root()["info"].(map[string]any)
	sum.title = strings.TrimSpace(openapischema.StringAt(info, "title"))
	declared := serverURL(d)
	base := p.opts.BaseURL
	if p.shapesOnly {
		base = "http://127.0.0.1"
	}
	if base == "" {
		if base = declared; base == "" {
			return nil, sum, errors.New("no base URL (set BaseURL or add an absolute servers[0].url to the spec)")
		}
		if err := checkBaseURL(base); err != nil {
			return nil, sum, fmt.Errorf("servers[0].url: %w; set BaseURL to the service's address", err)
		}
	}
	sum.BaseURL = base
	bu, err := url.Parse(base)
	if err != nil {
		return nil, sum, fmt.Errorf("base URL %q: %w", base, err)
	}
	ifc := &iface{name: s.name, doc: d, baseURL: strings.TrimSuffix(base, "/"), scheme: bu.Scheme, host: bu.Host,
		declaredBase: declared, loopback: netx.IsLoopbackHost(bu.Hostname()), schemes: securitySchemes(d)}
	prefix := ""
	if prefixed {
		prefix = interfacePrefix(s.name)
	}
	var ops []*operation
	for _, pm := range d.OperationsInOrder() {
		ops = append(ops, p.operation(ifc, prefix, pm[0], pm[1]))
	}
	// Everything the operations keep is built: move it out of the spans
	// the document's decoding filled, then let the document go.
	for _, op := range ops {
		op.compact()
	}
	d.Release()
	ifc.responses = nil
	return ops, sum, nil
}

// checkLists refuses allow and deny lists that name no operation: a typo in
// a deny list must not expose what it meant to hide.
func (p *projector) checkLists(all []*operation) error {
	names := map[string]bool{}
	for _, op := range all {
		names[op.name] = true
	}
	for flag, list := range map[string][]string{"AllowOperations": p.opts.AllowOperations, "DenyOperations": p.opts.DenyOperations, "ToolPins": p.opts.ToolPins} {
		for _, n := range list {
			if !names[strings.TrimSpace(n)] {
				return fmt.Errorf("%s: no operation is named %q (names: %s)", flag, n, orNone(openapischema.SortedKeys(names)))
			}
		}
	}
	return nil
}

// expose applies the exposure policy and fills the tools, the withheld
// list, the per-interface counts and the warning lines.
func (p *projector) expose(c *Capability, all []*operation) {
	allow := setOf(p.opts.AllowOperations)
	deny := setOf(p.opts.DenyOperations)
	filter := newFilters(&p.opts)
	counts := map[string]map[string]int{} // interface → code → count
	for _, op := range all {
		code, reason := "", ""
		switch {
		case op.err != nil:
			code, reason = WithheldUnsupported, op.err.Error()
		case reserved(op.name):
			code, reason = WithheldReservedName, "names starting with "+ReservedPrefix+" belong to kubepact's own tools"
			c.Warnings = append(c.Warnings, fmt.Sprintf("skipped operation %q in interface %q (that name belongs to a Pacto tool)", op.name, op.iface.name))
		case deny[op.name]:
			code, reason = WithheldDenied, "named in DenyOperations"
		case (len(allow) > 0 || p.opts.AllowListSet) && !allow[op.name]:
			code, reason = WithheldNotAllowed, "not named in AllowOperations"
		case filter.reason(op) != "":
			code, reason = WithheldFiltered, filter.reason(op)
		case !readMethod(op.method) && !p.opts.AllowWrites:
			code, reason = WithheldWritesNotAllowed, op.method+" is not a read-only method; AllowWrites exposes it"
		case len(p.creds) > 0:
			if _, q := op.credentialRequirement(func(name string) bool { return p.creds[name] != "" }); q != "" {
				s := op.iface.schemes[q]
				code, reason = WithheldCredentialInQuery, fmt.Sprintf("its security requirement sends the credential of scheme %s in the URL query parameter %q, "+
					"where URLs and their logs show it, and no other requirement is met by the credentials given; AllowCredentialsInQuery sends it there", q, s.name)
			}
		}
		if code != "" {
			c.Withheld = append(c.Withheld, Withheld{Name: op.name, Interface: op.iface.name, Method: op.method, Path: op.path, OperationID: op.operationID, Code: code, Reason: reason})
			if counts[op.iface.name] == nil {
				counts[op.iface.name] = map[string]int{}
			}
			counts[op.iface.name][code]++
			continue
		}
		c.Tools = append(c.Tools, op.tool())
	}
	for i := range c.Interfaces {
		in := &c.Interfaces[i]
		cc := counts[in.Name]
		for _, n := range cc {
			in.Withheld += n
		}
		for _, op := range all {
			if op.iface.name == in.Name {
				in.Exposed++
			}
		}
		in.Exposed -= in.Withheld
		if n := cc[WithheldWritesNotAllowed]; n > 0 {
			c.Warnings = append(c.Warnings, fmt.Sprintf("skipped %d mutating operation(s) in interface %q (AllowWrites exposes them)", n, in.Name))
		}
		if n := cc[WithheldDenied] + cc[WithheldNotAllowed]; n > 0 {
			c.Warnings = append(c.Warnings, fmt.Sprintf("withheld %d operation(s) in interface %q by AllowOperations or DenyOperations", n, in.Name))
		}
		if n := cc[WithheldFiltered]; n > 0 {
			c.Warnings = append(c.Warnings, fmt.Sprintf("withheld %d operation(s) in interface %q by IncludeTags, ExcludeTags, IncludePaths or ExcludePaths", n, in.Name))
		}
		if n := cc[WithheldCredentialInQuery]; n > 0 {
			c.Warnings = append(c.Warnings, fmt.Sprintf("withheld %d operation(s) in interface %q that would send a credential in the URL query (AllowCredentialsInQuery allows it)", n, in.Name))
		}
		if n := cc[WithheldUnsupported]; n > 0 {
			c.Warnings = append(c.Warnings, fmt.Sprintf("withheld %d operation(s) in interface %q whose input schema could not be built (pacto_withheld lists why)", n, in.Name))
		}
	}
}

// readMethod reports whether a method is exposed without AllowWrites:
// GET and HEAD only.
func readMethod(m string) bool { return m == http.MethodGet || m == http.MethodHead }

// hintsFor derives the annotations from the method.
func hintsFor(method string, loopback bool) Hints {
	h := Hints{OpenWorld: !loopback}
	switch method {
	case http.MethodGet, http.MethodHead:
		h.ReadOnly, h.Idempotent = true, true
	case http.MethodPut, http.MethodDelete:
		h.Destructive, h.Idempotent = true, true
	case http.MethodOptions, http.MethodTrace:
		h.Idempotent = true
	default: // POST, PATCH
		h.Destructive = true
	}
	return h
}

// iface is one projected interface: its document, base URL and schemes.
type iface struct {
	name    string
	doc     *openapischema.Document
	baseURL string // without trailing slash
	scheme  string // of baseURL: every request must keep it
	host    string // of baseURL (with port): every request must keep it
	// declaredBase is the bundle's own base URL (servers[0].url), which a
	// lock pins; empty when the spec declares none.
	declaredBase string
	loopback     bool
	schemes      map[string]securityScheme
	// responses digests the operations' responses during projection.
	responses *responseDigester
}

// operation is one OpenAPI operation, named and (unless err) ready to call.
type operation struct {
	iface       *iface
	name        string
	base        string // the name asked for, before collisions are settled
	claimed     bool   // base comes from the operationId: never renamed
	method      string
	path        string
	operationID string
	tags        []string // as the spec writes them
	title       string
	description string
	params      []*param
	body        *body
	responses   []openapischema.ResponseShape // set by Shapes only
	accept      string
	security    []map[string][]string // effective requirements; nil = none declared
	schemes     map[string]bool       // scheme names the requirements mention
	input       json.RawMessage
	validator   *argValidator
	kinOnce     sync.Once
	kinRoute    *Route // nil: no request validation by kin-openapi; set by route()
	client      *http.Client
	opts        *Options
	err         error // why no tool can be built
	// outputDigest is the digest of the declared responses (see Lock).
	outputDigest string
	pinOnce      sync.Once
	pinned       LockedTool
}

func (op *operation) tool() *Tool {
	return &Tool{
		Name:        op.name,
		Interface:   op.iface.name,
		Method:      op.method,
		Path:        op.path,
		OperationID: op.operationID,
		Title:       op.title,
		Description: op.description,
		InputSchema: op.input,
		Hints:       hintsFor(op.method, op.iface.loopback),
		op:          op,
	}
}

// operation builds one operation. A failure is kept in op.err: the
// operation is still named (names stay stable) and listed as withheld.
func (p *projector) operation(ifc *iface, prefix, pth, method string) *operation {
	d := ifc.doc
	paths, _ := d.Root()["paths"].(map[string]any)
	itemNode, itemFile := d.Deref(d.File(), paths[pth])
	item, _ := itemNode.(map[string]any)
	opNode, _ := item[method].(map[string]any)
	op := &operation{
		iface:       ifc,
		method:      strings.ToUpper(method),
		path:        pth,
		operationID: strings.TrimSpace(openapischema.StringAt(opNode, "operationId")),
		client:      p.client,
		opts:        &p.opts,
	}
	op.base = baseName(prefix, op.operationID, op.method, pth)
	op.claimed = claimedName(op.operationID)
	op.title, op.description = describe(opNode, op.method, pth)
	op.tags = tagsOf(opNode)
	if err := op.build(item, opNode, itemFile); err != nil {
		op.err = err
	} else if !p.shapesOnly {
		op.err = checkHeaderParams(op.params)
	}
	if p.shapesOnly {
		op.responses = responseShapes(d, opNode, itemFile)
	}
	return op
}

func (op *operation) build(item, opNode map[string]any, file string) (err error) {
	defer openapischema.RecoverInto(&err)
	// The path key is appended to the base URL as it is written: one that
	// does not start with "/" (or that carries its own query or fragment)
	// could move the request to another host ("@evil.example/x" turns the
	// base host into user info) and the credentials with it.
	if !strings.HasPrefix(op.path, "/") || strings.ContainsAny(op.path, "?#\\") {
		return fmt.Errorf("path %q must start with / and hold no ?, # or \\", op.path)
	}
	for seg := range strings.SplitSeq(op.path, "/") {
		if seg == "." || seg == ".." {
			return fmt.Errorf("path %q holds a %q segment", op.path, seg)
		}
	}
	d := op.iface.doc
	c := openapischema.NewConverter(d)
	op.params = mergeParams(d, item["parameters"], opNode["parameters"], file)
	op.body = requestBody(d, opNode["requestBody"], file, c)
	assignArgNames(op.params, op.body != nil)
	props := map[string]any{}
	var required []any
	for _, pr := range op.params {
		props[pr.arg] = pr.schemaFor(c)
		if pr.required {
			required = append(required, pr.arg)
		}
	}
	if op.body != nil {
		props["body"] = op.body.schema
	}
	for name, s := range props {
		// A boolean schema (3.1) is valid JSON Schema, but MCP types each
		// property of an input schema as an object.
		if b, ok := s.(bool); ok {
			props[name] = map[string]any{}
			if !b {
				props[name] = map[string]any{"not": map[string]any{}}
			}
		}
	}
	if op.body != nil {
		if op.body.required {
			required = append(required, "body")
		}
	}
	if c.Err() != nil {
		return c.Err()
	}
	for _, pr := range op.params {
		pr.kind = kindOf(props[pr.arg], c.Defs())
	}
	input := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		input["required"] = required
	}
	if len(c.Defs()) > 0 {
		input["$defs"] = c.Defs()
	}
	// A schema that applies itself to the same value forever would
	// overflow the validator's stack on the first call, and that kills the
	// process: such an operation gets no tool.
	if err := schemacycle.Check(input); err != nil {
		var se *schemacycle.Error
		if errors.As(err, &se) {
			return errors.New(se.Describe(c.Origin))
		}
		return err
	}
	if op.input, err = marshalTree(input); err != nil {
		return fmt.Errorf("input schema: %w", err)
	}
	if len(op.input) > MaxInputSchemaBytes {
		return fmt.Errorf("the input schema is %d bytes, more than the %d a tool definition may take (its $defs hold %d definitions)", len(op.input), MaxInputSchemaBytes, len(c.Defs()))
	}
	if err := d.CheckSchemas(op.input); err != nil {
		return fmt.Errorf("input schema is not JSON Schema 2020-12: %w", err)
	}
	op.validator = newArgValidator(op.input, props)
	op.accept = acceptHeader(d, opNode, file)
	op.security, op.schemes = effectiveSecurity(d, opNode)
	if op.iface.responses == nil {
		op.iface.responses = newResponseDigester(d)
	}
	op.outputDigest = op.iface.responses.digest(opNode, file)
	return nil
}

// tagsOf returns an operation's tags, as strings, each once.
func tagsOf(opNode map[string]any) []string {
	list, _ := opNode["tags"].([]any)
	var out []string
	for _, t := range list {
		if s, ok := t.(string); ok && s != "" && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// describe returns the title and the description of an operation: summary
// and description, then the method and path.
func describe(opNode map[string]any, method, pth string) (string, string) {
	summary := strings.TrimSpace(openapischema.StringAt(opNode, "summary"))
	desc := strings.TrimSpace(openapischema.StringAt(opNode, "description"))
	var parts []string
	if summary != "" {
		parts = append(parts, summary)
	}
	if desc != "" && desc != summary {
		parts = append(parts, desc)
	}
	parts = append(parts, method+" "+pth)
	d := strings.Join(parts, "\n\n")
	if len(d) > 4096 {
		d = d[:4093] + "…"
	}
	title := summary
	if len(title) > 120 {
		title = title[:117] + "…"
	}
	return title, d
}

// serverURL is servers[0].url with its variables' defaults substituted;
// empty when there is none.
func serverURL(d *openapischema.Document) string {
	servers, _ := d.Root()["servers"].([]any)
	if len(servers) == 0 {
		return ""
	}
	s, _ := servers[0].(map[string]any)
	u := openapischema.StringAt(s, "url")
	vars, _ := s["variables"].(map[string]any)
	for name, v := range vars {
		vm, _ := v.(map[string]any)
		u = strings.ReplaceAll(u, "{"+name+"}", openapischema.ScalarString(vm["default"]))
	}
	return u
}

// checkBaseURL accepts absolute http and https URLs without a query,
// fragment or user info.
func checkBaseURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("%q is not a URL: %w", raw, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%q: want an absolute http or https URL", raw)
	}
	if u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return fmt.Errorf("%q: a base URL has no query, fragment or user info", raw)
	}
	if strings.Contains(u.Path, "{") {
		return fmt.Errorf("%q: a server variable has no default", raw)
	}
	return nil
}

// argValidator holds what checking a tool's arguments needs, for the
// caller that checks them (Tool.ArgumentSchemas): one resolved schema per
// property, so every argument gets its own diagnostic. The validators are
// built on first use and kept, so serving a
// large API compiles nothing for the tools nobody calls. What would make
// them fail to build (an unresolvable reference, a pattern that is no
// regular expression) is found by the converter at projection, and the
// operation withheld with the reason.
type argValidator struct {
	input json.RawMessage
	names []string // sorted

	once  sync.Once
	props map[string]*jsonschema.Resolved
	err   error
}

func newArgValidator(input json.RawMessage, props map[string]any) *argValidator {
	return &argValidator{input: input, names: openapischema.SortedKeys(props)}
}

// resolved returns the per-property validators, building them once.
func (v *argValidator) resolved() (map[string]*jsonschema.Resolved, error) {
	v.once.Do(func() { v.props, v.err = resolveProperties(v.input) })
	return v.props, v.err
}

func resolveProperties(input json.RawMessage) (map[string]*jsonschema.Resolved, error) {
	var whole struct {
		Properties map[string]json.RawMessage `json:"properties"`
		Defs       json.RawMessage            `json:"$defs"`
	}
	if err := json.Unmarshal(input, &whole); err != nil {
		return nil, err
	}
	out := make(map[string]*jsonschema.Resolved, len(whole.Properties))
	for name, prop := range whole.Properties {
		sub := map[string]json.RawMessage{"allOf": json.RawMessage("[" + string(prop) + "]")}
		if len(whole.Defs) > 0 {
			sub["$defs"] = whole.Defs
		}
		raw, err := json.Marshal(sub)
		if err != nil {
			return nil, err
		}
		var s jsonschema.Schema
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, fmt.Errorf("property %s: %w", name, err)
		}
		r, err := s.Resolve(nil)
		if err != nil {
			return nil, fmt.Errorf("property %s: %w", name, err)
		}
		out[name] = r
	}
	return out, nil
}

func setOf(list []string) map[string]bool {
	m := map[string]bool{}
	for _, s := range list {
		if s = strings.TrimSpace(s); s != "" {
			m[s] = true
		}
	}
	return m
}

func orNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// HeldLock is the tools lock the projection was held to (the given one
// or the bundle's), nil without one: the gRPC tools are held to it too.
func (c *Capability) HeldLock() *Lock { return c.held }
