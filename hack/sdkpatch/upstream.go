package main

import (
	"io"

	"github.com/segmentio/encoding/json"
)

// The names replacement.go uses from the upstream file it is spliced into,
// so that it compiles and is tested here. They are not part of the patch.

// defaultMaxDepth stands in for upstream's nesting bound.
const defaultMaxDepth = 1000

// checkMaxDepth stands in for upstream's nesting check, which runs before
// and apart from what the patch changes: the tests' inputs are shallow.
func checkMaxDepth([]byte, int) error { return nil }

// NewDecoder is upstream's: a segmentio Decoder that matches struct fields
// by their exact name.
func NewDecoder(r io.Reader) *json.Decoder {
	dec := json.NewDecoder(r)
	dec.DontMatchCaseInsensitiveStructFields()
	return dec
}
