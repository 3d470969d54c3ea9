package validate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"github.com/kubepact/kubepact/bundle/contract"
	"github.com/kubepact/kubepact/internal/schemamsg"
)

// Finding is one problem found in a bundle. Path points into pacto.yaml in
// the form interfaces[0].ref; it is empty when the problem is the whole
// document.
type Finding struct {
	Path    string `json:"path"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Result holds the findings of one validation. Errors make a bundle
// invalid; warnings do not. Both slices are non-nil, so they encode as [].
type Result struct {
	Errors   []Finding `json:"errors"`
	Warnings []Finding `json:"warnings"`
}

// Valid reports whether the bundle has no errors.
func (r Result) Valid() bool { return len(r.Errors) == 0 }

// CouldNotCheck reports whether the bundle is not valid only because a
// ref could not be fetched (every error is REF_UNREACHABLE), or because
// validation was stopped before it finished (VALIDATION_STOPPED, with
// whatever it had found): it is not known to be invalid, and checking
// again may pass. A caller reports it as "could not check", not
// "invalid".
func (r Result) CouldNotCheck() bool {
	if slices.ContainsFunc(r.Errors, func(f Finding) bool { return f.Code == CodeValidationStopped }) {
		return true
	}
	return len(r.Errors) > 0 && !slices.ContainsFunc(r.Errors, func(f Finding) bool { return f.Code != CodeRefUnreachable })
}

// MarshalJSON keeps errors and warnings as [] even on a zero Result.
func (r Result) MarshalJSON() ([]byte, error) {
	type plain Result
	p := plain(r)
	if p.Errors == nil {
		p.Errors = []Finding{}
	}
	if p.Warnings == nil {
		p.Warnings = []Finding{}
	}
	return json.Marshal(p)
}

// Resolver fetches another bundle named by a ref exactly as written in
// pacto.yaml (oci://…, file://… or a bare path). The returned FS holds the
// bundle's files with pacto.yaml at its root.
type Resolver interface {
	Resolve(ctx context.Context, ref string) (fs.FS, error)
}

// Options tunes validation. A nil *Options is the same as the zero value.
type Options struct {
	// Resolver fetches bundles named by configuration and policy refs.
	// When nil, refs cannot be resolved: see the package documentation.
	Resolver Resolver
	// MaxSpecBytes is the largest interface spec read, in bytes; zero or
	// less means 10 MiB, the archive's default per-file limit. A command
	// that raises a bundle's per-file limit raises this with it.
	MaxSpecBytes int64
	// Document, when it is the decode of the pacto.yaml validated
	// (contract.ParseDocument of the same bytes, as a loaded bundle
	// carries it), is read instead of decoding the YAML again; a Document
	// of other bytes is ignored.
	Document *contract.Document
}

// MaxRefDepth bounds how many bundle references deep a configuration or
// policy ref chain is followed.
const MaxRefDepth = 8

// Size limits for files read out of a bundle. Interface specs may be large
// (the archive limit per file is 10 MiB); schemas are small.
const (
	maxSpecBytes   = 10 << 20
	maxSchemaBytes = 4 << 20
)

// Validate reads pacto.yaml at the root of fsys and validates it against the
// files of fsys.
func Validate(ctx context.Context, fsys fs.FS, opts *Options) Result {
	raw, err := readFile(fsys, contract.FileName, contract.MaxBytes)
	if err != nil {
		r := newResult()
		if isNotFound(err) {
			r.addError("", CodeFileNotFound, fmt.Sprintf("%s is missing at the bundle root; every bundle needs one", contract.FileName))
		} else {
			r.addError("", CodeYAMLParseError, fmt.Sprintf("cannot read %s: %v", contract.FileName, err))
		}
		return r.Result
	}
	return ValidateBytes(ctx, raw, fsys, opts)
}

// ValidateBytes validates raw as the bundle's pacto.yaml, checking the files
// it references in fsys. fsys may be nil when there are no files; every
// referenced file is then FILE_NOT_FOUND.
func ValidateBytes(ctx context.Context, raw []byte, fsys fs.FS, opts *Options) Result {
	v := &validator{ctx: ctx, fsys: fsys, res: newResult()}
	v.maxSpecBytes = maxSpecBytes
	if opts != nil {
		v.resolver = opts.Resolver
		if opts.MaxSpecBytes > 0 {
			v.maxSpecBytes = opts.MaxSpecBytes
		}
		if opts.Document.Of(raw) {
			v.parsed = opts.Document
		}
	}
	v.run(raw)
	v.res.sort()
	return v.res.Result
}

type validator struct {
	ctx      context.Context
	fsys     fs.FS
	resolver Resolver
	res      result

	maxSpecBytes int64

	parsed   *contract.Document // raw decoded already; nil: decode it
	doc      map[string]any     // generic tree of pacto.yaml
	c        *contract.Contract // typed contract
	policies []policySchema     // local policies compiled in the cross-field layer
}

func (v *validator) run(raw []byte) {
	if !v.structural(raw) || v.stopped() {
		return
	}
	v.crossField()
	if v.stopped() {
		return
	}
	// An unreachable ref does not stop the policy layer: its findings
	// tell a contract that is invalid anyway from one merely unchecked.
	if !v.res.Valid() && !v.res.CouldNotCheck() {
		return
	}
	v.policy()
	v.stopped()
}

// stopped reports whether the validation's ctx has ended, and then says
// so in the result (once): the layers still to run are not run, and the
// result is "could not check".
func (v *validator) stopped() bool {
	if v.ctx.Err() == nil {
		return false
	}
	v.res.addError("", CodeValidationStopped, "validation stopped before it finished (the call was cancelled or ran out of time); the findings are incomplete: check again")
	return true
}

type result struct {
	Result
	seen map[Finding]bool
}

func newResult() result {
	return result{Result: Result{Errors: []Finding{}, Warnings: []Finding{}}, seen: map[Finding]bool{}}
}

// maxFindings bounds the size of a result: a hostile document cannot make
// the report itself huge.
const maxFindings = 200

func (r *result) add(list *[]Finding, f Finding) {
	if r.seen[f] {
		return
	}
	r.seen[f] = true
	switch {
	case len(*list) < maxFindings:
		*list = append(*list, f)
	case len(*list) == maxFindings:
		*list = append(*list, Finding{Code: f.Code, Message: "further findings omitted"})
	}
}

func (r *result) addError(path, code, msg string) {
	r.add(&r.Errors, Finding{Path: path, Code: code, Message: msg})
}

func (r *result) addWarning(path, code, msg string) {
	r.add(&r.Warnings, Finding{Path: path, Code: code, Message: msg})
}

// sort orders findings by path then code so results are deterministic.
func (r *result) sort() {
	cmp := func(a, b Finding) int {
		if c := strings.Compare(a.Path, b.Path); c != 0 {
			return c
		}
		if c := strings.Compare(a.Code, b.Code); c != 0 {
			return c
		}
		return strings.Compare(a.Message, b.Message)
	}
	slices.SortStableFunc(r.Errors, cmp)
	slices.SortStableFunc(r.Warnings, cmp)
}

// structural runs layer 1 and reports whether it passed.
func (v *validator) structural(raw []byte) bool {
	d := v.parsed
	if d == nil {
		d = contract.ParseDocument(raw)
	}
	tree, err := d.Tree, d.TreeErr
	if err != nil {
		v.res.addError("", CodeYAMLParseError, parseMessage(err))
		return false
	}
	doc, _ := tree.(map[string]any)
	v.doc = doc
	if pv, ok := doc["pactoVersion"]; ok && pv != contract.Version {
		msg := fmt.Sprintf("pactoVersion %s is not supported; the only supported version is \"2.0\" (write it quoted)", display(pv))
		switch pv.(type) {
		case float64, int64:
			// YAML reads an unquoted 2.0 as the number 2; say so rather
			// than echo a "2" the author never wrote.
			msg = fmt.Sprintf("pactoVersion is the number %s, not a string (YAML reads an unquoted 2.0 as a number); write it quoted: pactoVersion: \"2.0\"", display(pv))
		}
		if s, ok := pv.(string); ok && (s == "1.0" || strings.HasPrefix(s, "1.")) {
			msg += "; version 1 contracts (runtime, scaling, service.image) must be migrated to 2.0"
		}
		v.res.addError("pactoVersion", CodeUnsupportedPactoVersion, msg)
		return false
	}
	sch, err := contractSchema()
	if err != nil {
		v.res.addError("", CodeSchemaError, "the embedded contract schema does not compile: "+err.Error())
		return false
	}
	for _, f := range schemaFindings(sch, doc, contractSchemaDoc) {
		v.res.addError(f.Path, CodeSchemaViolation, f.Message)
	}
	if !v.res.Valid() {
		return false
	}
	c, err := d.Contract, d.Err
	if err != nil {
		// The schema accepted the tree but the typed model did not (e.g. a
		// weight of 30.0). Report it as the schema violation it is.
		v.res.addError("", CodeSchemaViolation, parseMessage(err))
		return false
	}
	v.c = c
	return true
}

func parseMessage(err error) string {
	var pe *contract.ParseError
	if errors.As(err, &pe) {
		return pe.Error()
	}
	return err.Error()
}

func display(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return schemamsg.Cut(string(b), 60)
}
