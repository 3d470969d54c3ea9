package authoring

import (
	"testing"
	"testing/fstest"

	"github.com/kubepact/kubepact/internal/protofiles"
)

// TestGRPCStubCompiles: the .proto scaffolded for a grpc interface
// compiles (internal/protofiles, as pacto_check and the gRPC tools read
// it) and declares one unary RPC, whatever the service and interface are
// called — names with dashes, digits first, keywords, or the stub's own
// message names.
func TestGRPCStubCompiles(t *testing.T) {
	for _, tc := range []struct{ service, iface string }{
		{"orders", "grpc-api"},
		{"9lives", "2fast"},
		{"my-service", "message"},
		{"service", "rpc"},
		{"check", "check-request"},
		{"x", "check-response"},
		{"Ünïcode", "---"},
	} {
		t.Run(tc.service+"/"+tc.iface, func(t *testing.T) {
			ref := interfaceRef(tc.iface, "grpc")
			src, err := stubSpec(tc.service, "1.0.0", InterfaceSpec{Name: tc.iface, Type: "grpc"})
			if err != nil {
				t.Fatal(err)
			}
			files, err := protofiles.Compile(t.Context(), fstest.MapFS{ref: {Data: src}}, ref, protofiles.Limits{})
			if err != nil {
				t.Fatalf("the stub does not compile: %v\n%s", err, src)
			}
			svcs := files[0].Services()
			if svcs.Len() != 1 || svcs.Get(0).Methods().Len() != 1 {
				t.Fatalf("the stub declares %d services:\n%s", svcs.Len(), src)
			}
			m := svcs.Get(0).Methods().Get(0)
			if m.IsStreamingClient() || m.IsStreamingServer() {
				t.Errorf("the stub's RPC streams:\n%s", src)
			}
		})
	}
}
