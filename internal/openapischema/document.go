package openapischema

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi2"
	"github.com/getkin/kin-openapi/openapi2conv"
	"go.yaml.in/yaml/v3"

	"github.com/kubepact/kubepact/bundle/contract"
	"github.com/kubepact/kubepact/internal/jsonobj"
)

// Bounds on what one document may make a reader follow.
const (
	maxSpecFiles = 64 // files reached through $ref
	// MaxRefHops bounds a chain of $ref to $ref to … that Deref follows.
	MaxRefHops = 64
)

// methods are the HTTP methods an OpenAPI path item can hold, in the order
// used when a document's own order is unknown.
var methods = []string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}

// Document is one interface's spec as a JSON-compatible tree: the source
// of names, schemas and serialization rules. Requests are validated against
// per-operation routes package openapitools builds, never against a
// kin-openapi model of the whole document (see its route.go).
type Document struct {
	fsys     fs.FS
	file     string         // bundle path of the spec
	maxBytes int            // the largest spec file read
	trees    map[string]any // bundle path → decoded tree, for $refs into other files
	root     map[string]any
	version  string // as declared: 2.0, 3.0.3, 3.1.0…
	v30      bool   // OpenAPI 3.0 schema dialect (also converted Swagger 2.0)
	order    []pathOrder
	// anchors maps file → $anchor name → JSON pointer, built on first use.
	anchors map[string]map[string]string
	// decoded holds the hashes of the schemas checkSchemas has decoded.
	decoded map[[sha256.Size]byte]bool
}

// Release drops what only projection reads: the decoded trees of a large
// API are most of the memory a server would otherwise keep for its
// lifetime. Calls read their operation's own fields.
func (d *Document) Release() {
	d.trees, d.root, d.order, d.decoded, d.anchors = nil, nil, nil, nil, nil
}

// File is the bundle path of the document's root file.
func (d *Document) File() string { return d.file }

// Root is the decoded tree of the root file, nil after Release.
func (d *Document) Root() map[string]any { return d.root }

// Version is the OpenAPI (or Swagger) version the document declares.
func (d *Document) Version() string { return d.version }

// anchor returns the pointer of the schema in file whose $anchor is name.
// An anchor declared twice in a file resolves to neither.
func (d *Document) anchor(file string, tree any, name string) (string, bool) {
	if d.anchors == nil {
		d.anchors = map[string]map[string]string{}
	}
	idx, ok := d.anchors[file]
	if !ok {
		idx = map[string]string{}
		dup := map[string]bool{}
		var walk func(n any, p string, depth int)
		walk = func(n any, p string, depth int) {
			if depth > contract.MaxDepth {
				return
			}
			switch x := n.(type) {
			case map[string]any:
				if a, ok := x["$anchor"].(string); ok {
					if _, seen := idx[a]; seen {
						dup[a] = true
					}
					idx[a] = p
				}
				for k, v := range x {
					walk(v, p+"/"+escapePointer(k), depth+1)
				}
			case []any:
				for i, v := range x {
					walk(v, p+"/"+strconv.Itoa(i), depth+1)
				}
			}
		}
		walk(tree, "", 0)
		for a := range dup {
			delete(idx, a)
		}
		d.anchors[file] = idx
	}
	p, ok := idx[name]
	return p, ok
}

// pathOrder is one path key and its method keys, in document order.
type pathOrder struct {
	path    string
	methods []string
}

// LoadDocument reads and decodes the spec at file in fsys. Swagger 2.0 is
// converted to OpenAPI 3.0 first.
func LoadDocument(fsys fs.FS, file string, maxBytes int) (*Document, error) {
	if strings.HasSuffix(strings.ToLower(file), ".json") {
		return streamDocument(fsys, file, maxBytes)
	}
	data, err := fs.ReadFile(fsys, file)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", file, err)
	}
	return parseDocument(fsys, file, data, maxBytes)
}

// streamDocument is LoadDocument for a .json file, decoded from the file
// as it is read: a bundle keeps its files in memory, and reading one whole
// first (fs.ReadFile copies it) would hold a second copy of a large API's
// description beside its decoded tree, at projection's peak.
func streamDocument(fsys fs.FS, file string, maxBytes int) (*Document, error) {
	f, err := fsys.Open(file)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", file, err)
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Size() > int64(maxBytes) {
		return nil, fmt.Errorf("%s: %w", file, &contract.ParseError{Message: fmt.Sprintf("document is %d bytes; the limit is %d bytes", st.Size(), maxBytes)})
	}
	t, keys, err := fastJSON(f, maxBytes, 3)
	if err != nil {
		// Declined: decode it again the slow way, which says what is
		// wrong and where.
		if t, keys, err = slowJSON(fsys, file, maxBytes); err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
	}
	return newDocument(fsys, file, t, jsonPathOrder(keys), maxBytes)
}

