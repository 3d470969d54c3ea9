package mcp

import (
	"os"
	"runtime"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// TestSDKPatchInEffect checks that a build with hack/sdkpatch (make test,
// make build, test/gobuild) decodes a message without the 32 KiB Decoder
// buffer upstream's internal/json.Unmarshal allocates for each decode. A
// plain go test builds with the go-sdk as upstream ships it, and this test
// then says so and skips: hack/sdkpatch -exec sets KUBEPACT_SDKPATCH for
// the go command it runs.
func TestSDKPatchInEffect(t *testing.T) {
	if os.Getenv("KUBEPACT_SDKPATCH") == "" {
		t.Skip("built with the go-sdk as upstream ships it (plain go test); make test runs with hack/sdkpatch, which sets KUBEPACT_SDKPATCH")
	}
	msg := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"getProduct","arguments":{"productId":"p-0001"}}}`)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range 100 {
		if _, err := jsonrpc.DecodeMessage(msg); err != nil {
			t.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	if per := (after.TotalAlloc - before.TotalAlloc) / 100; per >= 16<<10 {
		t.Errorf("decoding one message allocates %d bytes though KUBEPACT_SDKPATCH says the build is patched; with hack/sdkpatch it stays well under the 32 KiB a Decoder buffer takes (is the go command running in its go.work?)", per)
	}
}
