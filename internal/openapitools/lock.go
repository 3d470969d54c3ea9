package openapitools

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/kubepact/kubepact/internal/atomicfile"
	"github.com/kubepact/kubepact/internal/jsonobj"
	"github.com/kubepact/kubepact/internal/openapischema"
)

// LockFile is where a bundle carries its tools lock.
const LockFile = "tools.lock.json"

// LockKind is the kind of a tools lock document.
const LockKind = "kubepact.dev/ToolsLock"

// lockVersion is the format version this package writes and reads.
// Version 1 pinned names, annotations and schemas but not where requests
// go; such a lock is refused with the command that writes a new one,
// never read as if it pinned the request's shape.
const lockVersion = 2

// MaxLockBytes bounds a lock document.
const MaxLockBytes = 16 << 20

// WithheldDrift is the reason of a tool withheld because it does not match
// the tools lock.
const WithheldDrift = "DRIFT"

// Lock is a tools lock. It pins the surface of generated tools a bundle may offer: for
// each tool its name, the operation it calls, its annotations, digests
// of what an agent is shown (title and description, input schema, the
// operation's response schemas), and the shape of the request it sends
// (the base URL the bundle declares, each parameter's location and
// serialisation, the body's media type, the security requirements and
// where each scheme puts its credential). A server held to a lock withholds, with
// reason DRIFT, every generated tool whose digest differs from its entry or
// that has no entry, and reports the entries the bundle no longer has.
// Discovery never grants authority: a bundle that grows a tool, or changes
// one, does not hand it to an agent until someone writes a new lock.
//
// # Format
//
// A lock is one JSON document (written indented, read strictly: unknown
// fields, a key given twice, a tool named twice or a digest that does not
// match what it covers are errors):
//
//	{
//	  "kind": "kubepact.dev/ToolsLock",
//	  "version": 2,
//	  "service": "catalog",
//	  "lockDigest": "sha256:…",
//	  "tools": [
//	    {
//	      "name": "getProduct",
//	      "operation": {"interface": "http", "method": "GET", "path": "/products/{id}", "operationId": "getProduct"},
//	      "annotations": {"readOnlyHint": true, "destructiveHint": false, "idempotentHint": true},
//	      "text": "sha256:…",
//	      "inputSchema": "sha256:…",
//	      "outputSchema": "sha256:…",
//	      "request": {
//	        "baseUrl": "https://catalog.example.com/v1",
//	        "parameters": [{"name": "id", "in": "path", "style": "simple", "explode": false, "allowReserved": false}],
//	        "security": [[{"name": "bearerAuth", "type": "http", "httpScheme": "bearer"}], [{"name": "key", "type": "apiKey", "in": "header", "parameterName": "X-Key"}]]
//	      },
//	      "digest": "sha256:…"
//	    }
//	  ]
//	}
//
// request is written out rather than digested, so a reviewer of the lock
// sees where each tool's requests and credentials go:
//
//   - baseUrl: the bundle's own servers[0].url (its variables' defaults
//     applied), absent when it declares none. It is compared only when the
//     server sends requests there: a base URL the operator gives (BaseURL)
//     wins over the bundle's, and then the bundle's does not matter;
//   - parameters: every parameter (path-item and operation level merged),
//     sorted by location then name, with its style, explode and
//     allowReserved as OpenAPI's defaults make them, and contentType for
//     one serialised as a media type;
//   - body: the media type the request body is sent as; absent without one;
//   - security: the operation's effective requirements (its own, else the
//     document's), alternatives in order, each the schemes it needs sorted
//     by name with their placement: type, and httpScheme for http, in and
//     parameterName for apiKey ("type" is empty for a scheme the document
//     does not declare). An empty list: no credentials are sent.
//
// Tools are sorted by name. Every digest is "sha256:" and the lower-case
// hex SHA-256 of a canonical JSON encoding: the one Go's encoding/json
// writes for the decoded value — object keys sorted bytewise, no white
// space, <, > and & escaped as \u003c, \u003e and \u0026 — with numbers
// kept as written.
//
//   - text: {"title", "description"}: the operation's summary and
//     description as projected (the tool's title and description);
//   - inputSchema: the tool's input schema (JSON Schema 2020-12, as
//     projected, before the MCP shaping of tools/list);
//   - outputSchema: what the service answers — a generated tool's MCP
//     output schema is the same envelope for every tool — that is, the
//     operation's responses object as written (status → description,
//     headers, content, schemas), the spec file it is in, and every location
//     it references directly or not ("file#pointer") with the digest of
//     what is there;
//   - digest: the entry itself without "digest";
//   - lockDigest: the list of {"name", "digest"} of every tool, by name.
//
// openWorldHint is not locked: it follows where the server sends requests
// (loopback or not), which is the deployment's choice, not the contract's.
//
// # In the bundle
//
// A bundle may carry its lock at [LockFile] (tools.lock.json at its root),
// so the lock travels with the contract and is covered by the bundle's
// digest. [Project] holds the projection to it unless [Options.Lock] gives
// a lock (which wins: the operator's lock over the author's) or
// [Options.IgnoreBundleLock] is set.
//
// # gRPC tools
//
// grpc (absent when there are none, so a lock without gRPC tools reads
// and digests as before) lists the gRPC tools, sorted by name, each
// {"name", "rpc": {"interface", "method": "/pkg.Service/Method",
// "streaming": "unary"|"server"}, "annotations", "text", "inputSchema",
// "outputSchema", "digest"}, digested as above (the output schema is the
// tool's own). A tool name is pinned once across tools and grpc, and
// lockDigest covers the {"name", "digest"} of both lists together.
//
// # Tool mode
//
// toolMode (absent unless the lock was written with `kubepact lock
// --tool-mode`) is how the tools are offered: "all" (one tool per
// operation) or "discover" (search, describe and call tools; see
// Options.ToolMode). `--tool-mode auto` records what auto settles to for
// the pinned tools. A lock without it pins no mode, as locks did before
// the field: it is served in either. A server whose mode in force
// (Capability.Mode, after the lock withheld what it withholds) differs from
// the recorded one does not start: Project fails, naming both modes and
// the two ways out (serve the recorded mode, or write a new lock). The
// mode is the shape of the whole surface, not of one tool, so it is not
// one more DRIFT entry: a server offering every operation of a lock
// written for discovery, or the reverse, is not what was reviewed. It is
// not covered by lockDigest, which stays the digest of the tools pinned
// (so a lock written with --tool-mode has the lockDigest the same tools
// have without it). A kubepact older than the field refuses a lock that
// has it as an unknown field, rather than serve it in a mode it cannot
// check.
//
// Read a lock with ParseLock or ReadLock, make one with NewLock.
type Lock struct {
	Kind       string `json:"kind"`
	Version    int    `json:"version"`
	Service    string `json:"service"`
	LockDigest string `json:"lockDigest"`
	// ToolMode is ToolModeAll or ToolModeDiscover; empty pins no mode
	// (see "Tool mode" above).
	ToolMode string       `json:"toolMode,omitempty"`
	Tools    []LockedTool `json:"tools"`
	// GRPC pins the tools of the bundle's gRPC interfaces (see
	// LockedRPC); absent in a lock written before gRPC tools were pinned,
	// which therefore pins none of them.
	GRPC []LockedRPC `json:"grpc,omitempty"`

	source string // where it was read from, for messages
}

