package mcp

import (
	"container/heap"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/go-logr/logr"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kubepact/kubepact/internal/openapitools/invoke"
)

// CodeNotConfirmed is the code of a generated tool's call that needed the
// user's confirmation (see openapitools.Options.ConfirmWrites) and did not
// get it; nothing was sent. Reason says why (the notConfirmed* reasons);
// Remedy says what the agent or the operator can do.
const CodeNotConfirmed = "NOT_CONFIRMED"

// Reasons of a NOT_CONFIRMED error. The first four are answers (or the
// lack of one) from the client; the others are the verdicts on the
// confirmation state a 2026-07-28 retry carries (see confirmations).
const (
	notConfirmedDeclined  = "DECLINED"
	notConfirmedCancelled = "CANCELLED"
	notConfirmedNoAsk     = "NO_ELICITATION"
	notConfirmedFailed    = "ELICITATION_FAILED"

	notConfirmedForged   = "FORGED"           // not a state this server process issued (made up, altered, absent, or from before a restart)
	notConfirmedExpired  = "EXPIRED"          // issued longer ago than the confirmation's lifetime
	notConfirmedReplayed = "REPLAYED"         // already used once
	notConfirmedRequest  = "REQUEST_MISMATCH" // issued for another tool or other arguments
	notConfirmedCaller   = "CALLER_MISMATCH"  // issued to another identity or connection
	notConfirmedBusy     = "OVERLOADED"       // too many confirmations used recently to track one more
)

// DefaultConfirmationTTL is how long a confirmation the server asked for
// on the 2026-07-28 era stays valid: the time a person has to answer.
const DefaultConfirmationTTL = 5 * time.Minute

// maxSpentConfirmations bounds the used confirmations remembered until
// they expire (about 80 bytes each): beyond it a retry is refused
// OVERLOADED rather than forgetting one, which would let it be replayed.
const maxSpentConfirmations = 1 << 14

// maxShownBody bounds the body shown in a confirmation request; a longer
// body is shown cut, with its length and digest.
const maxShownBody = 8 << 10

// protocolMRTR is the first protocol version on which a server may not
// send requests of its own while serving one: elicitation becomes the
// input-required / retry flow (multi round-trip requests, SEP-2322).
const protocolMRTR = "2026-07-28"

// confirmInputID names the confirmation among a result's input requests.
const confirmInputID = "confirm"

// callRequestKey carries the tools/call request in a tool call's context,
// for the input responses of a retried call.
type callRequestKey struct{}

func withCallRequest(ctx context.Context, req *sdk.CallToolRequest) context.Context {
	return context.WithValue(ctx, callRequestKey{}, req)
}

// inputRequired is the confirmer's answer on the 2026-07-28 era: the call
// ends with an input-required result asking the client to confirm, and
// the client retries with the user's answer and the state.
type inputRequired struct {
	ask   *sdk.ElicitParams
	state string
}

func (e *inputRequired) Error() string { return "the user's confirmation is required" }

func (e *inputRequired) result() *sdk.CallToolResult {
	return &sdk.CallToolResult{InputRequests: sdk.InputRequestMap{confirmInputID: e.ask}, RequestState: e.state}
}

// notConfirmed is the error of a call the user did not confirm.
func notConfirmed(call *invoke.PendingCall, reason, msg string) error {
	return &ToolError{Code: CodeNotConfirmed, Reason: reason, Remedy: confirmRemedy(reason),
		Message: fmt.Sprintf("%s was not called: %s. Nothing was sent to the service.", call.Tool, msg)}
}

