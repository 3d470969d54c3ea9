package main

import (
	"bytes"

	"github.com/segmentio/encoding/json"
)

// Unmarshal is spliced over the go-sdk's internal/json.Unmarshal, which
// every message the SDK reads goes through several times (the batch check,
// the envelope, _meta, the name header check, the params, the arguments).
// Upstream decodes through a new Decoder each time, and a Decoder starts
// with a 32 KiB buffer into which it copies the whole input: 85% of the
// bytes a tools/call allocates on the stateless path.
//
// Here the one JSON value is parsed where it lies. What a caller sees is
// the Decoder's: when data is exactly one valid value (and white space),
// the Decoder would parse the same bytes with the same flags, so the value
// and any error are the same; anything else (empty input, a syntax error,
// bytes after the value) still goes through the Decoder, for its errors
// and its reading of the first value.
func Unmarshal(data []byte, v any) error {
	if err := checkMaxDepth(data, defaultMaxDepth); err != nil {
		return err
	}
	if !json.Valid(data) {
		return NewDecoder(bytes.NewReader(data)).Decode(v)
	}
	_, err := json.Parse(bytes.TrimLeft(data, " \t\r\n"), v, json.DontMatchCaseInsensitiveStructFields)
	return err
}
