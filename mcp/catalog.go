package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/pflag"

	"github.com/kubepact/kubepact/bundle/oci"
	"github.com/kubepact/kubepact/internal/catalog"
)

// FamilyCatalog is Pacto's catalog mode: the resources pacto://catalog and
// pacto://catalog/closure and the tool pacto_catalog_revision, over the
// roots given and their dependency closure, kept live.
const FamilyCatalog Family = "catalog"

// The catalog's resources, by URI and by the name an allow-list keys on.
const (
	CatalogURI         = "pacto://catalog"
	CatalogClosureURI  = "pacto://catalog/closure"
	catalogName        = "pacto_catalog"
	catalogClosureName = "pacto_catalog_closure"
)

// Catalog defaults.
const (
	// DefaultCatalogRefresh is how often the roots are resolved again.
	DefaultCatalogRefresh = time.Minute
	// catalogLoadTimeout bounds one whole resolution, the first included
	// (each registry operation has the registry client's, shorter, one).
	catalogLoadTimeout = 2 * time.Minute
	// maxCatalogCandidates bounds the near misses a lookup names.
	maxCatalogCandidates = 5
)

// digestPattern is the content digest a lookup accepts, as the registry
// reference grammar has it.
const digestPattern = `^(sha256:[a-f0-9]{64}|sha512:[a-f0-9]{128})$`

// CatalogOptions is the catalog option group. Roots turn the family on;
// nothing is discovered that is not named.
type CatalogOptions struct {
	// Roots are local bundle directories or oci:// references (--root,
	// repeatable), resolved with their whole dependency closure.
	Roots []string
	// Refresh is how often the roots are resolved again, so a moved tag
	// is noticed (default 1m).
	Refresh time.Duration
	// Bounds cap the catalog (zero fields: Pacto's defaults).
	Bounds catalog.Bounds
	// Live, when set, is the catalog served; Roots, Refresh and Bounds are
	// then not used (a caller that keeps it live itself, or a test).
	Live *catalog.Live
}

// BindFlags binds the catalog flags.
func (o *CatalogOptions) BindFlags(fs *pflag.FlagSet) {
	fs.StringArrayVar(&o.Roots, "root", o.Roots, "catalog root: a local bundle directory or an oci:// reference, resolved with its dependency closure (repeatable; serves pacto://catalog, pacto://catalog/closure and pacto_catalog_revision)")
	fs.DurationVar(&o.Refresh, "catalog-refresh", o.Refresh, "how often the catalog roots are resolved again, so a moved tag is noticed (default 1m)")
	fs.IntVar(&o.Bounds.MaxDepth, "catalog-max-depth", o.Bounds.MaxDepth, "dependency hops followed from a root (default 10, at most 25)")
	fs.IntVar(&o.Bounds.MaxRevisions, "catalog-max-revisions", o.Bounds.MaxRevisions, "revisions a catalog may hold (default 500, at most 5000)")
}

func (o *CatalogOptions) validate(families []Family) error {
	on := false
	for _, f := range families {
		on = on || f == FamilyCatalog
	}
	for i, r := range o.Roots {
		if strings.TrimSpace(r) == "" {
			return &OptionError{Field: fmt.Sprintf("Catalog.Roots[%d]", i), Message: "is empty: a root needs a reference, a local bundle directory or an oci:// reference"}
		}
	}
	switch {
	case on && len(o.Roots) == 0 && o.Live == nil:
		return optionErrorf("Families", ": the catalog family needs %s (local bundle directories or oci:// references); nothing is discovered implicitly", fieldName("Catalog.Roots"))
	case o.Refresh < 0:
		return optionErrorf("Catalog.Refresh", "must not be negative")
	}
	return nil
}

// families adds the catalog family when roots are given.
func (o *CatalogOptions) families(fs []Family) []Family {
	for _, f := range fs {
		if f == FamilyCatalog {
			return fs
		}
	}
	if len(o.Roots) > 0 || o.Live != nil {
		return append(fs, FamilyCatalog)
	}
	return fs
}

// catalogState serves the catalog family.
type catalogState struct {
	live *catalog.Live
	// refresh is how often live is resolved again; 0 when the catalog is
	// owned by the caller (Catalog.Live), whose refresh is unknown here.
	refresh time.Duration
	// budget bounds the reads of the two documents, each the whole
	// catalog encoded, like expensive calls.
	budget *budget
}