// LockedTool is one tool's entry in a lock.
type LockedTool struct {
	Name         string          `json:"name"`
	Operation    LockedOperation `json:"operation"`
	Annotations  LockedHints     `json:"annotations"`
	Text         string          `json:"text" jsonschema:"digest of the title and description"`
	InputSchema  string          `json:"inputSchema" jsonschema:"digest of the input schema"`
	OutputSchema string          `json:"outputSchema" jsonschema:"digest of the operation's response schemas"`
	Request      LockedRequest   `json:"request" jsonschema:"where the tool's requests go and how they are shaped"`
	Digest       string          `json:"digest" jsonschema:"digest of the whole entry"`
}

// LockedRPC is one gRPC tool's entry in a lock (see Lock). Make one with
// PinRPC.
type LockedRPC struct {
	Name         string      `json:"name"`
	RPC          LockedCall  `json:"rpc"`
	Annotations  LockedHints `json:"annotations"`
	Text         string      `json:"text" jsonschema:"digest of the title and description"`
	InputSchema  string      `json:"inputSchema" jsonschema:"digest of the input schema"`
	OutputSchema string      `json:"outputSchema" jsonschema:"digest of the output schema"`
	Digest       string      `json:"digest" jsonschema:"digest of the whole entry"`
}

// LockedCall is the RPC a locked gRPC tool calls.
type LockedCall struct {
	Interface string `json:"interface"`
	Method    string `json:"method" jsonschema:"the full method name, /package.Service/Method"`
	Streaming string `json:"streaming" jsonschema:"unary or server"`
}

// PinRPC makes the lock entry of a gRPC tool: title and description,
// input and output schemas (as JSON) are digested.
func PinRPC(name string, call LockedCall, hints LockedHints, title, description string, input, output json.RawMessage) LockedRPC {
	lr := LockedRPC{Name: name, RPC: call, Annotations: hints,
		Text:         mustDigest(map[string]string{"title": title, "description": description}),
		InputSchema:  mustDigest(input),
		OutputSchema: mustDigest(output),
	}
	lr.Digest = lr.digest()
	return lr
}

func (lr LockedRPC) digest() string {
	lr.Digest = ""
	return mustDigest(struct {
		LockedRPC
		Digest string `json:"digest,omitempty"`
	}{LockedRPC: lr})
}

// DriftOf says why a gRPC tool whose lock entry is now is not served
// under l: not pinned, or how it differs from its entry. It returns ""
// when l pins now unchanged.
func (l *Lock) DriftOf(now LockedRPC) string {
	src := l.Source()
	for _, lr := range l.GRPC {
		if lr.Name != now.Name {
			continue
		}
		if lr.Digest == now.Digest {
			return ""
		}
		var out []string
		if lr.RPC != now.RPC {
			out = append(out, fmt.Sprintf("rpc (locked %s %s of interface %q, now %s %s of interface %q)",
				lr.RPC.Streaming, lr.RPC.Method, lr.RPC.Interface, now.RPC.Streaming, now.RPC.Method, now.RPC.Interface))
		}
		out = surfaceDiff(out, lr.Annotations, now.Annotations, [3][2]string{
			{lr.Text, now.Text}, {lr.InputSchema, now.InputSchema}, {lr.OutputSchema, now.OutputSchema}}, "output schema")
		if len(out) == 0 {
			out = append(out, "the entry's digest")
		}
		return fmt.Sprintf("differs from its entry in the tools lock %s: %s", src, strings.Join(out, "; "))
	}
	return fmt.Sprintf("not in the tools lock %s, which pins %d gRPC tool(s): a tool is offered only once a lock names it (write one with `kubepact lock BUNDLE`)", src, len(l.GRPC))
}

