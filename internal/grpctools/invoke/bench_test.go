package invoke

import (
	"encoding/json"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/kubepact/kubepact/internal/grpctools"
)

// BenchmarkCallOverhead is the per-call cost of a gRPC tool against the
// same unary call made directly with grpc-go, side by side in one run, on
// one real server on loopback:
//
//	go test ./internal/grpctools/invoke -run '^$' -bench CallOverhead -benchtime 2000x -count 3
//
// direct: a prebuilt dynamic request, conn.Invoke, nothing decoded to
// JSON. tool: the JSON arguments decoded into the request (protojson),
// the call, the response printed as proto3 JSON (what a tool returns).
func BenchmarkCallOverhead(b *testing.B) {
	srv := startInventory(b)
	c, cl := project(b, grpctools.Options{Target: srv.Addr})
	tl := c.Tool("Inventory_GetItem")
	args := json.RawMessage(`{"sku":"ab-1","readMask":"sku,quantity"}`)

	b.Run("direct", func(b *testing.B) {
		conn, err := grpc.NewClient("passthrough:///"+srv.Addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			b.Fatal(err)
		}
		defer conn.Close()
		md := tl.Method()
		req := dynamicpb.NewMessage(md.Input())
		req.Set(md.Input().Fields().ByName("sku"), protoreflect.ValueOfString("ab-1"))
		b.ReportAllocs()
		for b.Loop() {
			resp := dynamicpb.NewMessage(md.Output())
			if err := conn.Invoke(b.Context(), tl.RPC, req, resp); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("tool", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			res, err := cl.Call(b.Context(), tl, args)
			if err != nil || res.Code != "OK" {
				b.Fatal(err, res)
			}
		}
	})
}
