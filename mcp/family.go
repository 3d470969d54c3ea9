package mcp

import (
	"context"
	"sync"
	"time"

	"github.com/go-logr/logr"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kubepact/kubepact/fleetgraph"
)

// family is one tool family as a value: its name, the sentence the
// instructions describe it with, and how it is built. The server knows no
// family by name; it builds the enabled ones in the order of [families]
// and registers what each returns.
//
// To add a family, write one such value (a build function returning its
// tools and, if it has them, resources, prompts, server options, an
// instructions paragraph and withheld-tool answers in [familyParts]) and
// list it in [families]; nothing on [Server] changes.
//
// Every family today registers its tools, prompts and resources once, so
// list results carry the long [FixedListTTL] hint and the server does not
// announce listChanged. A family whose tool set changes at run time (the
// operator's live fleet, a watched catalog) must bring both: a list TTL
// tied to its refresh interval and the tools capability's ListChanged, so
// that the SDK sends notifications/tools/list_changed to 2025-11-25
// sessions when it adds or removes a tool.
type family struct {
	name Family
	// summary describes the family in one sentence for the instructions.
	summary string
	// build makes the family's parts. ctx bounds its start-up I/O only;
	// work that outlives build is started with env.background.
	build func(ctx context.Context, env *familyEnv) (*familyParts, error)
}

// families are kubepact's own families, in the order the instructions and
// pacto_server_info list them.
var families = []*family{authoringFamily, capabilityFamily, fleetFamily, payloadFamily, catalogFamily}

// allFamilies are kubepact's families followed by the options'
// extensions.
func (o *Options) allFamilies() []*family {
	out := append([]*family{}, families...)
	for _, x := range o.Extensions {
		out = append(out, x.family())
	}
	return out
}

// knownFamilies returns the names of fs (default: kubepact's own), for the
// options check and the --families help.
func knownFamilies(fs ...*family) []Family {
	if fs == nil {
		fs = families
	}
	out := make([]Family, len(fs))
	for i, f := range fs {
		out[i] = f.name
	}
	return out
}

// familyEnv is what a family is built from: the server's options (with
// defaults filled; read only) and what families share with one another.
type familyEnv struct {
	opts *Options
	log  logr.Logger

	// bg is done when the server is closed or NewServer's ctx is; wg
	// counts the goroutines started with background.
	bg context.Context //nolint:containedctx // the server's life, handed to the families' background work
	wg *sync.WaitGroup

	// confirms asks users to confirm generated tools' calls, with the
	// server's confirmation secret (see confirmations).
	confirms *confirmations

	// budget bounds the expensive calls (tools marked expensive are run
	// within it by the server; a family wraps costly resource reads with
	// budget.read).
	budget *budget

	// fleet is the fleet family's builder once that family is built (nil
	// before, or when it is off). Families built earlier read it at call
	// time, never while building.
	fleet *fleetgraph.Builder
}

// background runs fn in a goroutine for the server's life: its ctx is
// done when the server is closed, and [Server.Close] waits for fn to
// return. A family never starts a goroutine any other way.
func (e *familyEnv) background(fn func(ctx context.Context)) {
	e.wg.Go(func() { fn(e.bg) })
}

// enabled reports whether the server serves the family name.
func (e *familyEnv) enabled(name Family) bool {
	for _, f := range e.opts.Families {
		if f == name {
			return true
		}
	}
	return false
}

// familyParts is what a built family contributes. Only tools is required.
type familyParts struct {
	tools []*tool
	// configure adjusts the SDK server options (capabilities, handlers)
	// before the SDK server is made.
	configure func(*sdk.ServerOptions)
	// register adds resources, prompts and middleware once the SDK server
	// exists.
	register func(*sdk.Server)
	// instructions returns a paragraph appended to the server
	// instructions, given the family's tools actually registered (a
	// read-only server leaves some out), sorted by name.
	instructions func(registered []*tool) string
	// readTTL says how long a resources/read of uri may be cached
	// (ttlMs), when uri is one of the family's resources; ok is false
	// for any other uri. Without it the family's reads keep the ttlMs
	// their handler set (zero unless set: not cached); a family whose hint
	// depends on what the read served sets it there instead (the catalog).
	readTTL func(uri string) (ttl time.Duration, ok bool)
	// describesWrites says that the instructions paragraph states what
	// the family's tools write, so the general "Writes:" line defers to
	// it for tools that are not kubepact's own.
	describesWrites bool
	// withheld answers a call to a tool of this family the server does
	// not offer, or returns nil when name is none of its tools.
	withheld func(name string) *ToolError
	// leanList says the server lists its tools without output schemas:
	// the capability family in discovery mode, whose point is a short
	// tools/list (pacto_describe_operations gives the call's output
	// schema; structuredContent is the same either way).
	leanList bool
	// extension says the family is an [Extension]: its tools are neither
	// kubepact's own (pacto_*) nor generated from a bundle.
	extension bool
}
