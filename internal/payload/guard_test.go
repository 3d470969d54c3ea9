package payload

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// explosive is a configuration whose schema recurses through two
// alternatives that both descend before one of them fails: checking a
// value nested n levels deep evaluates 2^n nodes (40 levels: about 10^12,
// hours of CPU) unless the check is stopped. hidden puts the same
// recursion where the validator only wants a yes or no (inside not, and
// in the alternatives a oneOf tries after one matched), where it skips
// its own per-node hooks on failure.
func explosive(t *testing.T) *Contract {
	t.Helper()
	return writeBundle(t, map[string]string{
		"pacto.yaml": `pactoVersion: "2.0"
service: {name: explosive, version: 1.0.0}
configurations:
  - name: open
    schema: open.json
  - name: hidden
    schema: hidden.json
`,
		"open.json": `{"$defs": {"n": {"anyOf": [
			{"type": "object", "properties": {"a": {"$ref": "#/$defs/n"}}, "required": ["z"]},
			{"type": "object", "properties": {"a": {"$ref": "#/$defs/n"}}}]}},
		 "$ref": "#/$defs/n"}`,
		"hidden.json": `{"$defs": {"n": {"anyOf": [
			{"type": "object", "properties": {"a": {"$ref": "#/$defs/n"}}, "not": {}},
			{"type": "object", "properties": {"a": {"$ref": "#/$defs/n"}}, "not": {}}]}},
		 "oneOf": [{"type": "object"}, {"$ref": "#/$defs/n"}]}`,
	})
}

func nested(levels int) json.RawMessage {
	return json.RawMessage(strings.Repeat(`{"a":`, levels) + "{}" + strings.Repeat("}", levels))
}

// TestValidateStopsWhenCancelled: a check that would run for hours
// returns ctx's error once the call is cancelled, however the schema
// nests its alternatives, and nothing runs on after it returns (Validate
// does its work on the caller's goroutine). The same contract answers a
// later check: a stopped copy is not broken.
func TestValidateStopsWhenCancelled(t *testing.T) {
	c := explosive(t)
	for _, cfg := range []string{"open", "hidden"} {
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() {
			_, err := c.Validate(ctx, Subject{Configuration: cfg}, nested(40))
			done <- err
		}()
		select {
		case err := <-done:
			t.Fatalf("%s: the check of 2^40 nodes returned before it was cancelled: %v", cfg, err)
		case <-time.After(200 * time.Millisecond): // it is under way
		}
		cancel()
		select {
		case err := <-done:
			if !errors.Is(err, context.Canceled) {
				t.Errorf("%s: cancelled check returned %v; want context.Canceled", cfg, err)
			}
		case <-time.After(60 * time.Second): // a bound on a hung check; it measures nothing
			t.Fatalf("%s: the check went on after it was cancelled", cfg)
		}
		res, err := c.Validate(t.Context(), Subject{Configuration: cfg}, nested(3))
		if err != nil || !res.Valid && cfg == "open" {
			t.Errorf("%s: a small value after the stop: %+v, %v", cfg, res, err)
		}
	}
}

// TestValidateStepBound: without a deadline, the same check ends by
// itself at MaxSteps with SCHEMA_UNAVAILABLE saying why, instead of
// burning a core until someone notices.
func TestValidateStepBound(t *testing.T) {
	if testing.Short() {
		t.Skip("spends MaxSteps (a few seconds of CPU)")
	}
	c := explosive(t)
	_, err := c.Validate(t.Context(), Subject{Configuration: "open"}, nested(40))
	var e *Error
	if !errors.As(err, &e) || e.Code != CodeSchemaUnavailable || !strings.Contains(e.Message, "more than 4000000 evaluation steps") {
		t.Fatalf("got %v; want SCHEMA_UNAVAILABLE naming the step bound", err)
	}
}

