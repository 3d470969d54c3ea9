package openapitools

// IndexEntry is one operation of a projection, exposed or withheld: what a
// server that does not list every tool (a discovery mode) searches, ranks
// and shows, read from fields projection already holds — nothing is
// encoded or compiled for it. The entry of an exposed operation names the
// Tool that Capability.Tool returns; names are stable whatever the policy.
type IndexEntry struct {
	Name        string
	Interface   string
	Method      string // upper case
	Path        string // as written in the spec
	OperationID string
	// Title is the operation's summary (cut to 120 bytes); Description is
	// the tool's description (summary, description, method and path; or the
	// DescriptionsFile override).
	Title, Description string
	// Tags are the operation's OpenAPI tags, as the spec writes them.
	Tags []string
	// Args are the tool's argument names: parameters by argument name, and
	// "body" for a request body.
	Args []string
	// Hints are the annotations the tool has (or would have if exposed).
	Hints Hints
	// Withheld says why the operation is not exposed; nil when it is.
	Withheld *Withheld
}

// Index lists every operation of the projection in document order
// (interfaces in contract order), exposed or withheld. It is for a caller
// that searches operations without listing them all as tools: it costs one
// small value per operation and builds no tool definition. The slices of
// an entry are shared with the projection: read them, never change them.
func (c *Capability) Index() []IndexEntry {
	withheld := make(map[string]*Withheld, len(c.Withheld))
	for i := range c.Withheld {
		withheld[c.Withheld[i].Name] = &c.Withheld[i]
	}
	out := make([]IndexEntry, 0, len(c.ops))
	for _, op := range c.ops {
		e := IndexEntry{Name: op.name, Interface: op.iface.name, Method: op.method, Path: op.path, OperationID: op.operationID,
			Title: op.title, Description: op.description, Tags: op.tags, Hints: hintsFor(op.method, op.iface.loopback), Withheld: withheld[op.name]}
		for _, pr := range op.params {
			e.Args = append(e.Args, pr.arg)
		}
		if op.body != nil {
			e.Args = append(e.Args, "body")
		}
		out = append(out, e)
	}
	return out
}