// slowJSON decodes a .json file with contract.DecodeJSONStream.
func slowJSON(fsys fs.FS, file string, maxBytes int) (any, map[string][]string, error) {
	f, err := fsys.Open(file)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	return contract.DecodeJSONStream(f, maxBytes, 3, func() ([]byte, error) { return fs.ReadFile(fsys, file) })
}

func parseDocument(fsys fs.FS, file string, data []byte, maxBytes int) (*Document, error) {
	var tree any
	var order []pathOrder
	if contract.IsJSON(file, data) {
		t, keys, err := contract.DecodeJSON(data, maxBytes, 3)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		tree, order = t, jsonPathOrder(keys)
	} else {
		t, err := contract.DecodeGenericLimit(data, maxBytes)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		tree, order = t, pathOrderOf(data)
	}
	return newDocument(fsys, file, tree, order, maxBytes)
}

// newDocument makes the Document of a decoded tree.
func newDocument(fsys fs.FS, file string, tree any, order []pathOrder, maxBytes int) (*Document, error) {
	root, _ := tree.(map[string]any)
	if root == nil {
		return nil, fmt.Errorf("%s: the document is not a mapping", file)
	}
	d := &Document{fsys: fsys, file: file, maxBytes: maxBytes, trees: map[string]any{file: root}, root: root, order: order}
	switch sw, oa := ScalarString(root["swagger"]), ScalarString(root["openapi"]); {
	case strings.HasPrefix(sw, "2."):
		d.version, d.v30 = sw, true
		if err := d.convertSwagger(); err != nil {
			return nil, fmt.Errorf("%s: converting Swagger %s: %w", file, sw, err)
		}
	case strings.HasPrefix(oa, "3."):
		d.version = oa
		d.v30 = strings.HasPrefix(oa, "3.0")
	default:
		return nil, fmt.Errorf("%s: neither `openapi: 3.x` nor `swagger: \"2.0\"` is declared", file)
	}
	return d, nil
}

// convertSwagger replaces the tree with its OpenAPI 3.0 conversion.
func (d *Document) convertSwagger() (err error) {
	defer RecoverInto(&err)
	raw, err := json.Marshal(d.root)
	if err != nil {
		return err
	}
	var v2 openapi2.T
	if err := json.Unmarshal(raw, &v2); err != nil {
		return err
	}
	v3, err := openapi2conv.ToV3(&v2)
	if err != nil {
		return err
	}
	raw3, err := json.Marshal(v3)
	if err != nil {
		return err
	}
	var tree map[string]any
	if err := json.Unmarshal(raw3, &tree); err != nil {
		return err
	}
	d.root = tree
	d.trees[d.file] = tree
	return nil
}

// RecoverInto turns a panic in third-party parsing code into an error: no
// document may crash the process.
func RecoverInto(err *error) {
	if p := recover(); p != nil {
		*err = fmt.Errorf("the document could not be processed: %v", p)
	}
}

// pathOrderOf returns the path keys and their method keys in the order the
// document writes them. It returns nil when the document cannot be read as
// YAML nodes; the caller then falls back to sorted order.
func pathOrderOf(data []byte) []pathOrder {
	var n yaml.Node
	if yaml.Unmarshal(data, &n) != nil || n.Kind != yaml.DocumentNode || len(n.Content) == 0 {
		return nil
	}
	paths := mappingValue(n.Content[0], "paths")
	if paths == nil {
		return nil
	}
	var out []pathOrder
	for i := 0; i+1 < len(paths.Content); i += 2 {
		po := pathOrder{path: paths.Content[i].Value}
		item := deAlias(paths.Content[i+1])
		if item != nil && item.Kind == yaml.MappingNode {
			for j := 0; j+1 < len(item.Content); j += 2 {
				if k := item.Content[j].Value; slices.Contains(methods, k) {
					po.methods = append(po.methods, k)
				}
			}
		}
		out = append(out, po)
	}
	return out
}