// Source names where the lock was read from.
func (l *Lock) Source() string { return cmp.Or(l.source, "given in Options.Lock") }

// LockedRequest is the shape of a locked tool's request (see Lock).
type LockedRequest struct {
	BaseURL    string           `json:"baseUrl,omitempty"`
	Parameters []LockedParam    `json:"parameters"`
	Body       string           `json:"body,omitempty"`
	Security   [][]LockedScheme `json:"security"`
}

// LockedParam is where one parameter goes and how it is serialised.
type LockedParam struct {
	Name          string `json:"name"`
	In            string `json:"in"`
	Style         string `json:"style"`
	Explode       bool   `json:"explode"`
	AllowReserved bool   `json:"allowReserved"`
	ContentType   string `json:"contentType,omitempty"`
}

// LockedScheme is one security scheme a requirement names, and where it
// puts its credential.
type LockedScheme struct {
	Name          string `json:"name"`
	Type          string `json:"type"`
	HTTPScheme    string `json:"httpScheme,omitempty"`
	In            string `json:"in,omitempty"`
	ParameterName string `json:"parameterName,omitempty"`
}

// LockedOperation is the operation a locked tool calls.
type LockedOperation struct {
	Interface   string `json:"interface"`
	Method      string `json:"method"`
	Path        string `json:"path"`
	OperationID string `json:"operationId,omitempty"`
}

// LockedHints are the annotations a lock pins.
type LockedHints struct {
	ReadOnly    bool `json:"readOnlyHint"`
	Destructive bool `json:"destructiveHint"`
	Idempotent  bool `json:"idempotentHint"`
}

// LockStatus says how a projection was held to a lock.
type LockStatus struct {
	Source     string       `json:"source" jsonschema:"where the lock was read: a file path, or the bundle's tools.lock.json"`
	FromBundle bool         `json:"fromBundle" jsonschema:"whether the lock is the one the bundle carries"`
	LockDigest string       `json:"lockDigest" jsonschema:"the lock's lockDigest: the digest of the tools it pins"`
	Locked     int          `json:"locked" jsonschema:"tools the lock pins"`
	Drifted    []string     `json:"drifted" jsonschema:"tools withheld with reason DRIFT"`
	Missing    []LockedTool `json:"missing" jsonschema:"locked tools the bundle no longer has"`
}

// Pin returns the tool's lock entry, computed once.
func (t *Tool) Pin() LockedTool {
	if t.op == nil {
		return t.pin()
	}
	t.op.pinOnce.Do(func() { t.op.pinned = t.pin() })
	return t.op.pinned
}

func (t *Tool) pin() LockedTool {
	lt := LockedTool{
		Name:        t.Name,
		Operation:   LockedOperation{Interface: t.Interface, Method: t.Method, Path: t.Path, OperationID: t.OperationID},
		Annotations: LockedHints{ReadOnly: t.Hints.ReadOnly, Destructive: t.Hints.Destructive, Idempotent: t.Hints.Idempotent},
		Text:        mustDigest(map[string]string{"title": t.Title, "description": t.Description}),
		// The projection writes the input schema with encoding/json from
		// a decoded tree: it is in canonical form already.
		InputSchema: digestBytes(t.InputSchema),
	}
	if t.op != nil {
		lt.OutputSchema = t.op.outputDigest
		lt.Request = t.op.requestShape()
	}
	lt.normalize()
	lt.Digest = lt.digest()
	return lt
}

// normalize writes empty lists as [] (a lock read back has them so).
func (lt *LockedTool) normalize() {
	if lt.Request.Parameters == nil {
		lt.Request.Parameters = []LockedParam{}
	}
	if lt.Request.Security == nil {
		lt.Request.Security = [][]LockedScheme{}
	}
	for i, r := range lt.Request.Security {
		if r == nil {
			lt.Request.Security[i] = []LockedScheme{}
		}
	}
}

// requestShape is the operation's request as a lock pins it.
func (op *operation) requestShape() LockedRequest {
	r := LockedRequest{BaseURL: op.iface.declaredBase, Parameters: []LockedParam{}, Security: [][]LockedScheme{}}
	for _, pr := range op.params {
		r.Parameters = append(r.Parameters, LockedParam{Name: pr.name, In: pr.in, Style: pr.style, Explode: pr.explode, AllowReserved: pr.allowReserved, ContentType: pr.contentType})
	}
	slices.SortFunc(r.Parameters, func(a, b LockedParam) int {
		return cmp.Or(cmp.Compare(slices.Index(locations, a.In), slices.Index(locations, b.In)), strings.Compare(a.Name, b.Name))
	})
	if op.body != nil {
		r.Body = op.body.sentType()
	}
	for _, req := range op.security {
		schemes := []LockedScheme{}
		for _, name := range openapischema.SortedKeys(req) {
			s := op.iface.schemes[name]
			ls := LockedScheme{Name: name, Type: s.typ}
			switch s.typ {
			case "http":
				ls.HTTPScheme = s.scheme
			case "apiKey":
				ls.In, ls.ParameterName = s.in, s.name
			}
			schemes = append(schemes, ls)
		}
		r.Security = append(r.Security, schemes)
	}
	return r
}

