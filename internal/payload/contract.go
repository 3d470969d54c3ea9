package payload

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/url"
	"path"
	"slices"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/kubepact/kubepact/bundle"
	"github.com/kubepact/kubepact/bundle/contract"
	"github.com/kubepact/kubepact/internal/jsonobj"
	"github.com/kubepact/kubepact/internal/openapischema"
)

// Subject kinds: what a payload is checked against, and where a field is
// looked up.
const (
	KindRequestBody   = "request_body"  // an operation's request body
	KindParameters    = "parameters"    // an operation's parameters, one object by name
	KindResponse      = "response"      // an operation's response body for one status
	KindMessage       = "message"       // an AsyncAPI message's payload
	KindConfiguration = "configuration" // a configuration's values
)

// Kinds lists the subject kinds.
func Kinds() []string {
	return []string{KindRequestBody, KindParameters, KindResponse, KindMessage, KindConfiguration}
}

// maxDocBytes bounds one AsyncAPI document or configuration schema file.
const maxDocBytes = 16 << 20

// Contract is a bundle read for payload questions. It is not changed after
// Read returns and is safe for concurrent use; schemas are compiled on
// first use and kept.
type Contract struct {
	Service string
	Version string

	fsys       fs.FS
	operations []*openapischema.Shape
	// trees are the operations' schemas decoded once, by operation.
	trees    map[*openapischema.Shape]*opTrees
	messages []*message
	configs  []*configuration
	// problems are interfaces that could not be read, said in a miss.
	problems []string

	mu       sync.Mutex
	compiled map[string]*compiled // subject key → compiled schema
}

// message is one AsyncAPI message.
type message struct {
	name    string // the components.messages key, or the key in its channel
	title   string
	channel string // a channel that carries it, if any
	iface   string
	file    string // bundle path of the AsyncAPI document
	pointer string // JSON pointer to the payload schema in file
	payload any    // the payload schema node (for Explain)
	doc     any    // the document, for $refs inside it
	problem string // why the payload cannot be checked
	summary string
	// operation is the operationId of the AsyncAPI 2.x publish or
	// subscribe operation that carries it inline.
	operation string
}

// opTrees are one operation's schemas as trees (nil: none, or not
// decodable); responses parallel Shape.Responses.
type opTrees struct {
	params, body any
	responses    []any
}

func decodeTree(raw json.RawMessage) any {
	if raw == nil {
		return nil
	}
	t, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil
	}
	return t
}

// configuration is one configuration of the contract.
type configuration struct {
	name     string
	file     string // bundle path of the schema; empty when it lives elsewhere
	ref      string // another bundle's configuration, not followed here
	doc      any    // the schema document
	values   map[string]any
	problem  string
	required bool
}

// compiled is a subject's schema ready to validate, with the tree
// messages read. A compiled copy serves one check at a time (its guard
// counts that check's steps): one copy is kept idle between checks, and
// a check that finds it in use compiles one of its own.
type compiled struct {
	tree any
	// err says the schema does not compile (a cancelled compilation is
	// not kept).
	err error
	// marks says the document marks some field deprecated or write-only,
	// so a checked value is walked for warnings; most documents mark none
	// and the walk is skipped.
	marks bool

	fsys   fs.FS
	resURL string
	loc    string

	mu   sync.Mutex
	idle *instance
}

// instance is one compiled copy of a schema with its guard wired in.
type instance struct {
	schema *jsonschema.Schema
	g      *guard
}

// Shapes returns the shapes of every OpenAPI operation of a bundle, each
// named by its tool name (openapitools.Shapes is the one the product uses).
// It is a parameter of Read so that payload checks share the generated
// tools' conversion and names without importing tool projection.
type Shapes func(ctx context.Context, b *bundle.Bundle) ([]*openapischema.Shape, error)