// jsonPathOrder is pathOrderOf for a JSON document, from the key order
// contract.DecodeJSON recorded.
func jsonPathOrder(keys map[string][]string) []pathOrder {
	var out []pathOrder
	for _, p := range keys["/paths"] {
		po := pathOrder{path: p}
		for _, k := range keys["/paths/"+escapePointer(p)] {
			if slices.Contains(methods, k) {
				po.methods = append(po.methods, k)
			}
		}
		out = append(out, po)
	}
	return out
}

func mappingValue(n *yaml.Node, key string) *yaml.Node {
	n = deAlias(n)
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return deAlias(n.Content[i+1])
		}
	}
	return nil
}

func deAlias(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < 8; i++ {
		n = n.Alias
	}
	return n
}

// OperationsInOrder lists (path, method) pairs in document order: the
// order of the YAML/JSON text, or sorted paths and the fixed method order
// when the text order is unknown (e.g. a converted Swagger document whose
// path item is a $ref).
func (d *Document) OperationsInOrder() [][2]string {
	paths, _ := d.root["paths"].(map[string]any)
	seen := map[string]bool{}
	var out [][2]string
	add := func(p string, ms []string) {
		if seen[p] {
			return
		}
		seen[p] = true
		item, _ := d.Deref(d.file, paths[p])
		im, _ := item.(map[string]any)
		if im == nil {
			return
		}
		listed := map[string]bool{}
		for _, m := range ms {
			if _, ok := im[m].(map[string]any); ok && !listed[m] {
				listed[m] = true
				out = append(out, [2]string{p, m})
			}
		}
		for _, m := range methods {
			if _, ok := im[m].(map[string]any); ok && !listed[m] {
				out = append(out, [2]string{p, m})
			}
		}
	}
	for _, po := range d.order {
		if _, ok := paths[po.path]; ok {
			add(po.path, po.methods)
		}
	}
	rest := make([]string, 0, len(paths))
	for p := range paths {
		if !seen[p] {
			rest = append(rest, p)
		}
	}
	slices.Sort(rest)
	for _, p := range rest {
		add(p, nil)
	}
	return out
}

// errRef is returned for references that cannot be followed.
var errRef = errors.New("unresolvable reference")

// Resolve follows one $ref written in file and returns the node it points
// at and the file that node lives in. Only references inside the bundle
// are followed.
func (d *Document) Resolve(file, ref string) (any, string, error) {
	target, frag, _ := strings.Cut(ref, "#")
	if target != "" {
		if strings.Contains(target, "://") || strings.HasPrefix(target, "/") {
			return nil, "", fmt.Errorf("%w %q: only references inside the bundle are followed", errRef, ref)
		}
		target = path.Join(path.Dir(file), target)
		if !fs.ValidPath(target) {
			return nil, "", fmt.Errorf("%w %q: it leaves the bundle", errRef, ref)
		}
	} else {
		target = file
	}
	tree, err := d.tree(target)
	if err != nil {
		return nil, "", fmt.Errorf("%w %q: %w", errRef, ref, err)
	}
	node, ok := jsonobj.Pointer(tree, frag)
	if !ok {
		return nil, "", fmt.Errorf("%w %q: nothing is there", errRef, ref)
	}
	return node, target, nil
}

func (d *Document) tree(file string) (any, error) {
	if t, ok := d.trees[file]; ok {
		return t, nil
	}
	if len(d.trees) >= maxSpecFiles {
		return nil, fmt.Errorf("more than %d files are referenced", maxSpecFiles)
	}
	data, err := fs.ReadFile(d.fsys, file)
	if err != nil {
		return nil, err
	}
	t, err := contract.DecodeDocument(file, data, d.maxBytes)
	if err != nil {
		return nil, err
	}
	d.trees[file] = t
	return t, nil
}

// Deref follows a chain of $refs (for parameters, request bodies, path
// items, security schemes) and returns the object and its file. A broken
// reference yields nil.
func (d *Document) Deref(file string, node any) (any, string) {
	for range MaxRefHops {
		m, ok := node.(map[string]any)
		if !ok {
			return node, file
		}
		ref, ok := m["$ref"].(string)
		if !ok {
			return node, file
		}
		n, f, err := d.Resolve(file, ref)
		if err != nil {
			return nil, file
		}
		node, file = n, f
	}
	return nil, file
}

// ScalarString renders a scalar (a version may be written as a number).
func ScalarString(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	return ""
}

// StringAt is m[key] when it is a string, else "".
func StringAt(m map[string]any, key string) string {
	s, _ := m[key].(string)
	return s
}