// ttl is the cache hint of a read that served c: the catalog read now
// is the one served until the next refresh at the latest. A caller-owned
// catalog gets none (0: do not cache), since its refresh is unknown here,
// nor does the RESOLVING placeholder, which is replaced as soon as the
// first resolution ends. It is decided from the catalog the read served,
// never from the one current afterwards: a resolution that ends between
// the two would otherwise let a client cache the placeholder for a whole
// refresh interval.
func (st *catalogState) ttl(c *catalog.Catalog) time.Duration {
	if c.Resolving() {
		return 0
	}
	return st.refresh
}

// catalogFamily is Pacto's catalog mode, kept live.
var catalogFamily = &family{
	name:    FamilyCatalog,
	summary: "catalog — the resources pacto://catalog (what the catalog is: catalogId, completeness, bounds, limitations, every requested root) and pacto://catalog/closure (revisions, edges, unresolved dependencies, conflicts, cycles) over the roots the server was given and their dependency closure, and pacto_catalog_revision to look one revision up by its full identity (name, domain, scheme, digest). Read-only; the roots are resolved again periodically, so a moved tag shows as a new catalogId. completeness partial means what is missing is unknown, not absent; until the first resolution ends it is partial with a RESOLVING limitation",
	build: func(ctx context.Context, env *familyEnv) (*familyParts, error) {
		st, err := newCatalogState(ctx, env)
		if err != nil {
			return nil, err
		}
		st.budget = env.budget
		t, err := st.revisionTool()
		if err != nil {
			return nil, err
		}
		return &familyParts{tools: []*tool{t}, register: st.register}, nil
	},
}

// newCatalogState serves the catalog before resolving it: the RESOLVING
// placeholder answers until the first resolution, which runs in the
// background with the refreshes after it, for the server's life (until
// Server.Close). So no registry, however slow, holds up the server's
// start or a client's initialize. Registry roots use the server's one
// registry client.
func newCatalogState(_ context.Context, env *familyEnv) (*catalogState, error) {
	o := &env.opts.Catalog
	if o.Live != nil {
		return &catalogState{live: o.Live}, nil
	}
	client := env.opts.Registry
	if client == nil {
		c, err := oci.NewClient(nil)
		if err != nil {
			return nil, err
		}
		client = c
	}
	live, err := catalog.NewResolvingLive(&catalog.Options{Roots: o.Roots, Client: client, Bounds: o.Bounds})
	if err != nil {
		var oe *catalog.OptionError
		if errors.As(err, &oe) {
			return nil, &OptionError{Field: "Catalog." + oe.Field, Message: oe.Message}
		}
		return nil, err
	}
	log := env.log
	refresh := o.Refresh
	if refresh == 0 {
		refresh = DefaultCatalogRefresh
	}
	env.background(func(ctx context.Context) {
		first := true
		live.Run(ctx, refresh, catalogLoadTimeout, func(c *catalog.Catalog) {
			msg := "Catalog changed"
			if first {
				msg, first = "Catalog resolved", false
			}
			logCatalog(log, msg, c)
		})
	})
	return &catalogState{live: live, refresh: refresh}, nil
}

func logCatalog(log logr.Logger, msg string, c *catalog.Catalog) {
	m := c.Meta()
	codes := make([]string, 0, len(m.Limitations))
	for _, l := range m.Limitations {
		codes = append(codes, l.Code)
	}
	log.Info(msg, "catalogId", m.CatalogID, "roots", len(m.RequestedRoots), "revisions", len(c.Closure().Revisions), "completeness", m.Completeness, "limitations", codes)
}

// register publishes the two resources once the SDK server exists.
func (st *catalogState) register(srv *sdk.Server) {
	read := func(doc func(*catalog.Catalog) any) sdk.ResourceHandler {
		return func(_ context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			return st.serve(req.Params.URI, doc)
		}
	}
	srv.AddResource(&sdk.Resource{URI: CatalogURI, Name: catalogName, Title: "Contract catalog", MIMEType: "application/json",
		Description: "What this catalog is (pacto.dev/catalog/v1): meta {catalogId, generatedAt, completeness, bounds, requestedRoots, limitations} and every requested root, resolved or not and why. Read first."},
		st.budget.read(catalogName, read(func(c *catalog.Catalog) any { return c.Summary() })))
	srv.AddResource(&sdk.Resource{URI: CatalogClosureURI, Name: catalogClosureName, Title: "Contract catalog closure", MIMEType: "application/json",
		Description: "What is in the catalog: every deduplicated revision (identity, rank, paths), resolved edges, unresolved dependencies, conflicts and cycles, under the same meta."},
		st.budget.read(catalogClosureName, read(func(c *catalog.Catalog) any { return c.Closure() })))
}

