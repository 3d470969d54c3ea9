// Package grpcdemo is a small, real gRPC implementation of the
// inventory.v1.Inventory service that the gRPC tools' test bundle declares
// (examples/grpc/inventory). It is a grpc-go server on a
// listener, with dynamic messages built from the bundle's .proto at start
// (protocompile + dynamicpb; there is no protoc here, so no generated
// code). The grpctools, mcp and client tests and the benchmarks call it.
//
// Its behaviour is keyed by the request: sku "missing" answers NOT_FOUND
// with google.rpc ResourceInfo and BadRequest details; "slow" waits for
// the caller's deadline; "huge" answers a 2 MiB item; "echo-metadata"
// puts the authorization metadata it got in the item's note; ListItems
// sends count items of note_bytes each, or, on shelf "forever", until the
// caller stops.
//
// It must not import anything of kubepact: it stands in for the service a
// contract describes, which knows nothing of kubepact.
package grpcdemo

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"net"
	"path"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/bufbuild/protocompile"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/reflection"
	reflectionv1 "google.golang.org/grpc/reflection/grpc_reflection_v1"
	reflectionv1alpha "google.golang.org/grpc/reflection/grpc_reflection_v1alpha"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/dynamicpb"
)

// Server is a running demo service.
type Server struct {
	// Addr is host:port it listens on.
	Addr string

	srv          *grpc.Server
	mu           sync.Mutex
	calls        map[string]int
	lastMD       metadata.MD
	streamsEnded atomic.Int32
	cancelled    atomic.Int32
}

// Serve compiles the .proto at file in fsys (imports relative to its
// directory, plus the standard imports), serves its Inventory service on
// lis in the background, and returns. Stop ends it.
func Serve(ctx context.Context, lis net.Listener, fsys fs.FS, file string) (*Server, error) {
	return ServeWith(ctx, lis, fsys, file, nil)
}

// Options are what ServeWith adds to Serve; nil means none.
type Options struct {
	// Reflection registers the gRPC reflection service (v1 and v1alpha)
	// describing the compiled files.
	Reflection bool
	// ReflectionV1AlphaOnly registers reflection v1alpha only, as an
	// older server does.
	ReflectionV1AlphaOnly bool
}

// ServeWith is Serve with opts.
func ServeWith(ctx context.Context, lis net.Listener, fsys fs.FS, file string, opts *Options) (*Server, error) {
	if opts == nil {
		opts = &Options{}
	}
	dir := path.Dir(file)
	c := protocompile.Compiler{Resolver: protocompile.WithStandardImports(&protocompile.SourceResolver{
		Accessor: func(p string) (io.ReadCloser, error) {
			return fsys.Open(path.Join(dir, p))
		},
	})}
	files, err := c.Compile(ctx, path.Base(file))
	if err != nil {
		return nil, fmt.Errorf("compiling %s: %w", file, err)
	}
	sd := files[0].Services().ByName("Inventory")
	if sd == nil {
		return nil, fmt.Errorf("%s declares no Inventory service", file)
	}
	s := &Server{Addr: lis.Addr().String(), calls: map[string]int{}}
	s.srv = grpc.NewServer(grpc.MaxSendMsgSize(64 << 20))
	s.srv.RegisterService(s.desc(sd), struct{}{})
	if opts.Reflection || opts.ReflectionV1AlphaOnly {
		reg := &protoregistry.Files{}
		var add func(f protoreflect.FileDescriptor)
		add = func(f protoreflect.FileDescriptor) {
			if _, err := reg.FindFileByPath(f.Path()); err == nil {
				return
			}
			for i := range f.Imports().Len() {
				add(f.Imports().Get(i).FileDescriptor)
			}
			_ = reg.RegisterFile(f)
		}
		add(files[0])
		ro := reflection.ServerOptions{Services: s.srv, DescriptorResolver: reg, ExtensionResolver: &protoregistry.Types{}}
		if !opts.ReflectionV1AlphaOnly {
			reflectionv1.RegisterServerReflectionServer(s.srv, reflection.NewServerV1(ro))
		}
		reflectionv1alpha.RegisterServerReflectionServer(s.srv, reflection.NewServer(ro))
	}
	go func() { _ = s.srv.Serve(lis) }()
	return s, nil
}

// Stop stops the server and closes its connections.
func (s *Server) Stop() { s.srv.Stop() }

// Calls is how many requests method (e.g. "GetItem") received.
func (s *Server) Calls(method string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[method]
}

// LastMetadata is the metadata of the last request.
func (s *Server) LastMetadata() metadata.MD {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastMD.Copy()
}

// StreamsEnded counts the server-streaming handlers that returned.
func (s *Server) StreamsEnded() int { return int(s.streamsEnded.Load()) }

// Cancelled counts the calls that ended because the caller went away or
// its deadline passed.
func (s *Server) Cancelled() int { return int(s.cancelled.Load()) }

func (s *Server) count(ctx context.Context, method string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls[method]++
	s.lastMD, _ = metadata.FromIncomingContext(ctx)
}

// desc is the service's handlers over dynamic messages: unary and
// server-streaming methods (the tools call no others).
func (s *Server) desc(sd protoreflect.ServiceDescriptor) *grpc.ServiceDesc {
	desc := &grpc.ServiceDesc{ServiceName: string(sd.FullName()), HandlerType: (*any)(nil)}
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
				s.count(ctx, name)
				return s.unary(ctx, m, in)
			}})
		case m.IsStreamingServer() && !m.IsStreamingClient():
			desc.Streams = append(desc.Streams, grpc.StreamDesc{StreamName: name, ServerStreams: true, Handler: func(_ any, ss grpc.ServerStream) error {
				defer s.streamsEnded.Add(1)
				in := dynamicpb.NewMessage(m.Input())
				if err := ss.RecvMsg(in); err != nil {
					return err
				}
				s.count(ss.Context(), name)
				return s.list(ss, m, in)
			}})
		}
	}
	return desc
}

func field(m protoreflect.Message, name string) protoreflect.FieldDescriptor {
	return m.Descriptor().Fields().ByName(protoreflect.Name(name))
}

// item is an Item with fields the JSON mapping prints specially.
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

func (s *Server) unary(ctx context.Context, m protoreflect.MethodDescriptor, in *dynamicpb.Message) (any, error) {
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
		return nil, status.FromContextError(ctx.Err()).Err()
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

func (s *Server) list(ss grpc.ServerStream, m protoreflect.MethodDescriptor, in *dynamicpb.Message) error {
	shelf := in.Get(field(in, "shelf")).String()
	n := int(in.Get(field(in, "count")).Uint())
	note := int(in.Get(field(in, "note_bytes")).Uint())
	for i := 0; shelf == "forever" || i < n; i++ {
		err := ss.SendMsg(item(m.Output(), shelf, note))
		if ss.Context().Err() != nil {
			s.cancelled.Add(1)
			return status.FromContextError(ss.Context().Err()).Err()
		}
		if err != nil {
			return err
		}
	}
	return nil
}
