package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"runtime/debug"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/pflag"

	"github.com/kubepact/kubepact/bundle"
	"github.com/kubepact/kubepact/bundle/archive"
	"github.com/kubepact/kubepact/fleetgraph/source"
)

// Budget defaults. The memory defaults are derived when their fields are
// zero: see [BudgetOptions].
const (
	DefaultMaxExpensiveCalls          = 8
	DefaultMaxExpensiveCallsPerCaller = 2
	DefaultExpensiveCallTimeout       = time.Minute
	// DefaultBundleMemory is BudgetOptions.BundleMemory's default when
	// the process has no memory limit (GOMEMLIMIT).
	DefaultBundleMemory = 1 << 30
)

// busyRetryAfter is the retry hint of a BUSY answer: expensive calls take
// from milliseconds to seconds, so a second is a fair first wait.
const busyRetryAfter = time.Second

// Memory per bundle byte, as a call holds it: the estimate a bundle is
// charged against the budget with. Measured on test/bigspec's large API
// (7.8 MB of OpenAPI JSON) with the heap's live bytes: reading a bundle
// (pulled or a directory, extracted, its contract parsed) holds 1.2 times
// its bytes; projecting its OpenAPI operations for payload checks, with
// every schema decoded, peaks at 80 times (628 MiB).
const (
	readFactor    = 2
	projectFactor = 80
)

// BudgetOptions bound the work of expensive calls: the tools that read
// bundles, project or diff them, or validate values against their
// schemas (pacto_impact, pacto_validate_payload, pacto_explain_field,
// pacto_check, pacto_create, pacto_edit) and the catalog's resource
// reads. The generated tools are not among them: a call to the service
// is bounded by its own timeout and response cap, and the HTTP
// transport's connection limit bounds how many run. Zero fields take the
// defaults.
type BudgetOptions struct {
	// MaxCalls bounds the expensive calls in progress at once, whoever
	// makes them (default 8).
	MaxCalls int
	// MaxCallsPerCaller bounds those of one caller (one authenticated
	// identity; every unauthenticated caller counts as one), default 2:
	// it takes four identities to fill the server. Past either bound a
	// call is answered BUSY at once, never queued.
	MaxCallsPerCaller int
	// CallTimeout bounds one expensive call (default 1m): past it the
	// call's work is stopped and it answers CANCELLED.
	CallTimeout time.Duration
	// BundleMemory bounds the memory the expensive calls in progress may
	// hold for the bundles they read, together: each bundle is charged
	// its bytes times what reading (×2) or projecting its interfaces
	// (×80) makes of them. Default: 3/8 of the process's memory limit
	// (GOMEMLIMIT) when it has one, else 1 GiB. One caller may hold at
	// most half of it, so no caller can take it all.
	BundleMemory int64
	// CallBundleMemory bounds what one call may hold (default: what one
	// caller may, half of BundleMemory). A call needing more is refused
	// INVALID_ARGUMENT, naming the flag; one that would pass the shared
	// bound is answered BUSY.
	//
	// What is kept between calls is bounded by BundleMemory too: the
	// bundles pacto_impact and the payload tools keep read, a quarter of
	// it each, and the payload tools' projected contracts, all of it.
	CallBundleMemory int64
}

// BindFlags binds the budget flags, with the current field values as
// defaults (zero memory fields mean derived, and say so).
func (o *BudgetOptions) BindFlags(fs *pflag.FlagSet) {
	fs.IntVar(&o.MaxCalls, "max-expensive-calls", o.MaxCalls, "most expensive calls (pacto_impact, payload checks, pacto_check/create/edit, catalog reads) in progress at once; past it a call is answered BUSY")
	fs.IntVar(&o.MaxCallsPerCaller, "max-expensive-calls-per-caller", o.MaxCallsPerCaller, "most expensive calls one caller (identity) may have in progress; past it its call is answered BUSY")
	fs.DurationVar(&o.CallTimeout, "expensive-call-timeout", o.CallTimeout, "longest an expensive call may take; past it its work is stopped and it answers CANCELLED")
	fs.Int64Var(&o.BundleMemory, "max-bundle-memory", o.BundleMemory, "bytes of memory the expensive calls in progress may hold for the bundles they read, together (bundle bytes ×2 read, ×80 projected); 0: 3/8 of GOMEMLIMIT, else 1GiB")
	fs.Int64Var(&o.CallBundleMemory, "max-call-bundle-memory", o.CallBundleMemory, "bytes of bundle memory one call may hold; 0: half of --max-bundle-memory, as much as one caller may hold")
}

