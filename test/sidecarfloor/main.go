// Command sidecarfloor is the floor the sidecar is measured against: the
// smallest go-sdk MCP server over Streamable HTTP whose one tool,
// getProduct, does the same GET the catalog example's getProduct does
// (GET <upstream>/products/{productId}) and answers with the body as text.
// It has no bundle, no argument checking beyond the SDK's schema, no audit
// line and no limits: whatever the sidecar costs above it is kubepact's.
//
//	go run ./test/sidecarfloor -upstream http://127.0.0.1:8080 -addr 127.0.0.1:9090
//
// With -stateless-era it also serves the 2026-07-28 era, as kubepact
// does: a request whose Mcp-Protocol-Version header is that era or later
// goes to a stateless go-sdk handler (its defaults otherwise), every other
// one to the stateful handler. Without it a client asking for that era
// falls back to a session.
//
// It imports nothing from kubepact.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/url"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

type productArgs struct {
	ProductID string `json:"productId" jsonschema:"the product's id"`
}

func main() {
	upstream := flag.String("upstream", "", "base URL of the service the tool calls")
	addr := flag.String("addr", "127.0.0.1:0", "address to serve /mcp on")
	statelessEra := flag.Bool("stateless-era", false, "serve requests of the 2026-07-28 era (by their Mcp-Protocol-Version header) statelessly, as kubepact does")
	flag.Parse()
	if *upstream == "" {
		log.Fatal("sidecarfloor: -upstream is required")
	}
	// The same client as the sidecar's (internal/openapitools): idle
	// connections kept per host for as many callers as it serves at once,
	// not net/http's default of 2, which at 16 concurrent calls closes and
	// reopens a connection to the upstream on most calls.
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 64
	client := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	srv := sdk.NewServer(&sdk.Implementation{Name: "sidecarfloor", Version: "v0"}, nil)
	sdk.AddTool(srv, &sdk.Tool{Name: "getProduct", Description: "Get one product by id."},
		func(ctx context.Context, _ *sdk.CallToolRequest, in productArgs) (*sdk.CallToolResult, any, error) {
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, *upstream+"/products/"+url.PathEscape(in.ProductID), nil)
			if err != nil {
				return nil, nil, fmt.Errorf("building the request: %w", err)
			}
			resp, err := client.Do(req)
			if err != nil {
				return nil, nil, fmt.Errorf("calling the upstream: %w", err)
			}
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			if err != nil {
				return nil, nil, fmt.Errorf("reading the upstream's answer: %w", err)
			}
			return &sdk.CallToolResult{
				IsError: resp.StatusCode >= 400,
				Content: []sdk.Content{&sdk.TextContent{Text: string(body)}},
			}, nil, nil
		})
	mux := http.NewServeMux()
	getServer := func(*http.Request) *sdk.Server { return srv }
	var handler http.Handler = sdk.NewStreamableHTTPHandler(getServer, nil)
	if *statelessEra {
		stateful, stateless := handler, sdk.NewStreamableHTTPHandler(getServer, &sdk.StreamableHTTPOptions{Stateless: true})
		handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Mcp-Protocol-Version") >= "2026-07-28" {
				stateless.ServeHTTP(w, r)
				return
			}
			stateful.ServeHTTP(w, r)
		})
	}
	mux.Handle("/mcp", handler)
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	log.Printf("sidecarfloor: serving http://%s/mcp", *addr)
	hs := &http.Server{Addr: *addr, Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	log.Fatal(hs.ListenAndServe())
}
