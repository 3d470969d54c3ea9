package reflectcheck

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	rpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/kubepact/kubepact/bundle"
	"github.com/kubepact/kubepact/test/grpcdemo"
)

const inventory = "../../../examples/grpc/inventory"
const protoFile = "interfaces/inventory/v1/inventory.proto"

func loadInventory(t *testing.T) *bundle.Bundle {
	t.Helper()
	b, err := bundle.LoadDir(inventory, nil)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func listen(t *testing.T) net.Listener {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return lis
}

// serveDemo serves the proto of dir (the inventory example, maybe
// edited) with grpcdemo and the given options.
func serveDemo(t *testing.T, dir string, opts *grpcdemo.Options) string {
	t.Helper()
	srv, err := grpcdemo.ServeWith(t.Context(), listen(t), os.DirFS(dir), protoFile, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	return srv.Addr
}

func codesOf(fs []Finding) map[string]string {
	m := map[string]string{}
	for _, f := range fs {
		m[f.Path] = f.Code
	}
	return m
}

// TestMatchingServer: grpcdemo serving the bundle's own proto, with
// reflection v1, or v1alpha only: nothing differs.
func TestMatchingServer(t *testing.T) {
	b := loadInventory(t)
	for _, opts := range []*grpcdemo.Options{{Reflection: true}, {ReflectionV1AlphaOnly: true}} {
		got, err := Check(t.Context(), b, serveDemo(t, inventory, opts), nil)
		if err != nil || len(got) != 0 {
			t.Errorf("reflection %+v: findings %+v, error %v; want none", opts, got, err)
		}
	}
}

// TestDifferentServer: a server built from an edited copy of the proto —
// a method gone, a stream made unary, a field renumbered, a field's type
// changed, a request message swapped, a method added — is reported
// difference by difference.
func TestDifferentServer(t *testing.T) {
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(inventory)); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, protoFile)
	raw, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	edited := string(raw)
	for _, r := range [][2]string{
		{"  rpc DeleteItem(GetItemRequest) returns (google.protobuf.Empty);", "  rpc Extra(GetItemRequest) returns (google.protobuf.Empty);"},
		{"returns (stream Item) {", "returns (Item) {"},
		{"message GetItemRequest {\n  string sku = 1;", "message GetItemRequest {\n  string sku = 9;"},
		{"  int64 quantity = 3;", "  int32 quantity = 3;"},
		{"rpc SetStock(SetStockRequest)", "rpc SetStock(GetItemRequest)"},
	} {
		if !strings.Contains(edited, r[0]) {
			t.Fatalf("the proto has no %q", r[0])
		}
		edited = strings.Replace(edited, r[0], r[1], 1)
	}
	if err := os.WriteFile(p, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := Check(t.Context(), loadInventory(t), serveDemo(t, dir, &grpcdemo.Options{Reflection: true}), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"inventory.v1.Inventory/DeleteItem": CodeMethodMissing,
		"inventory.v1.Inventory/ListItems":  CodeStreamingChanged,
		"inventory.v1.GetItemRequest.sku":   CodeFieldNumber,
		"inventory.v1.Item.quantity":        CodeFieldType,
		"inventory.v1.Inventory/SetStock":   CodeMessageChanged,
		"inventory.v1.Inventory/Extra":      CodeMethodUndeclared,
	}
	have := codesOf(got)
	for path, code := range want {
		if have[path] != code {
			t.Errorf("%s: %q; want %s (all: %+v)", path, have[path], code, got)
		}
	}
	for _, f := range got {
		if f.Warning != (f.Code == CodeMethodUndeclared) || f.Message == "" || f.Interface != "grpc" {
			t.Errorf("finding %+v", f)
		}
	}
}

// hostile serves a reflection v1 service whose answers to a file request
// are answer(); its list names the inventory service.
func hostile(t *testing.T, answer func(ctx context.Context) (*rpb.ServerReflectionResponse, error)) string {
	t.Helper()
	s := grpc.NewServer()
	s.RegisterService(&grpc.ServiceDesc{ServiceName: "grpc.reflection.v1.ServerReflection", HandlerType: (*any)(nil),
		Streams: []grpc.StreamDesc{{StreamName: "ServerReflectionInfo", ServerStreams: true, ClientStreams: true,
			Handler: func(_ any, ss grpc.ServerStream) error {
				for {
					req := &rpb.ServerReflectionRequest{}
					if err := ss.RecvMsg(req); err != nil {
						return nil
					}
					if req.GetListServices() != "" || req.MessageRequest == nil || req.GetFileContainingSymbol() == "" && req.GetFileByFilename() == "" {
						if err := ss.SendMsg(&rpb.ServerReflectionResponse{MessageResponse: &rpb.ServerReflectionResponse_ListServicesResponse{
							ListServicesResponse: &rpb.ListServiceResponse{Service: []*rpb.ServiceResponse{{Name: "inventory.v1.Inventory"}}}}}); err != nil {
							return err
						}
						continue
					}
					resp, err := answer(ss.Context())
					if err != nil {
						return err
					}
					if err := ss.SendMsg(resp); err != nil {
						return err
					}
				}
			}}}}, struct{}{})
	lis := listen(t)
	go func() { _ = s.Serve(lis) }()
	t.Cleanup(s.Stop)
	return lis.Addr().String()
}

func files(fds ...[]byte) *rpb.ServerReflectionResponse {
	return &rpb.ServerReflectionResponse{MessageResponse: &rpb.ServerReflectionResponse_FileDescriptorResponse{
		FileDescriptorResponse: &rpb.FileDescriptorResponse{FileDescriptorProto: fds}}}
}

// TestHostileServer: reflection that stalls ends at the deadline; one
// huge descriptor, too many bytes in all, or too many files end at the
// bounds; a server without reflection says so. Each is an *Error, in
// words, and compares nothing.
func TestHostileServer(t *testing.T) {
	b := loadInventory(t)
	stall := hostile(t, func(ctx context.Context) (*rpb.ServerReflectionResponse, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	})
	huge := hostile(t, func(context.Context) (*rpb.ServerReflectionResponse, error) {
		return files(make([]byte, 200<<10)), nil
	})
	var many [][]byte
	for i := range 40 {
		raw, _ := proto.Marshal(&descriptorpb.FileDescriptorProto{Name: proto.String("f" + strings.Repeat("x", i) + ".proto")})
		many = append(many, raw)
	}
	manyFiles := hostile(t, func(context.Context) (*rpb.ServerReflectionResponse, error) { return files(many...), nil })
	noReflection := serveDemo(t, inventory, nil)
	lis := listen(t)
	nothing := lis.Addr().String()
	_ = lis.Close()

	for _, tc := range []struct {
		name, target string
		opts         *Options
		says         string
	}{
		{"stall", stall, &Options{Timeout: 500 * time.Millisecond}, "did not finish answering reflection within 500ms"},
		{"huge message", huge, &Options{MaxBytes: 64 << 10}, "larger than 65536 bytes"},
		{"too many files", manyFiles, &Options{MaxFiles: 16}, "more than 16 descriptor files"},
		{"no reflection", noReflection, nil, "serves no reflection"},
		{"nothing there", nothing, &Options{Timeout: 5 * time.Second}, "nothing answers gRPC at"},
		{"remote", "10.0.0.7:9090", nil, "not a loopback address"},
	} {
		got, err := Check(t.Context(), b, tc.target, tc.opts)
		var re *Error
		if !errors.As(err, &re) || !strings.Contains(err.Error(), tc.says) || len(got) != 0 {
			t.Errorf("%s: findings %v, error %v; want an *Error saying %q", tc.name, got, err, tc.says)
		}
	}
}