// confirmRemedy says what can be done after a call was not confirmed for
// reason: a person who said no is not asked to say yes, and a client that
// cannot ask is pointed at the server option.
func confirmRemedy(reason string) string {
	again := "call the tool again without requestState and inputResponses: the server then asks the user to confirm afresh"
	switch reason {
	case notConfirmedDeclined:
		return "the user chose not to send this request; do not send it again unless the user asks for it, and then call the tool again: the user is asked again"
	case notConfirmedCancelled:
		return "the user dismissed the question without answering; if the user still wants the change, call the tool again and the user is asked again"
	case notConfirmedNoAsk:
		return "use a client that supports MCP elicitation and confirm the request there; for unattended use the operator can start the server with --confirm-writes=never"
	case notConfirmedFailed:
		return "call the tool again to ask again; if asking keeps failing, use a client whose elicitation works, or for unattended use the operator can start the server with --confirm-writes=never"
	case notConfirmedForged:
		return again + " (a confirmation state is made by this server and is valid only in the process that made it)"
	case notConfirmedExpired:
		return again + "; a confirmation is valid for " + durationWords(DefaultConfirmationTTL) + " after it is asked for"
	case notConfirmedReplayed:
		return again + "; a confirmation covers one call"
	case notConfirmedRequest:
		return "call the tool with the arguments the user should confirm, without the other call's requestState: the user is asked to confirm exactly those"
	case notConfirmedCaller:
		return again + " as the caller that will send it; a confirmation is valid only for the identity (or connection) it was asked for"
	case notConfirmedBusy:
		return "retry in a few minutes; too many confirmations were used recently"
	}
	return again
}

// confirmRequest is the elicitation showing call.
func confirmRequest(call *invoke.PendingCall) *sdk.ElicitParams {
	return &sdk.ElicitParams{
		Mode:            "form",
		Message:         confirmMessage(call),
		RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{}},
	}
}

// confirmations asks users to confirm generated tools' calls and, on the
// 2026-07-28 era, issues and checks the confirmation states that carry a
// confirmation from the call that asks to the retry that answers.
//
// On that era the server cannot ask while a call is in progress: the call
// answers input-required with the question and an opaque request state,
// and the client retries with the user's answer and that state. The state
// is the only thing tying the answer to a question this server asked, so
// it is a token the server issued: 16 random bytes naming it, its expiry,
// a tag of the pending request (tool name and the digest of its canonical
// arguments), a tag of the caller (the authenticated identity, and the
// connection when the transport has one), all under an HMAC-SHA256 with a
// secret drawn when the server is built. A retry is sent only when its
// state verifies, has not expired, was issued for the same request and
// caller, and has not been used before: a used state's id is remembered
// until it expires (at most maxSpentConfirmations of them). Each failure
// has its reason (FORGED, EXPIRED, REQUEST_MISMATCH, CALLER_MISMATCH,
// REPLAYED, OVERLOADED), and nothing is sent.
//
// What it cannot tell: whether a person, rather than the client itself,
// gave the answer. A client that answers "accept" without showing the
// question is indistinguishable from one that showed it.
type confirmations struct {
	secret [32]byte
	ttl    time.Duration
	now    func() time.Time
	log    logr.Logger

	mu    sync.Mutex
	spent map[tokenID]time.Time // used token → its expiry
	order spentHeap             // the same, soonest expiry first
	conns map[*sdk.ServerSession]*connTag
}

type tokenID [16]byte

type connTag struct {
	tag  [16]byte
	used time.Time
}

// newConfirmations draws a fresh secret: a state is valid only in the
// server that issued it.
func newConfirmations(log logr.Logger) *confirmations {
	c := &confirmations{ttl: DefaultConfirmationTTL, now: time.Now, log: log, spent: map[tokenID]time.Time{}, conns: map[*sdk.ServerSession]*connTag{}}
	_, _ = rand.Read(c.secret[:]) // crypto/rand.Read never fails (it panics instead)
	return c
}

// confirmer returns the invoke.Confirmer of one call whose checked
// arguments are args.
func (c *confirmations) confirmer(args map[string]any) invoke.Confirmer {
	return func(ctx context.Context, call *invoke.PendingCall) error {
		return c.confirm(ctx, call, args)
	}
}