// digest covers every field of the entry but Digest.
func (lt LockedTool) digest() string {
	lt.Digest = ""
	return mustDigest(struct {
		LockedTool
		Digest string `json:"digest,omitempty"`
	}{LockedTool: lt})
}

// NewLock pins every exposed tool of c, and the gRPC tools given. It
// records no tool mode; RecordMode does.
func NewLock(c *Capability, rpcs ...LockedRPC) *Lock {
	l := &Lock{Kind: LockKind, Version: lockVersion, Service: c.Service, Tools: []LockedTool{}}
	for _, t := range c.Tools {
		l.Tools = append(l.Tools, t.Pin())
	}
	slices.SortFunc(l.Tools, func(a, b LockedTool) int { return strings.Compare(a.Name, b.Name) })
	if len(rpcs) > 0 {
		l.GRPC = slices.Clone(rpcs)
		slices.SortFunc(l.GRPC, func(a, b LockedRPC) int { return strings.Compare(a.Name, b.Name) })
	}
	l.LockDigest = lockDigest(l.Tools, l.GRPC...)
	return l
}

// RecordMode records the tool mode c is in force in (Capability.Mode:
// auto settled) as the lock's toolMode, and returns it.
func (l *Lock) RecordMode(c *Capability) string {
	l.ToolMode, _ = c.Mode()
	return l.ToolMode
}

// checkMode refuses to serve c under l when l records a tool mode other
// than the one c is in force in.
func (l *Lock) checkMode(c *Capability) error {
	if l.ToolMode == "" {
		return nil
	}
	mode, why := c.Mode()
	if mode == l.ToolMode {
		return nil
	}
	return fmt.Errorf("the tools lock %s records tool mode %s, and this server would run in %s mode (%s): serve it with ToolMode %s, "+
		"or write a lock for %s mode (`kubepact lock BUNDLE --tool-mode %s`) and review it", l.Source(), l.ToolMode, mode, why, l.ToolMode, mode, mode)
}

// lockDigest is the digest of the {name, digest} list of tools and gRPC
// tools sorted by name.
func lockDigest(tools []LockedTool, rpcs ...LockedRPC) string {
	type entry struct {
		Name   string `json:"name"`
		Digest string `json:"digest"`
	}
	list := make([]entry, 0, len(tools)+len(rpcs))
	for _, t := range tools {
		list = append(list, entry{t.Name, t.Digest})
	}
	for _, r := range rpcs {
		list = append(list, entry{r.Name, r.Digest})
	}
	slices.SortFunc(list, func(a, b entry) int { return strings.Compare(a.Name, b.Name) })
	return mustDigest(list)
}

// Marshal encodes the lock as written to a file: indented, one trailing
// newline.
func (l *Lock) Marshal() ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(l); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

var digestPattern = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)

