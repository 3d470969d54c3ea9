package invoke

import (
	"context"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/kubepact/kubepact/bundle"
	"github.com/kubepact/kubepact/internal/grpctools"
)

// inventory is a real grpc-go server on loopback serving the test
// bundle's Inventory service with dynamic messages (no generated code):
// what the tools call.
type inventory struct {
	addr string
	// calls counts the requests each method received; streamsEnded counts
	// server-streaming handlers that returned.
	mu           sync.Mutex
	calls        map[string]int
	lastMD       metadata.MD
	streamsEnded atomic.Int32
	cancelled    atomic.Int32
}

func (s *inventory) count(ctx context.Context, method string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls[method]++
	s.lastMD, _ = metadata.FromIncomingContext(ctx)
}

func (s *inventory) callsTo(method string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[method]
}

func loadBundle(t testing.TB) *bundle.Bundle {
	t.Helper()
	b, err := bundle.LoadDir("../testdata/inventory", nil)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// startInventory serves the Inventory service of the test bundle on a
// loopback port until the test ends.
func startInventory(t testing.TB) *inventory {
	t.Helper()
	files, err := grpctools.Compile(t.Context(), loadBundle(t).FS, "interfaces/inventory/v1/inventory.proto", grpctools.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	sd := files[0].Services().ByName("Inventory")
	inv := &inventory{calls: map[string]int{}}
	desc := grpc.ServiceDesc{ServiceName: string(sd.FullName()), HandlerType: (*any)(nil)}
	for i := range sd.Methods().Len() {
		m := sd.Methods().Get(i)
		name := string(m.Name())
		switch {
		case !m.IsStreamingServer() && !m.IsStreamingClient():
			desc.Methods = append(desc.Methods, grpc.MethodDesc{MethodName: name, Handler: func(_ any, ctx context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
				in := dynamicpb.NewMessage(m.Input())
				if err := dec(in); err != nil {
					return nil, err
				}
				inv.count(ctx, name)
				return inv.unary(ctx, m, in)
			}})
		case m.IsStreamingServer() && !m.IsStreamingClient():
			desc.Streams = append(desc.Streams, grpc.StreamDesc{StreamName: name, ServerStreams: true, Handler: func(_ any, ss grpc.ServerStream) error {
				defer inv.streamsEnded.Add(1)
				in := dynamicpb.NewMessage(m.Input())
				if err := ss.RecvMsg(in); err != nil {
					return err
				}
				inv.count(ss.Context(), name)
				return inv.list(ss, m, in)
			}})
		}
	}
	srv := grpc.NewServer(grpc.MaxSendMsgSize(64 << 20))
	srv.RegisterService(&desc, struct{}{})
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	inv.addr = lis.Addr().String()
	return inv
}

func field(m protoreflect.Message, name string) protoreflect.FieldDescriptor {
	return m.Descriptor().Fields().ByName(protoreflect.Name(name))
}

// item is an Item with every kind of field the JSON mapping prints
// specially.
func item(md protoreflect.MessageDescriptor, sku string, noteBytes int) *dynamicpb.Message {
	it := dynamicpb.NewMessage(md)
	it.Set(field(it, "sku"), protoreflect.ValueOfString(sku))
	it.Set(field(it, "quantity"), protoreflect.ValueOfInt64(9007199254740993)) // 2^53+1: a JSON number would lose it
	it.Set(field(it, "condition"), protoreflect.ValueOfEnum(1))
	it.Set(field(it, "thumbnail"), protoreflect.ValueOfBytes([]byte{0xff, 0x00}))
	it.Set(field(it, "shelf"), protoreflect.ValueOfString("A1"))
	if noteBytes > 0 {
		it.Set(field(it, "note"), protoreflect.ValueOfString(strings.Repeat("n", noteBytes)))
	}
	return it
}

func (s *inventory) unary(ctx context.Context, m protoreflect.MethodDescriptor, in *dynamicpb.Message) (any, error) {
	sku := ""
	if f := field(in, "sku"); f != nil {
		sku = in.Get(f).String()
	}
	switch sku {
	case "missing":
		st, _ := status.New(codes.NotFound, "no item missing").WithDetails(
			&errdetails.ResourceInfo{ResourceType: "inventory.v1.Item", ResourceName: "missing", Description: "never stocked"},
			&errdetails.BadRequest{FieldViolations: []*errdetails.BadRequest_FieldViolation{{Field: "sku", Description: "unknown sku"}}},
		)
		return nil, st.Err()
	case "slow":
		<-ctx.Done()
		s.cancelled.Add(1)
		return nil, ctx.Err()
	case "huge":
		return item(m.Output(), sku, 2<<20), nil
	case "echo-metadata":
		it := item(m.Output(), sku, 0)
		md, _ := metadata.FromIncomingContext(ctx)
		it.Set(field(it, "note"), protoreflect.ValueOfString(strings.Join(md.Get("authorization"), ",")))
		return it, nil
	}
	if m.Output().FullName() == "google.protobuf.Empty" {
		return dynamicpb.NewMessage(m.Output()), nil
	}
	return item(m.Output(), sku, 0), nil
}

func (s *inventory) list(ss grpc.ServerStream, m protoreflect.MethodDescriptor, in *dynamicpb.Message) error {
	shelf := in.Get(field(in, "shelf")).String()
	n := int(in.Get(field(in, "count")).Uint())
	note := int(in.Get(field(in, "note_bytes")).Uint())
	for i := 0; shelf == "forever" || i < n; i++ {
		err := ss.SendMsg(item(m.Output(), shelf, note))
		if ss.Context().Err() != nil {
			s.cancelled.Add(1)
			return ss.Context().Err()
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// project projects the test bundle against target with opts.
func project(t testing.TB, opts grpctools.Options) (*grpctools.Capability, *Client) {
	t.Helper()
	c, err := grpctools.Project(t.Context(), loadBundle(t), &opts)
	if err != nil {
		t.Fatal(err)
	}
	cl := NewClient(c)
	t.Cleanup(func() { _ = cl.Close() })
	return c, cl
}

// waitFor polls cond for up to 5 s (the server side ends a cancelled
// stream on its own goroutine).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}