// confirm asks the user at the client to confirm a pending call: through
// elicitation/create on the calling session (2025-11-25 and before), or
// with an input-required result the client answers by retrying
// (2026-07-28). It refuses (a NOT_CONFIRMED ToolError) unless the user
// accepted.
func (c *confirmations) confirm(ctx context.Context, call *invoke.PendingCall, args map[string]any) error {
	refuse := func(reason, msg string) error { return notConfirmed(call, reason, msg) }
	if req, _ := ctx.Value(callRequestKey{}).(*sdk.CallToolRequest); req != nil && req.ProtocolVersion() >= protocolMRTR {
		return c.confirmByRetry(req, call, args)
	}
	ss := sessionOf(ctx)
	if ss == nil {
		return refuse(notConfirmedNoAsk, "it needs the user's confirmation and there is no client session to ask through")
	}
	init := ss.InitializeParams()
	if init == nil || init.Capabilities == nil || init.Capabilities.Elicitation == nil {
		return refuse(notConfirmedNoAsk, "it needs the user's confirmation and this client did not declare the elicitation capability, so the server cannot ask")
	}
	res, err := ss.Elicit(ctx, confirmRequest(call))
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		var te *ToolError
		if errors.As(err, &te) {
			return te
		}
		c.log.V(1).Info("Asking for a confirmation failed", "tool", call.Tool, "error", err.Error())
		return refuse(notConfirmedFailed, "asking the user for confirmation failed: the client answered the elicitation request with an error")
	}
	return answered(call, res)
}

// answered turns the user's answer into the call's verdict.
func answered(call *invoke.PendingCall, res *sdk.ElicitResult) error {
	switch res.Action {
	case "accept":
		return nil
	case "decline":
		return notConfirmed(call, notConfirmedDeclined, "the user declined it")
	default:
		return notConfirmed(call, notConfirmedCancelled, fmt.Sprintf("the user dismissed the confirmation (%s)", orNone([]string{res.Action})))
	}
}

// confirmByRetry is the 2026-07-28 flow. A call without an answer gets
// input-required with the confirmation to show and a fresh state; a retry
// carrying an answer is judged only once its state passes check, which
// also spends it.
func (c *confirmations) confirmByRetry(req *sdk.CallToolRequest, call *invoke.PendingCall, args map[string]any) error {
	reqTag := c.requestTag(call.Tool, args)
	callerTag := c.callerTag(req)
	if resp, ok := req.Params.InputResponses[confirmInputID]; ok {
		if reason, msg := c.check(req.Params.RequestState, reqTag, callerTag); reason != "" {
			return notConfirmed(call, reason, msg)
		}
		res, ok := resp.(*sdk.ElicitResult)
		if !ok {
			return notConfirmed(call, notConfirmedFailed, fmt.Sprintf("the retry's input response %q is not an elicitation result", confirmInputID))
		}
		return answered(call, res)
	}
	if caps := req.ClientCapabilities(); caps == nil || caps.Elicitation == nil {
		return notConfirmed(call, notConfirmedNoAsk, "it needs the user's confirmation and this client did not declare the elicitation capability, so the server cannot ask")
	}
	return &inputRequired{ask: confirmRequest(call), state: c.issue(reqTag, callerTag)}
}

// A token is tokenPrefix and the unpadded base64url of: a version byte,
// the id, the expiry (Unix milliseconds, big-endian), the request tag, the
// caller tag, and the HMAC-SHA256 of all of these.
const (
	tokenPrefix  = "kpc1."
	tokenVersion = 1
	tagLen       = 16
	tokenBody    = 1 + len(tokenID{}) + 8 + tagLen + tagLen
	tokenLen     = tokenBody + sha256.Size
)