// ParseLock reads a lock document strictly; source names it in errors.
func ParseLock(data []byte, source string) (*Lock, error) {
	fail := func(format string, args ...any) (*Lock, error) {
		return nil, fmt.Errorf("tools lock %s: %s", source, fmt.Sprintf(format, args...))
	}
	if len(data) > MaxLockBytes {
		return fail("%d bytes, more than the %d a lock may have", len(data), MaxLockBytes)
	}
	if p, dup := jsonobj.DuplicateKeyPath(data); dup {
		return fail("the key %s is given twice", p)
	}
	// The kind and version first: a lock of another version is told
	// apart from a document that is no lock at all.
	var head struct {
		Kind    string `json:"kind"`
		Version int    `json:"version"`
		// The name lockDigest had before it was told apart from
		// toolSurfaceDigest; a lock that has it is refused in words.
		OldDigest *string `json:"surfaceDigest"`
	}
	if err := json.NewDecoder(bytes.NewReader(data)).Decode(&head); err != nil {
		return fail("not a lock document: %s", jsonProblem(err))
	}
	switch {
	case head.Kind != LockKind:
		return fail("kind %q; want kind %q (a file `kubepact lock` writes)", head.Kind, LockKind)
	case head.Version == 1:
		return fail("version 1, written by an older kubepact, does not pin where requests go (base URL, parameter placement, security); " +
			"write a new lock with `kubepact lock BUNDLE` and review what it pins")
	case head.Version != lockVersion:
		return fail("version %d is not one this kubepact reads (it reads version %d); write a new lock with `kubepact lock BUNDLE`", head.Version, lockVersion)
	case head.OldDigest != nil:
		return fail("it has surfaceDigest, the field this kubepact calls lockDigest (the digest of the tools a lock pins, not the toolSurfaceDigest of tools/list); " +
			"write a new lock with `kubepact lock BUNDLE`")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var l Lock
	if err := dec.Decode(&l); err != nil {
		return fail("not a lock document: %s", jsonProblem(err))
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return fail("more than one JSON value")
	}
	seen := map[string]bool{}
	for i, t := range l.Tools {
		at := fmt.Sprintf("tools[%d]", i)
		if t.Name == "" {
			return fail("%s has no name", at)
		}
		if seen[t.Name] {
			return fail("%s: the tool %q is locked twice", at, t.Name)
		}
		seen[t.Name] = true
		if t.Operation.Method == "" || t.Operation.Path == "" {
			return fail("%s (%s): operation needs method and path", at, t.Name)
		}
		for _, pr := range t.Request.Parameters {
			if !slices.Contains(locations, pr.In) {
				return fail("%s (%s): parameter %q is in %q; want one of %s", at, t.Name, pr.Name, pr.In, strings.Join(locations, ", "))
			}
		}
		for field, d := range map[string]string{"text": t.Text, "inputSchema": t.InputSchema, "outputSchema": t.OutputSchema, "digest": t.Digest} {
			if !digestPattern.MatchString(d) {
				return fail("%s (%s): %s %q is not a digest (want sha256: and 64 lower-case hex digits)", at, t.Name, field, d)
			}
		}
		if want := t.digest(); t.Digest != want {
			return fail("%s (%s): digest %s does not cover the entry (it would be %s); the entry was changed by hand — write a new lock", at, t.Name, t.Digest, want)
		}
	}
	for i, r := range l.GRPC {
		at := fmt.Sprintf("grpc[%d]", i)
		if r.Name == "" {
			return fail("%s has no name", at)
		}
		if seen[r.Name] {
			return fail("%s: the tool %q is locked twice", at, r.Name)
		}
		seen[r.Name] = true
		if r.RPC.Method == "" || (r.RPC.Streaming != "unary" && r.RPC.Streaming != "server") {
			return fail("%s (%s): rpc needs method and streaming (unary or server)", at, r.Name)
		}
		for field, d := range map[string]string{"text": r.Text, "inputSchema": r.InputSchema, "outputSchema": r.OutputSchema, "digest": r.Digest} {
			if !digestPattern.MatchString(d) {
				return fail("%s (%s): %s %q is not a digest (want sha256: and 64 lower-case hex digits)", at, r.Name, field, d)
			}
		}
		if want := r.digest(); r.Digest != want {
			return fail("%s (%s): digest %s does not cover the entry (it would be %s); the entry was changed by hand — write a new lock", at, r.Name, r.Digest, want)
		}
	}
	switch l.ToolMode {
	case "", ToolModeAll, ToolModeDiscover:
	default:
		return fail("toolMode %q; want %s or %s (or no toolMode: any mode)", l.ToolMode, ToolModeAll, ToolModeDiscover)
	}
	if want := lockDigest(l.Tools, l.GRPC...); l.LockDigest != want {
		return fail("lockDigest %s does not cover the tools (it would be %s); write a new lock", l.LockDigest, want)
	}
	if l.Tools == nil {
		l.Tools = []LockedTool{}
	}
	l.source = source
	return &l, nil
}

// jsonProblem says what is wrong with a document encoding/json refused,
// in a sentence of ours.
func jsonProblem(err error) string {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return fmt.Sprintf("not valid JSON (at byte %d)", syn.Offset)
	case errors.As(err, &typ):
		field := typ.Field
		if field == "" {
			field = "the document"
		}
		return fmt.Sprintf("%s is a JSON %s where a %s belongs", field, typ.Value, typ.Type)
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		return "the JSON ends too early"
	}
	msg := strings.TrimPrefix(err.Error(), "json: ")
	if f, ok := strings.CutPrefix(msg, "unknown field "); ok {
		return "unknown field " + f + " (a lock has only the fields `kubepact lock` writes)"
	}
	return msg
}

// lockFileError says in a sentence why a lock file cannot be read, and
// keeps the system's error for errors.Is.
type lockFileError struct {
	msg string
	err error
}

func (e *lockFileError) Error() string { return e.msg }
func (e *lockFileError) Unwrap() error { return e.err }

// ReadLock reads and parses the lock file at path.
func ReadLock(path string) (*Lock, error) {
	f, err := os.Open(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, &lockFileError{err: err, msg: fmt.Sprintf("tools lock %s does not exist: write it with `kubepact lock BUNDLE -o %s` (and review it), or give the path of an existing lock", path, path)}
	case errors.Is(err, fs.ErrPermission):
		return nil, &lockFileError{err: err, msg: fmt.Sprintf("tools lock %s cannot be read: permission denied", path)}
	case err != nil:
		return nil, fmt.Errorf("tools lock %s cannot be opened: %w", path, err)
	}
	defer func() { _ = f.Close() }()
	data, err := io.ReadAll(io.LimitReader(f, MaxLockBytes+1))
	if err != nil {
		return nil, &lockFileError{err: err, msg: fmt.Sprintf("tools lock %s cannot be read: give the path of a lock file, not a directory or a device", path)}
	}
	return ParseLock(data, path)
}