// serve reads the catalog current at this moment, once, and answers with
// it whole, under the cache hint of that catalog (see ttl).
func (st *catalogState) serve(uri string, doc func(*catalog.Catalog) any) (*sdk.ReadResourceResult, error) {
	c := st.live.Current()
	raw, err := json.Marshal(doc(c))
	if err != nil {
		return nil, err
	}
	res := &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: uri, MIMEType: "application/json", Text: string(raw)}}}
	res.TTLMs = int(st.ttl(c).Milliseconds())
	return res, nil
}

// catalogRevisionArgs are pacto_catalog_revision's arguments: a revision's
// full identity, named as Pacto names them.
type catalogRevisionArgs struct {
	Name   string `json:"name" jsonschema:"service.name of the revision"`
	Domain string `json:"domain,omitempty" jsonschema:"service.domain; omit for a local revision"`
	Scheme string `json:"scheme" jsonschema:"content.scheme"`
	Digest string `json:"digest" jsonschema:"content.digest"`
}

// CatalogRevisionResult is pacto_catalog_revision's answer. Requested
// echoes the identity as parsed, so a caller can check it asked what it
// meant before it trusts a miss.
type CatalogRevisionResult struct {
	Found        bool                 `json:"found"`
	Completeness string               `json:"completeness"`
	CatalogID    string               `json:"catalogId"`
	Requested    catalog.RevisionID   `json:"requested"`
	Revision     *catalog.Revision    `json:"revision,omitempty"`
	Candidates   []catalog.RevisionID `json:"candidates,omitempty"`
}

// revisionTool builds pacto_catalog_revision.
func (st *catalogState) revisionTool() (*tool, error) {
	in := itemSchema[catalogRevisionArgs](map[string][]any{"scheme": {catalog.SchemeOCI, catalog.SchemeLocal}})
	in.Properties["name"].MinLength = new(1)
	in.Properties["digest"].Pattern = digestPattern
	t, err := newTool(toolSpec{
		name: "pacto_catalog_revision", title: "Look up a catalog revision", hints: hints{readOnly: true, idempotent: true},
		description: "One revision of the catalog by its full identity (copy service and content from pacto://catalog/closure). A miss is found:false; with completeness partial it means unknown, not absent.",
		input:       in,
	}, func(_ context.Context, a catalogRevisionArgs) (*CatalogRevisionResult, string, error) {
		if a.Scheme == catalog.SchemeLocal && a.Domain != "" {
			return nil, "", &ToolError{Code: CodeInvalidArgument, Field: "domain",
				Message: fmt.Sprintf("a local revision has no domain; got %q: omit domain with scheme local, or use scheme oci", a.Domain)}
		}
		c := st.live.Current()
		id := catalog.RevisionID{Service: catalog.ServiceID{Domain: a.Domain, Name: a.Name}, Content: catalog.ContentID{Scheme: a.Scheme, Digest: a.Digest}}
		m := c.Meta()
		res := &CatalogRevisionResult{Completeness: m.Completeness, CatalogID: m.CatalogID, Requested: id}
		if r, ok := c.Revision(id); ok {
			res.Found, res.Revision = true, r
			return res, fmt.Sprintf("Found %s %s (%s) in catalog %s (%s).", id, r.Version, r.Rank, m.CatalogID, m.Completeness), nil
		}
		res.Candidates = c.Candidates(id, maxCatalogCandidates)
		msg := fmt.Sprintf("Not found: no revision %s in catalog %s", id, m.CatalogID)
		if c.Resolving() {
			msg += " — the catalog is still being resolved for the first time, so nothing is known yet; ask again shortly"
		} else if m.Completeness != catalog.CompletenessComplete {
			msg += " — the catalog is " + m.Completeness + ", so it is unknown, not proven absent"
		}
		if len(res.Candidates) > 0 {
			names := make([]string, len(res.Candidates))
			for i, x := range res.Candidates {
				names[i] = x.String()
			}
			msg += "; did you mean " + strings.Join(names, ", ") + "?"
		}
		return res, msg + " (found:false).", nil
	})
	if err != nil {
		return nil, err
	}
	obj := func() *jsonschema.Schema { return &jsonschema.Schema{Type: "object"} }
	t.output = &jsonschema.Schema{Type: "object", Required: []string{"found", "completeness", "catalogId", "requested"}, Properties: map[string]*jsonschema.Schema{
		"found": {Type: "boolean"}, "completeness": {Type: "string"}, "catalogId": {Type: "string"},
		"requested": obj(), "revision": obj(), "candidates": {Type: "array", Items: obj()},
	}}
	return t, nil
}