// mac is HMAC-SHA256 under the server's secret of the parts, each
// prefixed with its length, in the domain purpose.
func (c *confirmations) mac(purpose string, parts ...[]byte) []byte {
	h := hmac.New(sha256.New, c.secret[:])
	for _, p := range append([][]byte{[]byte(purpose)}, parts...) {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(p)))
		h.Write(n[:])
		h.Write(p)
	}
	return h.Sum(nil)
}

// requestTag identifies the pending request: the tool and its arguments
// in canonical JSON (keys sorted, numbers as given). The arguments, not
// the encoded request, because a multipart body's boundary is drawn
// afresh for every request while the request itself is the same.
func (c *confirmations) requestTag(tool string, args map[string]any) [tagLen]byte {
	raw, err := json.Marshal(args)
	if err != nil { // decoded JSON always encodes; never equal to a real tag if it did not
		raw = []byte("unencodable: " + err.Error())
	}
	sum := sha256.Sum256(raw)
	return [tagLen]byte(c.mac("kubepact confirmation request", []byte(tool), sum[:]))
}

// callerTag identifies who retries: the authenticated identity (the
// stateless era's only continuity over HTTP) and, on a transport with a
// connection of its own (stdio, in-memory), that connection.
func (c *confirmations) callerTag(req *sdk.CallToolRequest) [tagLen]byte {
	var parts [][]byte
	if id, ok := callerOf(req.Extra); ok {
		parts = append(parts, []byte("identity"), []byte(id.key()))
	} else {
		parts = append(parts, []byte("anonymous"))
	}
	switch {
	case req.Extra != nil && req.Extra.Header != nil:
		parts = append(parts, []byte("http"))
	case req.Session != nil:
		conn := c.connTag(req.Session)
		parts = append(parts, []byte("connection"), conn[:])
	}
	return [tagLen]byte(c.mac("kubepact confirmation caller", parts...))
}

// connTag is a random tag standing for one connection. Tags unused for a
// confirmation's lifetime are dropped: every state bound to them has
// expired.
func (c *confirmations) connTag(ss *sdk.ServerSession) [16]byte {
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, t := range c.conns {
		if now.Sub(t.used) > c.ttl {
			delete(c.conns, k)
		}
	}
	t := c.conns[ss]
	if t == nil {
		t = &connTag{}
		_, _ = rand.Read(t.tag[:])
		c.conns[ss] = t
	}
	t.used = now
	return t.tag
}

// issue makes a fresh state for the request and caller tags.
func (c *confirmations) issue(reqTag, callerTag [tagLen]byte) string {
	var id tokenID
	_, _ = rand.Read(id[:])
	return c.mint(id, reqTag, callerTag)
}

// mint writes the state named id, expiring a lifetime from now.
func (c *confirmations) mint(id tokenID, reqTag, callerTag [tagLen]byte) string {
	b := make([]byte, 0, tokenLen)
	b = append(b, tokenVersion)
	b = append(b, id[:]...)
	b = binary.BigEndian.AppendUint64(b, uint64(c.now().Add(c.ttl).UnixMilli()))
	b = append(b, reqTag[:]...)
	b = append(b, callerTag[:]...)
	b = append(b, c.mac("kubepact confirmation token", b)...)
	return tokenPrefix + base64.RawURLEncoding.EncodeToString(b)
}