// readBundleLock returns the lock the bundle carries at LockFile, or nil
// when it carries none.
func readBundleLock(fsys fs.FS) (*Lock, error) {
	if fsys == nil {
		return nil, nil
	}
	info, err := fs.Stat(fsys, LockFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("tools lock %s in the bundle: %w", LockFile, err)
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("tools lock %s in the bundle is not a regular file", LockFile)
	}
	f, err := fsys.Open(LockFile)
	if err != nil {
		return nil, fmt.Errorf("tools lock %s in the bundle: %w", LockFile, err)
	}
	defer func() { _ = f.Close() }()
	data, err := io.ReadAll(io.LimitReader(f, MaxLockBytes+1))
	if err != nil {
		return nil, fmt.Errorf("tools lock %s in the bundle: %w", LockFile, err)
	}
	return ParseLock(data, LockFile+" (in the bundle)")
}

// WriteLockFile writes the lock to path atomically (internal/atomicfile):
// to a temporary file in the same directory, synced, then renamed over
// path. A failure leaves path as it was.
func WriteLockFile(path string, l *Lock) error {
	data, err := l.Marshal()
	if err != nil {
		return err
	}
	if err := atomicfile.Write(path, data, 0o644); err != nil {
		return fmt.Errorf("writing the tools lock: %w", err)
	}
	return nil
}

// holdToLock withholds, with reason DRIFT, every exposed tool of c that
// differs from its lock entry or has none, records the lock entries the
// bundle no longer has, and sets c.Lock. With operatorBase the requests
// go to a base URL the operator gave, so the bundle's own is not
// compared.
func holdToLock(c *Capability, l *Lock, fromBundle, operatorBase bool) {
	src := l.Source()
	c.held = l
	st := &LockStatus{Source: src, FromBundle: fromBundle, LockDigest: l.LockDigest, Locked: len(l.Tools),
		Drifted: []string{}, Missing: []LockedTool{}}
	locked := make(map[string]LockedTool, len(l.Tools))
	for _, lt := range l.Tools {
		locked[lt.Name] = lt
	}
	kept := c.Tools[:0:0]
	for _, t := range c.Tools {
		pin := t.Pin()
		lt, ok := locked[t.Name]
		if ok && operatorBase {
			lt.Request.BaseURL, pin.Request.BaseURL = "", ""
			lt.Digest, pin.Digest = lt.digest(), pin.digest()
		}
		var reason string
		switch {
		case !ok:
			reason = fmt.Sprintf("not in the tools lock %s, which pins %d tool(s): a tool is offered only once a lock names it", src, len(l.Tools))
		case lt.Digest != pin.Digest:
			reason = fmt.Sprintf("differs from its entry in the tools lock %s: %s", src, strings.Join(lockDiff(lt, pin), "; "))
		default:
			kept = append(kept, t)
			continue
		}
		st.Drifted = append(st.Drifted, t.Name)
		c.Withheld = append(c.Withheld, Withheld{Name: t.Name, Interface: t.Interface, Method: t.Method, Path: t.Path,
			OperationID: t.OperationID, Code: WithheldDrift, Reason: reason})
		for i := range c.Interfaces {
			if c.Interfaces[i].Name == t.Interface {
				c.Interfaces[i].Exposed--
				c.Interfaces[i].Withheld++
			}
		}
	}
	c.Tools = kept
	have := map[string]bool{}
	for _, t := range kept {
		have[t.Name] = true
	}
	for _, w := range c.Withheld {
		have[w.Name] = true
	}
	for _, lt := range l.Tools {
		if !have[lt.Name] {
			st.Missing = append(st.Missing, lt)
		}
	}
	c.Lock = st
	missing := make([]string, len(st.Missing))
	for i, lt := range st.Missing {
		missing[i] = fmt.Sprintf("%s (%s %s)", lt.Name, lt.Operation.Method, lt.Operation.Path)
	}
	c.Warnings = append(c.Warnings, LockWarnings("tool(s)", src, st.Drifted, missing)...)
}

// LockWarnings are the stderr lines of a projection held to the lock
// read from src: the tools withheld as DRIFT and the locked ones the
// bundle no longer has (each described), counted in noun ("tool(s)",
// "gRPC tool(s)"); none when neither list has any.
func LockWarnings(noun, src string, drifted, missing []string) []string {
	var out []string
	if n := len(drifted); n > 0 {
		out = append(out, fmt.Sprintf("withheld %d %s that do not match the tools lock %s (reason DRIFT): %s", n, noun, src, strings.Join(drifted, ", ")))
	}
	if n := len(missing); n > 0 {
		out = append(out, fmt.Sprintf("the tools lock %s pins %d %s the bundle no longer has: %s", src, n, noun, strings.Join(missing, ", ")))
	}
	return out
}

// surfaceDiff appends to out the parts of a locked surface (OpenAPI tool
// or gRPC tool) that differ from now: the annotations, then the digests of
// the text, the input schema and the output schema (locked, now pairs), the
// last named outputName.
func surfaceDiff(out []string, locked, now LockedHints, digests [3][2]string, outputName string) []string {
	if locked != now {
		out = append(out, fmt.Sprintf("annotations (locked %+v, now %+v)", locked, now))
	}
	for i, what := range [3]string{"title or description", "input schema", outputName} {
		if d := digests[i]; d[0] != d[1] {
			out = append(out, fmt.Sprintf("%s (locked %s, now %s)", what, short(d[0]), short(d[1])))
		}
	}
	return out
}

