package capability

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
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/kubepact/kubepact/internal/jsonobj"
)

// LockFile is where a bundle carries its tools lock.
const LockFile = "tools.lock.json"

// LockKind is the kind of a tools lock document.
const LockKind = "kubepact.dev/ToolsLock"

// lockVersion is the format version this package writes and reads.
const lockVersion = 1

// MaxLockBytes bounds a lock document.
const MaxLockBytes = 16 << 20

// WithheldDrift is the reason of a tool withheld because it does not match
// the tools lock.
const WithheldDrift = "DRIFT"

// Lock is a tools lock. It pins the surface of generated tools a bundle may offer: for
// each tool its name, the operation it calls, its annotations and digests
// of what an agent is shown (title and description, input schema, the
// operation's response schemas). A server held to a lock withholds, with
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
//	  "version": 1,
//	  "service": "catalog",
//	  "surfaceDigest": "sha256:…",
//	  "tools": [
//	    {
//	      "name": "getProduct",
//	      "operation": {"interface": "http", "method": "GET", "path": "/products/{id}", "operationId": "getProduct"},
//	      "annotations": {"readOnlyHint": true, "destructiveHint": false, "idempotentHint": true},
//	      "text": "sha256:…",
//	      "inputSchema": "sha256:…",
//	      "outputSchema": "sha256:…",
//	      "digest": "sha256:…"
//	    }
//	  ]
//	}
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
//   - surfaceDigest: the list of {"name", "digest"} of every tool, by name.
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
// Read a lock with ParseLock or ReadLock, make one with NewLock.
type Lock struct {
	Kind          string       `json:"kind"`
	Version       int          `json:"version"`
	Service       string       `json:"service"`
	SurfaceDigest string       `json:"surfaceDigest"`
	Tools         []LockedTool `json:"tools"`

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
	Digest       string          `json:"digest" jsonschema:"digest of the whole entry"`
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
	Source        string       `json:"source" jsonschema:"where the lock was read: a file path, or the bundle's tools.lock.json"`
	FromBundle    bool         `json:"fromBundle" jsonschema:"whether the lock is the one the bundle carries"`
	SurfaceDigest string       `json:"surfaceDigest" jsonschema:"the lock's surface digest"`
	Locked        int          `json:"locked" jsonschema:"tools the lock pins"`
	Drifted       []string     `json:"drifted" jsonschema:"tools withheld with reason DRIFT"`
	Missing       []LockedTool `json:"missing" jsonschema:"locked tools the bundle no longer has"`
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
	}
	lt.Digest = lt.digest()
	return lt
}

// digest covers every field of the entry but Digest.
func (lt LockedTool) digest() string {
	lt.Digest = ""
	return mustDigest(struct {
		LockedTool
		Digest string `json:"digest,omitempty"`
	}{LockedTool: lt})
}

// NewLock pins every exposed tool of c.
func NewLock(c *Capability) *Lock {
	l := &Lock{Kind: LockKind, Version: lockVersion, Service: c.Service, Tools: []LockedTool{}}
	for _, t := range c.Tools {
		l.Tools = append(l.Tools, t.Pin())
	}
	slices.SortFunc(l.Tools, func(a, b LockedTool) int { return strings.Compare(a.Name, b.Name) })
	l.SurfaceDigest = surfaceDigest(l.Tools)
	return l
}