func (o *BudgetOptions) setDefaults() {
	if o.MaxCalls == 0 {
		o.MaxCalls = DefaultMaxExpensiveCalls
	}
	if o.MaxCallsPerCaller == 0 {
		o.MaxCallsPerCaller = min(DefaultMaxExpensiveCallsPerCaller, o.MaxCalls)
	}
	if o.CallTimeout == 0 {
		o.CallTimeout = DefaultExpensiveCallTimeout
	}
}

// memory returns BundleMemory and CallBundleMemory with their defaults
// derived, and one caller's share.
func (o *BudgetOptions) memory() (total, call, caller int64) {
	total = o.BundleMemory
	if total == 0 {
		total = DefaultBundleMemory
		if lim := debug.SetMemoryLimit(-1); lim > 0 && lim < math.MaxInt64 {
			total = lim / 8 * 3
		}
	}
	caller = total / 2
	call = o.CallBundleMemory
	if call == 0 {
		call = caller
	}
	return total, call, caller
}

// KeptBytes is what a loader serving expensive calls keeps of the
// bundles it read, between calls: a quarter of the bundle memory bound.
func (o BudgetOptions) KeptBytes() int64 {
	o.setDefaults()
	total, _, _ := o.memory()
	return total / 4
}

func (o *BudgetOptions) validate() error {
	switch {
	case o.MaxCalls < 0:
		return optionErrorf("Budget.MaxCalls", "%d: want a positive number (0 means the default, %d)", o.MaxCalls, DefaultMaxExpensiveCalls)
	case o.MaxCallsPerCaller < 0 || o.MaxCallsPerCaller > o.MaxCalls:
		return optionErrorf("Budget.MaxCallsPerCaller", "%d: want 1..%d (%s)", o.MaxCallsPerCaller, o.MaxCalls, fieldName("Budget.MaxCalls"))
	case o.CallTimeout < 0:
		return optionErrorf("Budget.CallTimeout", "must not be negative")
	case o.BundleMemory < 0:
		return optionErrorf("Budget.BundleMemory", "must not be negative")
	case o.CallBundleMemory < 0:
		return optionErrorf("Budget.CallBundleMemory", "must not be negative")
	}
	_, call, caller := o.memory()
	if call > caller {
		return optionErrorf("Budget.CallBundleMemory", "%s is more than one caller may hold (%s, half of %s), so no call could use it: lower it or raise %[3]s", mib(call), mib(caller), fieldName("Budget.BundleMemory"))
	}
	return nil
}

// budget is the server's account of expensive work: calls in progress,
// overall and per caller, and the bundle memory they hold.
type budget struct {
	opts                  BudgetOptions
	memory, call, callers int64 // bounds: all calls, one call, one caller

	mu     sync.Mutex
	calls  int
	held   int64
	caller map[string]*share
}

// share is one caller's part of the budget.
type share struct {
	calls int
	held  int64
}

func newBudget(o BudgetOptions) *budget {
	b := &budget{opts: o, caller: map[string]*share{}}
	b.memory, b.call, b.callers = o.memory()
	return b
}

// lease is one expensive call's part of the budget. Its methods are for
// the call's own goroutine.
type lease struct {
	b    *budget
	key  string
	tool string
	held int64
}

// enter admits one expensive call of caller key, or answers BUSY.
func (b *budget) enter(key, tool string) (*lease, *ToolError) {
	b.mu.Lock()
	defer b.mu.Unlock()
	sh := b.caller[key]
	switch {
	case b.calls >= b.opts.MaxCalls:
		return nil, busy(fmt.Sprintf("%s was not run: the server is running as many expensive calls as it allows (%d, --max-expensive-calls)", tool, b.opts.MaxCalls))
	case sh != nil && sh.calls >= b.opts.MaxCallsPerCaller:
		return nil, busy(fmt.Sprintf("%s was not run: you have %d expensive calls in progress, as many as one caller may (--max-expensive-calls-per-caller); wait for one to finish", tool, sh.calls))
	}
	if sh == nil {
		sh = &share{}
		b.caller[key] = sh
	}
	sh.calls++
	b.calls++
	return &lease{b: b, key: key, tool: tool}, nil
}