// lockDiff says which parts of a tool differ from its lock entry.
func lockDiff(locked, now LockedTool) []string {
	var out []string
	if locked.Operation != now.Operation {
		out = append(out, fmt.Sprintf("operation (locked %s %s of interface %q, now %s %s of interface %q)",
			locked.Operation.Method, locked.Operation.Path, locked.Operation.Interface, now.Operation.Method, now.Operation.Path, now.Operation.Interface))
	}
	out = surfaceDiff(out, locked.Annotations, now.Annotations, [3][2]string{
		{locked.Text, now.Text}, {locked.InputSchema, now.InputSchema}, {locked.OutputSchema, now.OutputSchema}}, "output schema (the operation's responses)")
	out = append(out, requestDiff(locked.Request, now.Request)...)
	if len(out) == 0 {
		out = append(out, "the entry's digest")
	}
	return out
}

// requestDiff says how the request's shape differs from the locked one:
// where it goes, which parameters moved or are serialised otherwise, the
// body's media type, and the security.
func requestDiff(locked, now LockedRequest) []string {
	var out []string
	if locked.BaseURL != now.BaseURL {
		out = append(out, fmt.Sprintf("base URL (the bundle's servers: locked %s, now %s)", orNothing(locked.BaseURL), orNothing(now.BaseURL)))
	}
	out = append(out, paramsDiff(locked.Parameters, now.Parameters)...)
	if locked.Body != now.Body {
		out = append(out, fmt.Sprintf("request body media type (locked %s, now %s)", orNothing(locked.Body), orNothing(now.Body)))
	}
	if !slices.EqualFunc(locked.Security, now.Security, slices.Equal[[]LockedScheme]) {
		d := fmt.Sprintf("security (locked %s, now %s)", describeSecurity(locked.Security), describeSecurity(now.Security))
		if credentialInQuery(now.Security) && !credentialInQuery(locked.Security) {
			d += "; it now puts a credential in the URL query"
		}
		out = append(out, d)
	}
	return out
}