// TestCompileStopsWhenCancelled: compiling a schema is part of the check
// and stops with it; a compilation that was stopped is not kept, so the
// next check compiles and answers.
func TestCompileStopsWhenCancelled(t *testing.T) {
	c := explosive(t)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := c.Validate(ctx, Subject{Configuration: "open"}, nested(1)); !errors.Is(err, context.Canceled) {
		t.Fatalf("check with a cancelled ctx: %v; want context.Canceled before anything is compiled", err)
	}
	if res, err := c.Validate(t.Context(), Subject{Configuration: "open"}, nested(1)); err != nil || !res.Valid {
		t.Fatalf("next check: %+v, %v", res, err)
	}
}

// TestNumberBounds: numbers whose exact value costs more than their
// bytes (a huge exponent, hundreds of thousands of digits) are refused
// before any schema sees them, naming the bound and where the number is.
func TestNumberBounds(t *testing.T) {
	c := read(t, "../../examples/bundles/payments")
	for _, value := range []string{
		`{"currency":"EUR","captureDelaySeconds":1e999999999}`,
		`{"currency":"EUR","captureDelaySeconds":1e-999999}`,
		`{"currency":"EUR","captureDelaySeconds":1` + strings.Repeat("0", 500000) + `}`,
	} {
		_, err := c.Validate(t.Context(), Subject{Configuration: "app"}, json.RawMessage(value))
		var e *Error
		if !errors.As(err, &e) || e.Code != CodeInvalidArgument || e.Field != "Value" ||
			!strings.Contains(e.Message, `the number at "captureDelaySeconds"`) || !strings.Contains(e.Message, "at most 100 digits and an exponent of at most ±400") {
			t.Errorf("%.60s: %v; want INVALID_ARGUMENT naming the number and the bound", value, err)
		}
	}
	if res, err := c.Validate(t.Context(), Subject{Configuration: "app"}, json.RawMessage(`{"currency":"EUR","captureDelaySeconds":1e2}`)); err != nil || res == nil {
		t.Errorf("an ordinary exponent: %v", err)
	}
}

// BenchmarkPathologicalNumbers compares, in one run, checking a value of
// pathological numbers (a hundred 1e999999, or ten of 100,001 digits) against a schema with multipleOf the way
// Validate did before the bound (the validator's exact arithmetic on
// every number) with Validate now (refused by the bound before any
// schema sees it).
func BenchmarkPathologicalNumbers(b *testing.B) {
	schema := `{"type":"array","items":{"type":"number","multipleOf":0.01,"minimum":0}}`
	for _, tc := range []struct {
		name, number string
		n            int
	}{
		{"exponent", "1e999999", 100},
		{"digits", "1" + strings.Repeat("0", 100000), 10}, // 1 MB, the most a value may be
	} {
		value := json.RawMessage("[" + strings.Repeat(tc.number+",", tc.n-1) + tc.number + "]")
		b.Run(tc.name+"/unbounded", func(b *testing.B) {
			doc, err := jsonschema.UnmarshalJSON(strings.NewReader(schema))
			if err != nil {
				b.Fatal(err)
			}
			comp := jsonschema.NewCompiler()
			if err := comp.AddResource("s.json", doc); err != nil {
				b.Fatal(err)
			}
			s, err := comp.Compile("s.json")
			if err != nil {
				b.Fatal(err)
			}
			v, err := jsonschema.UnmarshalJSON(strings.NewReader(string(value)))
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				_ = s.Validate(v)
			}
		})
		b.Run(tc.name+"/Validate", func(b *testing.B) {
			c := &Contract{Service: "bench", compiled: map[string]*compiled{}, configs: []*configuration{{name: "c", file: "s.json"}}}
			doc, _ := jsonschema.UnmarshalJSON(strings.NewReader(schema))
			c.configs[0].doc = doc
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.Validate(b.Context(), Subject{Configuration: "c"}, value); err == nil {
					b.Fatal("a pathological number was checked")
				}
			}
		})
	}
}