// surfaceDigest is the digest of the {name, digest} list of tools sorted
// by name.
func surfaceDigest(tools []LockedTool) string {
	type entry struct {
		Name   string `json:"name"`
		Digest string `json:"digest"`
	}
	list := make([]entry, 0, len(tools))
	for _, t := range tools {
		list = append(list, entry{t.Name, t.Digest})
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
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var l Lock
	if err := dec.Decode(&l); err != nil {
		return fail("not a lock document: %v", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return fail("more than one JSON value")
	}
	if l.Kind != LockKind || l.Version != lockVersion {
		return fail("kind %q version %d; want kind %q version %d", l.Kind, l.Version, LockKind, lockVersion)
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
		for field, d := range map[string]string{"text": t.Text, "inputSchema": t.InputSchema, "outputSchema": t.OutputSchema, "digest": t.Digest} {
			if !digestPattern.MatchString(d) {
				return fail("%s (%s): %s %q is not a digest (want sha256: and 64 lower-case hex digits)", at, t.Name, field, d)
			}
		}
		if want := t.digest(); t.Digest != want {
			return fail("%s (%s): digest %s does not cover the entry (it would be %s); the entry was changed by hand — write a new lock", at, t.Name, t.Digest, want)
		}
	}
	if want := surfaceDigest(l.Tools); l.SurfaceDigest != want {
		return fail("surfaceDigest %s does not cover the tools (it would be %s); write a new lock", l.SurfaceDigest, want)
	}
	if l.Tools == nil {
		l.Tools = []LockedTool{}
	}
	l.source = source
	return &l, nil
}

// ReadLock reads and parses the lock file at path.
func ReadLock(path string) (*Lock, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("tools lock: %w", err)
	}
	defer func() { _ = f.Close() }()
	data, err := io.ReadAll(io.LimitReader(f, MaxLockBytes+1))
	if err != nil {
		return nil, fmt.Errorf("tools lock %s: %w", path, err)
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

// WriteLockFile writes the lock to path atomically: to a temporary file in
// the same directory, synced, then renamed over path. A failure leaves
// path as it was.
func WriteLockFile(path string, l *Lock) (err error) {
	data, err := l.Marshal()
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("writing the tools lock: %w", err)
	}
	defer func() {
		if err != nil {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}()
	if _, err = tmp.Write(data); err != nil {
		return fmt.Errorf("writing the tools lock: %w", err)
	}
	if err = tmp.Chmod(0o644); err != nil {
		return fmt.Errorf("writing the tools lock: %w", err)
	}
	if err = tmp.Sync(); err != nil {
		return fmt.Errorf("writing the tools lock: %w", err)
	}
	if err = tmp.Close(); err != nil {
		return fmt.Errorf("writing the tools lock: %w", err)
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("writing the tools lock: %w", err)
	}
	return nil
}

// holdToLock withholds, with reason DRIFT, every exposed tool of c that
// differs from its lock entry or has none, records the lock entries the
// bundle no longer has, and sets c.Lock.
func holdToLock(c *Capability, l *Lock, fromBundle bool) {
	src := cmp.Or(l.source, "given in Options.Lock")
	st := &LockStatus{Source: src, FromBundle: fromBundle, SurfaceDigest: l.SurfaceDigest, Locked: len(l.Tools),
		Drifted: []string{}, Missing: []LockedTool{}}
	locked := make(map[string]LockedTool, len(l.Tools))
	for _, lt := range l.Tools {
		locked[lt.Name] = lt
	}
	kept := c.Tools[:0:0]
	for _, t := range c.Tools {
		pin := t.Pin()
		lt, ok := locked[t.Name]
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
	if n := len(st.Drifted); n > 0 {
		c.Warnings = append(c.Warnings, fmt.Sprintf("withheld %d tool(s) that do not match the tools lock %s (reason DRIFT): %s", n, src, strings.Join(st.Drifted, ", ")))
	}
	if n := len(st.Missing); n > 0 {
		names := make([]string, n)
		for i, lt := range st.Missing {
			names[i] = fmt.Sprintf("%s (%s %s)", lt.Name, lt.Operation.Method, lt.Operation.Path)
		}
		c.Warnings = append(c.Warnings, fmt.Sprintf("the tools lock %s pins %d tool(s) the bundle no longer has: %s", src, n, strings.Join(names, ", ")))
	}
}

// lockDiff says which parts of a tool differ from its lock entry.
func lockDiff(locked, now LockedTool) []string {
	var out []string
	if locked.Operation != now.Operation {
		out = append(out, fmt.Sprintf("operation (locked %s %s of interface %q, now %s %s of interface %q)",
			locked.Operation.Method, locked.Operation.Path, locked.Operation.Interface, now.Operation.Method, now.Operation.Path, now.Operation.Interface))
	}
	if locked.Annotations != now.Annotations {
		out = append(out, fmt.Sprintf("annotations (locked %+v, now %+v)", locked.Annotations, now.Annotations))
	}
	for _, part := range []struct{ what, locked, now string }{
		{"title or description", locked.Text, now.Text},
		{"input schema", locked.InputSchema, now.InputSchema},
		{"output schema (the operation's responses)", locked.OutputSchema, now.OutputSchema},
	} {
		if part.locked != part.now {
			out = append(out, fmt.Sprintf("%s (locked %s, now %s)", part.what, short(part.locked), short(part.now)))
		}
	}
	if len(out) == 0 {
		out = append(out, "the entry's digest")
	}
	return out
}

// short abbreviates a digest for messages.
func short(d string) string {
	if len(d) > len("sha256:")+12 {
		return d[:len("sha256:")+12] + "…"
	}
	return d
}

// SurfaceDigestOf is the surface digest of the tools c exposes: equal to a
// lock's surfaceDigest when c offers exactly the tools the lock pins.
func SurfaceDigestOf(c *Capability) string {
	pins := make([]LockedTool, 0, len(c.Tools))
	for _, t := range c.Tools {
		pins = append(pins, t.Pin())
	}
	return surfaceDigest(pins)
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
	return json.Marshal(tree)
}

// responseDigester digests operations' responses for the outputSchema
// digest. Each node a $ref reaches is digested once per document, with
// the locations it references in turn: an API whose responses all reach
// one large schema graph is walked once, not once per operation.
type responseDigester struct {
	d     *document
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

func newResponseDigester(d *document) *responseDigester {
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
		b, err := json.Marshal(v)
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
		if depth > maxSchemaDepth*4 {
			return
		}
		switch v := n.(type) {
		case map[string]any:
			if ref, ok := v["$ref"].(string); ok {
				out = append(out, r.location(file, ref))
			}
			for _, k := range sortedKeys(v) {
				walk(v[k], depth+1)
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
	target, tfile, err := r.d.resolve(file, ref)
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
	raw, merr := json.Marshal(target) // a decoded tree: canonical as encoded
	if merr != nil {
		raw = []byte(merr.Error())
	}
	n.digest = digestBytes(raw)
	n.refs = r.refsIn(target, tfile)
	return loc
}