// check judges the state a retry carries for the request and caller tags
// and, when it is good, spends it. It returns "" or the NOT_CONFIRMED
// reason and what to say.
func (c *confirmations) check(state string, reqTag, callerTag [tagLen]byte) (reason, msg string) {
	forged := func(what string) (string, string) {
		return notConfirmedForged, "the retry carries the user's answer, but " + what + ", so the server cannot tell that it asked this question"
	}
	if state == "" {
		return forged("no requestState")
	}
	enc, ok := strings.CutPrefix(state, tokenPrefix)
	if !ok || base64.RawURLEncoding.DecodedLen(len(enc)) != tokenLen {
		return forged("its requestState is not one this server issues")
	}
	b, err := base64.RawURLEncoding.Strict().DecodeString(enc)
	if err != nil || len(b) != tokenLen || b[0] != tokenVersion {
		return forged("its requestState is not one this server issues")
	}
	if !hmac.Equal(b[tokenBody:], c.mac("kubepact confirmation token", b[:tokenBody])) {
		return forged("its requestState was not issued by this server process (or was altered)")
	}
	var id tokenID
	copy(id[:], b[1:])
	expiry := time.UnixMilli(int64(binary.BigEndian.Uint64(b[1+len(id):])))
	tags := b[1+len(id)+8:]
	now := c.now()
	switch {
	case !now.Before(expiry):
		return notConfirmedExpired, fmt.Sprintf("the confirmation it carries was asked for more than %s ago and has expired", durationWords(c.ttl))
	case !hmac.Equal(tags[:tagLen], reqTag[:]):
		return notConfirmedRequest, "the confirmation it carries was given for another request (another tool or other arguments) than the one this call would send"
	case !hmac.Equal(tags[tagLen:tagLen*2], callerTag[:]):
		return notConfirmedCaller, "the confirmation it carries was asked for by another caller (identity or connection)"
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for len(c.order) > 0 && !now.Before(c.order[0].expiry) {
		delete(c.spent, heap.Pop(&c.order).(spentToken).id)
	}
	if _, used := c.spent[id]; used {
		return notConfirmedReplayed, "the confirmation it carries was already used by an earlier call"
	}
	if len(c.spent) >= maxSpentConfirmations {
		return notConfirmedBusy, fmt.Sprintf("the server already tracks %d confirmations used in the last %s", len(c.spent), durationWords(c.ttl))
	}
	c.spent[id] = expiry
	heap.Push(&c.order, spentToken{id: id, expiry: expiry})
	return "", ""
}

// durationWords writes whole minutes as words ("5 minutes").
func durationWords(d time.Duration) string {
	if m := int(d / time.Minute); d%time.Minute == 0 && m > 0 {
		if m == 1 {
			return "1 minute"
		}
		return fmt.Sprintf("%d minutes", m)
	}
	return d.String()
}

// spentHeap orders used tokens by expiry, soonest first.
type spentHeap []spentToken

type spentToken struct {
	id     tokenID
	expiry time.Time
}

func (h spentHeap) Len() int           { return len(h) }
func (h spentHeap) Less(i, j int) bool { return h[i].expiry.Before(h[j].expiry) }
func (h spentHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *spentHeap) Push(x any)        { *h = append(*h, x.(spentToken)) }
func (h *spentHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// confirmMessage shows the request exactly as it will be sent, but for
// credentials, which are added after confirmation.
func confirmMessage(call *invoke.PendingCall) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Allow %s to send this request to the live service? It may change or delete data.\n\n%s %s\n", call.Tool, call.Method, call.URL)
	names := make([]string, 0, len(call.Header))
	for name := range call.Header {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		for _, v := range call.Header[name] {
			fmt.Fprintf(&b, "%s: %s\n", name, v)
		}
	}
	if len(call.Body) > 0 {
		body := call.Body
		cut := len(body) > maxShownBody
		if cut {
			body = body[:maxShownBody]
		}
		b.WriteString("\n")
		if utf8.Valid(body) || cut {
			b.WriteString(strings.ToValidUTF8(string(body), "\uFFFD"))
		} else {
			fmt.Fprintf(&b, "(%d bytes that are not text)", len(call.Body))
		}
		if cut {
			sum := sha256.Sum256(call.Body)
			fmt.Fprintf(&b, "\n… the body is %d bytes in all; the first %d are shown (sha256 %s)", len(call.Body), maxShownBody, hex.EncodeToString(sum[:]))
		}
		b.WriteString("\n")
	}
	b.WriteString("\nCredentials, if the operation takes any, are added after you accept and are not shown. Accept to send it exactly as shown; decline to send nothing.")
	return b.String()
}