// paramsDiff describes parameters the lock has and the bundle has not,
// the reverse, and those whose location or serialisation changed.
func paramsDiff(locked, now []LockedParam) []string {
	byName := func(ps []LockedParam) map[string][]LockedParam {
		m := map[string][]LockedParam{}
		for _, p := range ps {
			m[p.Name] = append(m[p.Name], p)
		}
		return m
	}
	was, is := byName(locked), byName(now)
	names := openapischema.SortedKeys(was)
	for n := range is {
		if _, ok := was[n]; !ok {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	var out []string
	for _, n := range names {
		a, b := was[n], is[n]
		switch {
		case slices.Equal(a, b):
		case len(a) == 1 && len(b) == 1:
			out = append(out, fmt.Sprintf("parameter %q (locked %s, now %s)", n, describeParam(a[0]), describeParam(b[0])))
		default:
			for _, p := range a {
				if !slices.Contains(b, p) {
					out = append(out, fmt.Sprintf("parameter %q %s is no longer there", n, describeParam(p)))
				}
			}
			for _, p := range b {
				if !slices.Contains(a, p) {
					out = append(out, fmt.Sprintf("parameter %q %s is new", n, describeParam(p)))
				}
			}
		}
	}
	return out
}

func describeParam(p LockedParam) string {
	d := fmt.Sprintf("in %s, style %s, explode %t, allowReserved %t", p.In, p.Style, p.Explode, p.AllowReserved)
	if p.ContentType != "" {
		d += ", as " + p.ContentType
	}
	return d
}

// describeSecurity writes requirements as "a or b+c"; "none" without one.
func describeSecurity(reqs [][]LockedScheme) string {
	if len(reqs) == 0 {
		return "none"
	}
	alts := make([]string, len(reqs))
	for i, r := range reqs {
		if len(r) == 0 {
			alts[i] = "anonymous"
			continue
		}
		parts := make([]string, len(r))
		for j, s := range r {
			parts[j] = describeScheme(s)
		}
		alts[i] = strings.Join(parts, " + ")
	}
	return strings.Join(alts, " or ")
}

func describeScheme(s LockedScheme) string {
	switch s.Type {
	case "":
		return s.Name + " (not declared)"
	case "http":
		return fmt.Sprintf("%s (http %s)", s.Name, s.HTTPScheme)
	case "apiKey":
		return fmt.Sprintf("%s (apiKey in %s %q)", s.Name, s.In, s.ParameterName)
	}
	return fmt.Sprintf("%s (%s)", s.Name, s.Type)
}

// credentialInQuery reports whether a requirement names a scheme that
// puts its credential in the URL query.
func credentialInQuery(reqs [][]LockedScheme) bool {
	for _, r := range reqs {
		for _, s := range r {
			if s.Type == "apiKey" && s.In == "query" {
				return true
			}
		}
	}
	return false
}

func orNothing(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// short abbreviates a digest for messages.
func short(d string) string {
	if len(d) > len("sha256:")+12 {
		return d[:len("sha256:")+12] + "…"
	}
	return d
}

// LockDigestOf is the lockDigest of the tools c exposes and of the gRPC
// tools rpcs pins (the digest of their lock entries, by name): equal to a
// lock's lockDigest when exactly the tools the lock pins are offered.
func LockDigestOf(c *Capability, rpcs ...LockedRPC) string {
	pins := make([]LockedTool, 0, len(c.Tools))
	for _, t := range c.Tools {
		pins = append(pins, t.Pin())
	}
	return lockDigest(pins, rpcs...)
}

// mustDigest is the digest of v's canonical JSON. v is always a value this
// package built (or JSON it produced), so encoding cannot fail; if it ever
// did, the digest of the error text still never equals a real one.
func mustDigest(v any) string {
	b, err := canonicalJSON(v)
	if err != nil {
		b = []byte("unencodable: " + err.Error())
	}
	return digestBytes(b)
}

func digestBytes(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// canonicalJSON encodes v with object keys sorted bytewise, no white
// space, encoding/json's escaping, and numbers kept as written.
func canonicalJSON(v any) ([]byte, error) {
	raw, ok := v.(json.RawMessage)
	if !ok {
		var err error
		if raw, err = json.Marshal(v); err != nil {
			return nil, err
		}
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var tree any
	if err := dec.Decode(&tree); err != nil {
		return nil, err
	}
	return marshalTree(tree)
}

// responseDigester digests operations' responses for the outputSchema
// digest. Each node a $ref reaches is digested once per document, with
// the locations it references in turn: an API whose responses all reach
// one large schema graph is walked once, not once per operation.
type responseDigester struct {
	d     *openapischema.Document
	nodes map[string]*refNode // location (file#pointer) → its digest and references
	// seen and all are closure's scratch space, reused from one
	// operation to the next.
	seen map[string]bool
	all  []string
}

type refNode struct {
	digest string
	refs   []string // locations it references directly
	entry  []byte   // "location":"digest" as canonical JSON writes it
}

func newResponseDigester(d *openapischema.Document) *responseDigester {
	return &responseDigester{d: d, nodes: map[string]*refNode{}, seen: map[string]bool{}}
}

// digest covers the operation's responses object as written (status →
// description, headers, content and schemas) and every location it
// references, directly or not, with that location's own digest.
func (r *responseDigester) digest(opNode map[string]any, file string) string {
	responses := opNode["responses"]
	refs := r.closure(r.refsIn(responses, file))
	// The canonical JSON of {"file", "references": {location: digest},
	// "responses"}, written directly: keys in order, and the decoded tree
	// is encoded as encoding/json encodes it, which is canonical.
	h := sha256.New()
	w := func(v any) {
		b, err := marshalTree(v)
		if err != nil {
			b, _ = json.Marshal("unencodable: " + err.Error())
		}
		h.Write(b)
	}
	h.Write([]byte(`{"file":`))
	w(file)
	h.Write([]byte(`,"references":{`))
	for i, loc := range refs {
		if i > 0 {
			h.Write([]byte(","))
		}
		h.Write(r.nodes[loc].entry)
	}
	h.Write([]byte(`},"responses":`))
	w(responses)
	h.Write([]byte("}"))
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// closure returns every location reachable from direct, sorted.
func (r *responseDigester) closure(direct []string) []string {
	stack := direct
	clear(r.seen)
	seen, all := r.seen, r.all[:0]
	defer func() { r.all = all }()
	for len(stack) > 0 {
		loc := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[loc] {
			continue
		}
		seen[loc] = true
		all = append(all, loc)
		stack = append(stack, r.nodes[loc].refs...)
	}
	slices.Sort(all)
	return all
}

// refsIn returns the locations node references directly, digesting each
// location the first time it is met.
func (r *responseDigester) refsIn(node any, file string) []string {
	var out []string
	var walk func(n any, depth int)
	walk = func(n any, depth int) {
		if depth > openapischema.MaxSchemaDepth*4 {
			return
		}
		switch v := n.(type) {
		case map[string]any:
			if ref, ok := v["$ref"].(string); ok {
				out = append(out, r.location(file, ref))
			}
			// Any order: what is found is sorted (closure) and each
			// location's digest is its own.
			for _, e := range v {
				walk(e, depth+1)
			}
		case []any:
			for _, e := range v {
				walk(e, depth+1)
			}
		}
	}
	walk(node, 0)
	return out
}

// location resolves ref written in file to the location it names,
// digesting what is there the first time.
func (r *responseDigester) location(file, ref string) string {
	target, tfile, err := r.d.Resolve(file, ref)
	before, frag, _ := strings.Cut(ref, "#")
	loc := tfile + "#" + frag
	if err != nil {
		if before != "" {
			file = path.Join(path.Dir(file), before)
		}
		loc = "unresolved:" + file + "#" + frag
	}
	if _, done := r.nodes[loc]; done {
		return loc
	}
	n := &refNode{}
	r.nodes[loc] = n // before the walk: a cycle meets it again
	defer func() {
		k, _ := json.Marshal(loc)
		v, _ := json.Marshal(n.digest)
		n.entry = append(append(k, ':'), v...)
	}()
	if err != nil {
		n.digest = mustDigest(err.Error())
		return loc
	}
	raw, merr := marshalTree(target) // a decoded tree: canonical as encoded
	if merr != nil {
		raw = []byte(merr.Error())
	}
	n.digest = digestBytes(raw)
	n.refs = r.refsIn(target, tfile)
	return loc
}
