package openapitools

import (
	"fmt"
	"strings"
	"testing"
	"testing/fstest"
)

// TestHopByHopHeaderParamsAreRefused: an operation that declares a
// hop-by-hop or framing header as a header parameter gets no tool, with a
// reason naming the header (invoke's TestOrdinaryHeaderParamIsSent sends
// the ordinary one beside them).
func TestHopByHopHeaderParamsAreRefused(t *testing.T) {
	names := []string{"Connection", "Keep-Alive", "Transfer-Encoding", "TE", "Trailer", "Upgrade", "Proxy-Authorization", "Proxy-Connection", "host", "Content-Length"}
	var doc strings.Builder
	doc.WriteString("openapi: 3.0.3\ninfo: {title: h, version: '1'}\nservers: [{url: 'http://127.0.0.1:9'}]\npaths:\n")
	for i, n := range append(names, "X-Trace") {
		fmt.Fprintf(&doc, "  /h%d:\n    get:\n      operationId: op%d\n      parameters: [{name: %s, in: header, schema: {type: string}}]\n      responses: {'200': {description: ok}}\n", i, i, n)
	}
	c, err := project(t.Context(), fstest.MapFS{"h.yaml": {Data: []byte(doc.String())}}, []spec{{name: "h", file: "h.yaml"}}, &Options{BaseURL: "http://127.0.0.1:9"})
	if err != nil {
		t.Fatal(err)
	}
	w := withheldBy(c, WithheldUnsupported)
	for i, n := range names {
		if r := w[fmt.Sprintf("op%d", i)]; !strings.Contains(r, fmt.Sprintf("header parameter %q is a hop-by-hop or framing header", n)) {
			t.Errorf("op%d (header %s): withheld %q; want UNSUPPORTED naming the header", i, n, r)
		}
	}
	last := fmt.Sprintf("op%d", len(names))
	if len(c.Tools) != 1 || c.Tools[0].Name != last {
		t.Fatalf("tools %v; want only %s (X-Trace)", toolNames(c), last)
	}
	// Describing the contract (payload checks) is not calling it: the
	// shapes of such an operation are still built.
	p := &projector{opts: (&Options{AllowWrites: true}).withDefaults(), shapesOnly: true}
	ops, _, err := p.projectSpec(fstest.MapFS{"h.yaml": {Data: []byte(doc.String())}}, spec{name: "h", file: "h.yaml"}, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, op := range ops {
		if op.err != nil {
			t.Errorf("shape of %s: %v", op.name, op.err)
		}
	}
}