// Read reads b's interfaces (its OpenAPI operations through shapes) and
// configurations. It fails only when the contract does not parse; an
// interface or schema that cannot be read is kept as a problem, said when
// a question reaches it.
func Read(ctx context.Context, b *bundle.Bundle, shapes Shapes) (*Contract, error) {
	if b == nil || b.Contract == nil {
		var perr error
		if b != nil {
			perr = b.ParseErr
		}
		return nil, &Error{Code: CodeInvalidContract, Message: fmt.Sprintf("the contract does not parse: %v", perr)}
	}
	c := &Contract{Service: b.Contract.Service.Name, Version: b.Contract.Service.Version, fsys: b.FS, compiled: map[string]*compiled{}}
	ops, err := shapes(ctx, b)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		c.problems = append(c.problems, "the OpenAPI interfaces could not be read: "+firstLine(err.Error()))
	}
	c.operations = ops
	c.trees = make(map[*openapischema.Shape]*opTrees, len(ops))
	for _, op := range ops {
		t := &opTrees{params: decodeTree(op.Parameters), body: decodeTree(op.Body)}
		for _, r := range op.Responses {
			t.responses = append(t.responses, decodeTree(r.Schema))
		}
		c.trees[op] = t
	}
	for _, in := range b.Contract.Interfaces {
		if in.Type != "asyncapi" || in.Ref == "" {
			continue
		}
		file := path.Clean(strings.TrimPrefix(in.Ref, "./"))
		msgs, err := readAsyncAPI(b.FS, in.Name, file)
		if err != nil {
			c.problems = append(c.problems, fmt.Sprintf("interface %q (%s) could not be read: %s", in.Name, file, firstLine(err.Error())))
			continue
		}
		c.messages = append(c.messages, msgs...)
	}
	for _, cfg := range b.Contract.Configurations {
		c.configs = append(c.configs, readConfiguration(b.FS, cfg))
	}
	return c, nil
}

func readConfiguration(fsys fs.FS, cfg contract.Configuration) *configuration {
	out := &configuration{name: cfg.Name, values: cfg.Values, required: cfg.Required, ref: cfg.Ref}
	switch {
	case cfg.Schema != "":
		out.file = path.Clean(strings.TrimPrefix(cfg.Schema, "./"))
		doc, err := readDoc(fsys, out.file)
		if err != nil {
			out.problem = fmt.Sprintf("its schema %s could not be read: %s", out.file, firstLine(err.Error()))
		}
		out.doc = doc
	case cfg.Ref != "":
		out.problem = fmt.Sprintf("its schema lives in another bundle (%s), which is not followed here; ask about that bundle instead", cfg.Ref)
	default:
		out.problem = "it declares no schema"
	}
	return out
}

// readDoc reads a JSON or YAML document of the bundle as the tree the
// schema compiler reads (numbers as json.Number).
func readDoc(fsys fs.FS, file string) (any, error) {
	if !fs.ValidPath(file) {
		return nil, fmt.Errorf("%s leaves the bundle", file)
	}
	data, err := fs.ReadFile(fsys, file)
	if err != nil {
		return nil, err
	}
	tree, err := contract.DecodeDocument(file, data, maxDocBytes)
	if err != nil {
		return nil, err
	}
	return normalise(tree)
}

// normalise re-reads a decoded tree through JSON so every number is a
// json.Number, as the schema compiler and validator expect.
func normalise(tree any) (any, error) {
	raw, err := json.Marshal(tree)
	if err != nil {
		return nil, err
	}
	return jsonschema.UnmarshalJSON(bytes.NewReader(raw))
}