// leave ends the call, returning what it held.
func (l *lease) leave() {
	b := l.b
	b.mu.Lock()
	defer b.mu.Unlock()
	sh := b.caller[l.key]
	b.held -= l.held
	sh.held -= l.held
	l.held = 0
	b.calls--
	if sh.calls--; sh.calls == 0 {
		delete(b.caller, l.key)
	}
}

// grant takes bundle memory for the call: want bytes, or, when want is
// 0, as much as the call may still hold and the shared bounds leave. It
// answers BUSY when the shared bounds leave less than want (or, for as
// much as possible, less than minGrant). callLimited says the call's own
// bound, not the shared ones, decided how much was granted: n < want
// then means the call may never hold want.
func (l *lease) grant(want int64) (n int64, callLimited bool, te *ToolError) {
	b := l.b
	b.mu.Lock()
	defer b.mu.Unlock()
	sh := b.caller[l.key]
	room := b.call - l.held
	if want > room {
		return 0, true, nil
	}
	ask := want
	if want == 0 {
		ask = room
	}
	n = min(ask, b.memory-b.held, b.callers-sh.held)
	if n < ask && (want > 0 || n < min(minGrant, ask)) {
		return 0, false, l.memoryBusy(sh)
	}
	n = max(n, 0)
	b.held += n
	sh.held += n
	l.held += n
	return n, n == room, nil
}

// minGrant is the least bundle memory worth starting a read with.
const minGrant = 1 << 20

func (l *lease) memoryBusy(sh *share) *ToolError {
	b := l.b
	if b.callers-sh.held < b.memory-b.held {
		return busy(fmt.Sprintf("%s was not run: your expensive calls in progress hold %s of bundle memory, as much as one caller may (%s, half of --max-bundle-memory)", l.tool, mib(sh.held), mib(b.callers)))
	}
	return busy(fmt.Sprintf("%s was not run: the expensive calls in progress hold %s of bundle memory, as much as the server allows (--max-bundle-memory %s)", l.tool, mib(b.held), mib(b.memory)))
}

// release returns n of what the call holds.
func (l *lease) release(n int64) {
	if n <= 0 {
		return
	}
	b := l.b
	b.mu.Lock()
	defer b.mu.Unlock()
	n = min(n, l.held)
	b.held -= n
	b.caller[l.key].held -= n
	l.held -= n
}

// charge makes the call hold need bytes (a bundle read, or what
// projecting it makes of it) for the rest of its life, or refuses: too
// much for one call (INVALID_ARGUMENT naming field and the flag) or for
// the shared bounds now (BUSY).
func (l *lease) charge(need int64, field, what string) error {
	if l == nil || need <= 0 {
		return nil
	}
	n, _, te := l.grant(need)
	if te != nil {
		return te
	}
	if n < need {
		return l.refuse(true, field, what, need+l.held)
	}
	return nil
}

