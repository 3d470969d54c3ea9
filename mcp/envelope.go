package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"

	"github.com/kubepact/kubepact/internal/jsonobj"
)

// JSON-RPC error codes kubepact's HTTP layer answers itself, before the SDK
// sees a request.
const (
	codeInvalidRequest = -32600
	// codeUnavailable is in the implementation-defined server error range:
	// the server is draining, or every session slot is busy.
	codeUnavailable = -32000
)

// maxExactID is the largest integer id the SDK echoes exactly: it decodes
// ids through float64, so beyond 2^53-1 digits are lost, and a fraction or
// an exponent comes back as a different number (1e308 as
// -9223372036854775808).
const maxExactID = 1<<53 - 1

var canonicalInt = regexp.MustCompile(`^-?(0|[1-9][0-9]*)$`)

// envelopeError is a request refused before the SDK decoded it.
type envelopeError struct {
	id  json.RawMessage // the request's id exactly as sent; nil when unknown
	msg string
}

// readEnvelope reads r's body (at most limit bytes) and checks the JSON-RPC
// envelope strictly: no key twice in any object at any depth (a proxy or
// an approval layer reading the first value would see another call than
// the one run), and ids the SDK will echo exactly. It returns the body for
// the SDK, or the refusal. Bodies that are not JSON at all pass: the SDK
// answers those with a parse error.
func readEnvelope(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, *envelopeError, error) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		return nil, nil, err
	}
	if path, dup := jsonobj.DuplicateKeyPath(body); dup {
		e := &envelopeError{msg: fmt.Sprintf("Invalid Request: key %q appears twice; every key may appear once, at any depth of the request", path)}
		if path != "id" && path != "" {
			e.id = singleID(body)
		}
		return nil, e, nil
	}
	var batch []json.RawMessage
	if json.Unmarshal(body, &batch) != nil {
		batch = []json.RawMessage{body}
	}
	for i, raw := range batch {
		var msg struct {
			ID json.RawMessage `json:"id"`
		}
		if json.Unmarshal(raw, &msg) != nil || len(msg.ID) == 0 {
			continue
		}
		if reason := idProblem(msg.ID); reason != "" {
			e := &envelopeError{msg: "Invalid Request: id " + string(msg.ID) + " " + reason + "; use a string id or an integer within ±9007199254740991"}
			if len(batch) > 1 {
				e.msg = fmt.Sprintf("Invalid Request: batch element %d: %s", i, e.msg[len("Invalid Request: "):])
			} else {
				e.id = msg.ID
			}
			return nil, e, nil
		}
	}
	return body, nil, nil
}

// idProblem says why a JSON-RPC id cannot be answered exactly, or "".
func idProblem(id json.RawMessage) string {
	switch id[0] {
	case '"', 'n': // a string, or null (a notification in old drafts)
		return ""
	case '{', '[', 't', 'f':
		return "is not a string or an integer"
	}
	s := string(id)
	if !canonicalInt.MatchString(s) {
		return "is not written as a plain integer (no fraction, no exponent)"
	}
	if n, err := strconv.ParseInt(s, 10, 64); err != nil || n > maxExactID || n < -maxExactID {
		return "is too large to be echoed exactly"
	}
	return ""
}

// singleID returns the id of a single (non-batch) request, or nil.
func singleID(body []byte) json.RawMessage {
	var msg struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(body, &msg) != nil || len(msg.ID) == 0 || idProblem(msg.ID) != "" {
		return nil
	}
	return msg.ID
}

// writeRPCError answers a JSON-RPC error with the given HTTP status. id is
// echoed byte for byte; nil means null (the id could not be determined).
func writeRPCError(w http.ResponseWriter, status int, id json.RawMessage, code int, msg string) {
	if id == nil {
		id = json.RawMessage("null")
	}
	var b bytes.Buffer
	b.WriteString(`{"jsonrpc":"2.0","id":`)
	b.Write(id)
	b.WriteString(`,"error":`)
	enc, _ := json.Marshal(struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}{code, msg})
	b.Write(enc)
	b.WriteString("}\n")
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(b.Len()))
	w.WriteHeader(status)
	_, _ = w.Write(b.Bytes())
}

// bodyTooLarge reports whether err is http.MaxBytesReader's refusal.
func bodyTooLarge(err error) (int64, bool) {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return mbe.Limit, true
	}
	return 0, false
}
