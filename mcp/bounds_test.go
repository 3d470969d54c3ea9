package mcp

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kubepact/kubepact/internal/openapitools"
)

// writeTree writes files below dir.
func writeTree(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// explosiveBundle is a bundle whose configuration schema recurses
// through two alternatives that both descend: checking a value nested n
// levels deep evaluates 2^n nodes unless the check is stopped (see
// internal/payload's guard). pad adds a file of that many bytes, to weigh
// the bundle.
func explosiveBundle(t testing.TB, dir string, pad int) {
	t.Helper()
	writeTree(t, dir, map[string]string{
		"pacto.yaml": "pactoVersion: \"2.0\"\nservice: {name: explosive, version: 1.0.0}\nconfigurations:\n  - name: open\n    schema: open.json\n",
		"open.json": `{"$defs": {"n": {"anyOf": [
			{"type": "object", "properties": {"a": {"$ref": "#/$defs/n"}}, "required": ["z"]},
			{"type": "object", "properties": {"a": {"$ref": "#/$defs/n"}}}]}},
		 "$ref": "#/$defs/n"}`,
		"docs/pad.txt": strings.Repeat("x", pad),
	})
}

func nestedValue(levels int) json.RawMessage {
	return json.RawMessage(strings.Repeat(`{"a":`, levels) + "{}" + strings.Repeat("}", levels))
}

func toolErr(t testing.TB, res *sdk.CallToolResult) map[string]any {
	t.Helper()
	if !res.IsError {
		t.Fatalf("want an error result, got %s", text(res))
	}
	e, _ := structured(t, res)["error"].(map[string]any)
	return e
}

// TestPayloadCancelledOverHTTP: a payload check that would run for hours
// (2^40 schema evaluations), cancelled by its client over Streamable HTTP
// in either protocol era (notifications/cancelled on 2025-11-25, the POST
// dropped on 2026-07-28), stops: its handler returns CANCELLED, as the
// audit line records, instead of burning a core for as long as the
// check takes.
func TestPayloadCancelledOverHTTP(t *testing.T) {
	ws := t.TempDir()
	explosiveBundle(t, filepath.Join(ws, "explosive"), 0)
	logs := &logSink{}
	s := newTestServer(t, &Options{Transport: TransportHTTP, Workspace: ws, Families: []Family{FamilyPayload}, Logger: logs.logger()})
	url := serveHTTP(t, s)
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		cs, err := httpClient(t.Context(), t, url, version, nil)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() {
			_, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "pacto_validate_payload",
				Arguments: map[string]any{"service": "explosive", "configuration": "open", "payload": nestedValue(40)}})
			done <- err
		}()
		time.Sleep(200 * time.Millisecond) // the check is under way
		cancel()
		t.Logf("%s: the cancelled call returned: %v", version, <-done)
		waitFor(t, version+": the cancelled check's handler to return (its audit line)", func() bool {
			return len(logs.matching(`"tool"="pacto_validate_payload"`)) > 0 && strings.Contains(strings.Join(logs.matching(`"tool"="pacto_validate_payload"`), "\n"), `"code"="CANCELLED"`)
		})
		logs.mu.Lock()
		logs.lines = nil
		logs.mu.Unlock()
	}
}

// TestNumberBoundsInArguments: numbers whose exact value costs more than
// their bytes (1e999999999, 1e-999999, a 200,000-digit integer) are
// refused before anything reads them, as INVALID_ARGUMENT naming where
// the number is and the bound: in a payload to check (the number would
// reach the validator's exact arithmetic) and in a generated tool's
// arguments (it would reach the service as written).
func TestNumberBoundsInArguments(t *testing.T) {
	long := "1" + strings.Repeat("0", 200000)
	cs := connect(t.Context(), t, capabilityServer(t, "../examples/bundles/catalog", &openapitools.Options{BaseURL: demoService(t, nil), AllowWrites: true},
		&Options{Families: []Family{FamilyCapability, FamilyPayload}}))
	for _, n := range []string{"1e999999999", "1e-999999", long} {
		payload := json.RawMessage(`{"sku":"A-1","name":"Lamp","price":{"currency":"EUR","amountMinor":` + n + `}}`)
		e := toolErr(t, callTool(t, cs, "pacto_validate_payload", map[string]any{"service": "catalog", "operation": "createProduct", "payload": payload}))
		if e["code"] != "INVALID_ARGUMENT" || e["field"] != "payload.price.amountMinor" ||
			!strings.Contains(e["message"].(string), "at most 100 digits and an exponent of at most ±400") {
			t.Errorf("payload with %.20s: %v; want INVALID_ARGUMENT at payload.price.amountMinor naming the bound", n, e)
		}
		res := callTool(t, cs, "createProduct", map[string]any{"body": payload})
		out := structured(t, res)
		diags, _ := out["diagnostics"].([]any)
		if !res.IsError || len(diags) != 1 {
			t.Fatalf("createProduct with %.20s: %s", n, text(res))
		}
		d := diags[0].(map[string]any)
		if d["field"] != "body.price.amountMinor" || !strings.Contains(d["message"].(string), "at most 100 digits and an exponent of at most ±400") ||
			!strings.Contains(text(res), "Nothing was sent to the service") {
			t.Errorf("createProduct with %.20s: %v; want one diagnostic at body.price.amountMinor naming the bound", n, d)
		}
	}
	// A number as large as a quantity gets is checked as usual.
	if out := structured(t, callTool(t, cs, "pacto_validate_payload", map[string]any{"service": "catalog", "operation": "createProduct",
		"payload": json.RawMessage(`{"sku":"A-1","name":"Lamp","price":{"currency":"EUR","amountMinor":123456789012345678901234567890}}`)})); out["valid"] == nil {
		t.Errorf("an ordinary large number: %v", out)
	}
}
