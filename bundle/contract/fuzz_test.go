package contract_test

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/kubepact/kubepact/bundle/contract"
)

// FuzzParse feeds arbitrary bytes to the parser. Seeds live in
// testdata/fuzz/FuzzParse: every compatibility pacto.yaml plus hostile
// documents (alias bombs, deep nesting, odd tags, several documents).
func FuzzParse(f *testing.F) {
	f.Add([]byte("pactoVersion: '2.0'\nservice: {name: a, version: 1.0.0}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var (
			c         *contract.Contract
			tree      any
			err, gerr error
			done      = make(chan struct{})
		)
		// Every input must be decided quickly; a slow one is a finding.
		go func() {
			defer close(done)
			c, err = contract.Parse(data)
			tree, gerr = contract.DecodeGeneric(data)
		}()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("Parse and DecodeGeneric took over 10s on a %d-byte input", len(data))
		}
		if err != nil {
			var pe *contract.ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("Parse error is %T, want *ParseError: %v", err, err)
			}
			if pe.Line < 0 || pe.Column < 0 || pe.Message == "" {
				t.Fatalf("malformed ParseError %+v", pe)
			}
			return
		}
		if gerr != nil {
			t.Fatalf("Parse succeeded but DecodeGeneric failed: %v", gerr)
		}
		if _, err := json.Marshal(tree); err != nil {
			t.Fatalf("DecodeGeneric tree is not JSON-compatible: %v", err)
		}
		if _, err := json.Marshal(c); err != nil {
			t.Fatalf("Contract does not encode as JSON: %v", err)
		}
	})
}
