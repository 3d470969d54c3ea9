package main

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
)

// extractName is spliced over the go-sdk's (mcp/streamable_headers.go),
// which its client runs on every request it sends (for the Mcp-Name
// header) and its server on every request it reads (to check that
// header). Upstream decodes a whole CallToolParams to read the name: the
// _meta (the client's capabilities and info) and the arguments into new
// maps, a few dozen objects a call that are dropped at once.
//
// Here a tools/call's params decode into the same fields, but _meta and
// the arguments are only checked where they lie. Decoding them as upstream
// does fails, on input that is one JSON value, only where _meta is not an
// object or null, or where either holds a number a float64 cannot hold;
// the checks fail there too, so the name and whether there is one are
// upstream's. The other methods are upstream's.
func extractName(method string, params json.RawMessage) (string, bool) {
	switch method {
	case "tools/call":
		var p struct {
			Meta           metaShape        `json:"_meta,omitempty"`
			Name           string           `json:"name"`
			Arguments      anyShape         `json:"arguments,omitempty"`
			InputResponses InputResponseMap `json:"inputResponses,omitempty"`
			RequestState   string           `json:"requestState,omitempty"`
		}
		if err := internaljson.Unmarshal(params, &p); err == nil {
			return p.Name, true
		}
	case "prompts/get":
		var p GetPromptParams
		if err := internaljson.Unmarshal(params, &p); err == nil {
			return p.Name, true
		}
	case "resources/read":
		var p ReadResourceParams
		if err := internaljson.Unmarshal(params, &p); err == nil {
			return p.URI, true
		}
	}

	return "", false
}

// anyShape is a JSON value decoded only as far as decoding it into an any
// could fail: on a number out of float64's range.
type anyShape struct{}

func (*anyShape) UnmarshalJSON(b []byte) error { return floatRange(b) }

// metaShape is a _meta decoded only as far as decoding it into a Meta
// could fail: a value that is not an object or null, or a number out of
// float64's range in it.
type metaShape struct{}

func (*metaShape) UnmarshalJSON(b []byte) error {
	if string(b) != "null" && (len(b) == 0 || b[0] != '{') {
		return errors.New("_meta is not an object")
	}
	return floatRange(b)
}

// floatRange fails when the JSON value b holds a number that
// strconv.ParseFloat refuses for a float64 (one out of its range: syntax
// is the decoder's, already checked). A number without an exponent and
// of at most 300 characters is within range without parsing it.
func floatRange(b []byte) error {
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			for i++; i < len(b) && b[i] != '"'; i++ {
				if b[i] == '\\' {
					i++
				}
			}
		case c == '-' || '0' <= c && c <= '9':
			j, exp := i, false
			for ; j < len(b) && strings.IndexByte("+-.eE0123456789", b[j]) >= 0; j++ {
				exp = exp || b[j] == 'e' || b[j] == 'E'
			}
			if exp || j-i > 300 {
				if _, err := strconv.ParseFloat(string(b[i:j]), 64); err != nil {
					return err
				}
			}
			i = j - 1
		}
	}
	return nil
}