// refuse is the answer to a bundle that does not fit: too large for any
// call (need is its estimate, or -1 when the read stopped at what the
// call may still hold), or for what is free now.
func (l *lease) refuse(callLimited bool, field, what string, need int64) error {
	b := l.b
	if callLimited {
		est := "an estimated " + mib(need)
		if need < 0 {
			est = "more than the " + mib(b.call-l.held) + " it may still hold"
		}
		return &ToolError{Code: CodeInvalidArgument, Field: field,
			Message: fmt.Sprintf("%s was not run: %s would hold %s of memory, and one call may hold %s (--max-call-bundle-memory); name a smaller bundle, or raise the limit", l.tool, what, est, mib(b.call))}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return l.memoryBusy(b.caller[l.key])
}

// read loads a bundle within the call's memory: it takes what the call
// may still hold, lets load read at most that many bytes (each charged
// readFactor times) and keeps the charge of what was read. field is the
// argument that named the bundle, what how the messages name it. Without
// a lease (a call that is not budgeted) load reads within its own limits.
func (l *lease) read(field, what string, load func(maxBytes int64) (*bundle.Bundle, error)) (*bundle.Bundle, error) {
	if l == nil {
		return load(0)
	}
	n, callLimited, te := l.grant(0)
	if te != nil {
		return nil, te
	}
	b, err := load(max(n/readFactor, 1))
	if err != nil {
		l.release(n)
		if errors.Is(err, source.ErrTooLarge) {
			return nil, l.refuse(callLimited, field, "reading "+what, -1)
		}
		return nil, err
	}
	need := b.FS.Size() * readFactor
	if need > n { // a bundle kept read: no new memory, but the call works on all of it
		l.release(n)
		return nil, l.refuse(callLimited, field, "reading "+what, need+l.held)
	}
	l.release(n - need)
	return b, nil
}

// readRef loads ref through loader within the call's budget; field names
// the argument that gave it, in errors.
func readRef(ctx context.Context, loader *source.RefLoader, field, ref string) (*bundle.Bundle, error) {
	b, err := leaseOf(ctx).read(field, ref, func(maxBytes int64) (*bundle.Bundle, error) {
		return loader.LoadWithin(ctx, ref, maxBytes)
	})
	var te *ToolError
	if err != nil && !errors.As(err, &te) {
		return nil, fieldError(queryToolError(err), field)
	}
	return b, err
}

// readDir loads the bundle directory dir (a local fleet source's, named
// what) within the call's budget. A *ToolError is the budget's answer;
// any other error is the directory's.
func readDir(ctx context.Context, field, what, dir string) (*bundle.Bundle, error) {
	return leaseOf(ctx).read(field, what, func(maxBytes int64) (*bundle.Bundle, error) {
		lim := archive.DefaultLimits
		if maxBytes > 0 && maxBytes < lim.MaxTotalBytes {
			lim.MaxTotalBytes, lim.MaxFileBytes = maxBytes, min(lim.MaxFileBytes, maxBytes)
			b, err := bundle.LoadDir(dir, &bundle.LoadOptions{Limits: lim})
			if errors.Is(err, archive.ErrLimit) {
				return nil, source.ErrTooLarge
			}
			return b, err
		}
		return bundle.LoadDir(dir, &bundle.LoadOptions{Limits: lim})
	})
}

type leaseKey struct{}

// leaseOf returns the budget lease of the call ctx belongs to, or nil
// when the call is not budgeted.
func leaseOf(ctx context.Context) *lease {
	l, _ := ctx.Value(leaseKey{}).(*lease)
	return l
}

// callerKey names the caller a call is counted for: its identity, or
// "" for every unauthenticated caller.
func callerKeyOf(ctx context.Context) string {
	if id, ok := caller(ctx); ok {
		return id.key()
	}
	return ""
}

// run runs an expensive tool's call within the budget: admitted or BUSY,
// bounded by CallTimeout (its ctx is cancelled past it, so its work
// stops), and holding bundle memory only through its lease.
func (b *budget) run(ctx context.Context, t *tool, args json.RawMessage) *sdk.CallToolResult {
	l, te := b.enter(callerKeyOf(ctx), t.name)
	if te != nil {
		return errorResult(te)
	}
	defer l.leave()
	cctx, cancel := context.WithTimeout(context.WithValue(ctx, leaseKey{}, l), b.opts.CallTimeout)
	defer cancel()
	res := t.call(cctx, args)
	if ctx.Err() == nil && errors.Is(cctx.Err(), context.DeadlineExceeded) && res.IsError {
		return errorResult(&ToolError{Code: CodeCancelled,
			Message: fmt.Sprintf("%s did not finish within %s, the longest an expensive call may take (--expensive-call-timeout), and its work was stopped; ask about less (a smaller value, one operation), or raise the limit", t.name, b.opts.CallTimeout)})
	}
	return res
}

// read wraps a resource handler the same way, for reads as costly as an
// expensive call (the catalog's documents): BUSY is a JSON-RPC error
// there, with the same message.
func (b *budget) read(name string, h sdk.ResourceHandler) sdk.ResourceHandler {
	return func(ctx context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
		l, te := b.enter(callerKeyOf(withCaller(ctx, req.Extra)), name)
		if te != nil {
			return nil, te
		}
		defer l.leave()
		cctx, cancel := context.WithTimeout(ctx, b.opts.CallTimeout)
		defer cancel()
		return h(cctx, req)
	}
}

func busy(msg string) *ToolError {
	return &ToolError{Code: CodeBusy, Message: msg, RetryAfterMs: busyRetryAfter.Milliseconds()}
}

// mib renders bytes for a message.
func mib(n int64) string {
	switch {
	case n >= 10<<20:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	default:
		return fmt.Sprintf("%d KiB", (n+1023)>>10)
	}
}