// readAsyncAPI lists the messages of one AsyncAPI document (2.x or 3.x):
// components.messages, then messages written inline in channels (3.x) or
// in a channel's publish/subscribe operation (2.x), each once.
func readAsyncAPI(fsys fs.FS, iface, file string) ([]*message, error) {
	doc, err := readDoc(fsys, file)
	if err != nil {
		return nil, err
	}
	root, _ := doc.(map[string]any)
	var out []*message
	seen := map[string]bool{} // pointer of the message object
	add := func(name, channel, ptr string, node any) *message {
		m, p := derefLocal(root, node, ptr)
		mm, ok := m.(map[string]any)
		if !ok || seen[p] {
			return nil
		}
		seen[p] = true
		msg := &message{name: name, channel: channel, iface: iface, file: file, doc: doc}
		msg.title, _ = mm["title"].(string)
		msg.summary, _ = mm["summary"].(string)
		if n, _ := mm["name"].(string); n != "" && name == "" {
			msg.name = n
		}
		if f, _ := mm["schemaFormat"].(string); f != "" && !jsonSchemaFormat(f) {
			msg.problem = fmt.Sprintf("its payload is written in %s, not JSON Schema", f)
		}
		payload, ok := mm["payload"]
		switch {
		case !ok:
			msg.problem = "it declares no payload"
		default:
			// AsyncAPI 3 may wrap the schema: {schemaFormat, schema}.
			pp := p + "/payload"
			if pm, ok := payload.(map[string]any); ok {
				if f, _ := pm["schemaFormat"].(string); f != "" {
					if !jsonSchemaFormat(f) {
						msg.problem = fmt.Sprintf("its payload is written in %s, not JSON Schema", f)
					}
					if inner, ok := pm["schema"]; ok {
						payload, pp = inner, pp+"/schema"
					}
				}
			}
			msg.payload, msg.pointer = payload, pp
		}
		out = append(out, msg)
		return msg
	}
	comps, _ := root["components"].(map[string]any)
	msgs, _ := comps["messages"].(map[string]any)
	for _, name := range sortedKeys(msgs) {
		add(name, "", "/components/messages/"+escapeToken(name), msgs[name])
	}
	channels, _ := root["channels"].(map[string]any)
	for _, ch := range sortedKeys(channels) {
		chNode, chPtr := derefLocal(root, channels[ch], "/channels/"+escapeToken(ch))
		cm, _ := chNode.(map[string]any)
		inner, _ := cm["messages"].(map[string]any)
		for _, name := range sortedKeys(inner) {
			add(name, ch, chPtr+"/messages/"+escapeToken(name), inner[name])
		}
		for _, opName := range []string{"publish", "subscribe"} {
			op, _ := cm[opName].(map[string]any)
			m, ok := op["message"]
			if !ok {
				continue
			}
			base := chPtr + "/" + opName + "/message"
			opID, _ := op["operationId"].(string)
			mm, _ := m.(map[string]any)
			if alts, ok := mm["oneOf"].([]any); ok {
				for i, alt := range alts {
					if msg := add("", ch, fmt.Sprintf("%s/oneOf/%d", base, i), alt); msg != nil {
						msg.operation = opID
					}
				}
				continue
			}
			if msg := add("", ch, base, m); msg != nil {
				msg.operation = opID
			}
		}
	}
	for _, m := range out {
		if m.name == "" {
			m.name = m.channel
		}
		// A message found in components and referenced from a channel
		// keeps its component name but learns its channel.
		if m.channel == "" {
			for _, ch := range sortedKeys(channels) {
				if channelCarries(root, channels[ch], m.pointer) {
					m.channel = ch
					break
				}
			}
		}
	}
	// AsyncAPI 3 operations name a channel: its messages answer to the
	// operation's name too.
	ops, _ := root["operations"].(map[string]any)
	for _, opName := range sortedKeys(ops) {
		op, _ := ops[opName].(map[string]any)
		ch, _ := op["channel"].(map[string]any)
		ref, _ := ch["$ref"].(string)
		chName, ok := strings.CutPrefix(ref, "#/channels/")
		if !ok {
			continue
		}
		chName = strings.ReplaceAll(strings.ReplaceAll(chName, "~1", "/"), "~0", "~")
		for _, m := range out {
			if m.channel == chName && m.operation == "" {
				m.operation = opName
			}
		}
	}
	return out, nil
}

func channelCarries(root map[string]any, ch any, payloadPtr string) bool {
	cm, _ := ch.(map[string]any)
	inner, _ := cm["messages"].(map[string]any)
	for _, m := range inner {
		if mm, ok := m.(map[string]any); ok {
			if ref, _ := mm["$ref"].(string); ref != "" && strings.HasPrefix(payloadPtr, strings.TrimPrefix(ref, "#")+"/") {
				return true
			}
		}
	}
	return false
}

func jsonSchemaFormat(f string) bool {
	f = strings.ToLower(f)
	return strings.Contains(f, "schema+json") || strings.Contains(f, "schema+yaml") || strings.HasPrefix(f, "application/vnd.aai.asyncapi")
}

// derefLocal follows $refs inside the same document (a few hops) and
// returns the node and its JSON pointer.
func derefLocal(root map[string]any, node any, ptr string) (any, string) {
	for range 16 {
		m, ok := node.(map[string]any)
		if !ok {
			return node, ptr
		}
		ref, ok := m["$ref"].(string)
		if !ok || !strings.HasPrefix(ref, "#") {
			return node, ptr
		}
		target, ok := jsonobj.Pointer(root, ref[1:])
		if !ok {
			return nil, ptr
		}
		node, ptr = target, ref[1:]
	}
	return nil, ptr
}

func escapeToken(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// bundleScheme names the files of one bundle to the schema compiler; a
// reference outside it is refused.
const bundleScheme = "pacto-payload"

func fileURL(file string) string { return bundleScheme + ":///" + file }

// bundleLoader loads the bundle's own JSON and YAML files for $refs
// between them, nothing else.
type bundleLoader struct{ fsys fs.FS }

func (l bundleLoader) Load(u string) (any, error) {
	name, ok := strings.CutPrefix(u, bundleScheme+":///")
	if !ok {
		return nil, fmt.Errorf("the reference %s points outside the bundle; only files inside the bundle are followed", u)
	}
	name, err := url.PathUnescape(name)
	if err != nil {
		return nil, err
	}
	return readDoc(l.fsys, name)
}

// compile compiles the schema at loc in doc (a resource at url), once per
// key; it returns an error only when ctx ends first (nothing is kept
// then).
func (c *Contract) compile(ctx context.Context, key string, fsys fs.FS, resURL string, doc any, loc string) (*compiled, error) {
	c.mu.Lock()
	cs, ok := c.compiled[key]
	c.mu.Unlock()
	if ok {
		return cs, nil
	}
	cs = &compiled{tree: doc, marks: hasMarks(doc, 0), fsys: fsys, resURL: resURL, loc: loc}
	inst, err := cs.newInstance(ctx)
	switch {
	case err != nil && ctx.Err() != nil:
		return nil, ctx.Err()
	case err != nil:
		cs.err = err
	default:
		cs.idle = inst
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if prev, ok := c.compiled[key]; ok { // another check compiled it meanwhile
		return prev, nil
	}
	c.compiled[key] = cs
	return cs, nil
}

// acquire returns a compiled copy for one check: the idle one, or a new
// one compiled within ctx.
func (cs *compiled) acquire(ctx context.Context) (*instance, error) {
	cs.mu.Lock()
	inst := cs.idle
	cs.idle = nil
	cs.mu.Unlock()
	if inst != nil {
		return inst, nil
	}
	return cs.newInstance(ctx)
}

// release gives a copy back after its check.
func (cs *compiled) release(inst *instance) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.idle == nil {
		cs.idle = inst
	}
}

// newInstance compiles a copy of the schema with a guard of its own: the
// compilation takes a step per schema object (so ctx stops it), and the
// compiled nodes take one per evaluation.
func (cs *compiled) newInstance(ctx context.Context) (*instance, error) {
	g := &guard{}
	var sch *jsonschema.Schema
	var cerr error
	err := g.check(ctx, func() {
		defer func() {
			if p := recover(); p != nil {
				if _, ok := p.(stop); ok {
					panic(p)
				}
				cerr = fmt.Errorf("the schema compiler failed: %v", p)
			}
		}()
		comp := jsonschema.NewCompiler()
		comp.UseLoader(bundleLoader{fsys: cs.fsys})
		comp.RegisterVocabulary(g.vocabulary())
		comp.AssertVocabs()
		if err := comp.AddResource(cs.resURL, cs.tree); err != nil {
			cerr = err
			return
		}
		sch, cerr = comp.Compile(cs.loc)
	})
	switch {
	case err != nil:
		return nil, err
	case cerr != nil:
		return nil, cerr
	}
	g.wire(sch, bundleScheme+":")
	return &instance{schema: sch, g: g}, nil
}

// hasMarks reports whether a schema document sets deprecated or writeOnly
// anywhere (bounded depth; deeper counts as marked).
func hasMarks(node any, depth int) bool {
	if depth > 256 {
		return true
	}
	switch n := node.(type) {
	case map[string]any:
		if n["deprecated"] == true || n["writeOnly"] == true {
			return true
		}
		for _, v := range n {
			if hasMarks(v, depth+1) {
				return true
			}
		}
	case []any:
		for _, v := range n {
			if hasMarks(v, depth+1) {
				return true
			}
		}
	}
	return false
}
