// Package reflectcheck compares a bundle's gRPC interfaces, compiled from
// its .proto files, with what a running server's reflection service
// (grpc.reflection.v1, else v1alpha) says it serves: a service or method
// the server lacks, a changed streaming kind, another request or
// response message, and fields whose number, type or cardinality differ.
// It backs `kubepact check --grpc-reflect`.
//
// Reflection is a cross-check only: tools are never built from it (the
// bundle's .proto is the pinned truth, see internal/grpctools). The server
// is untrusted: the exchange has a deadline, and the descriptors it sends
// are bounded in bytes and files.
//
// It imports bundle and internal/grpctools; no MCP, no Kubernetes.
package reflectcheck

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	rpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/kubepact/kubepact/bundle"
	"github.com/kubepact/kubepact/internal/grpctools"
	"github.com/kubepact/kubepact/internal/netx"
)

// Finding codes.
const (
	CodeServiceMissing   = "GRPC_REFLECT_SERVICE_MISSING"   // the server does not list a service the bundle declares
	CodeMethodMissing    = "GRPC_REFLECT_METHOD_MISSING"    // the server's service lacks a method the bundle declares
	CodeStreamingChanged = "GRPC_REFLECT_STREAMING_CHANGED" // client or server streaming differs
	CodeMessageChanged   = "GRPC_REFLECT_MESSAGE_CHANGED"   // the request or response message type differs
	CodeFieldMissing     = "GRPC_REFLECT_FIELD_MISSING"     // a field of the bundle's message is not in the server's
	CodeFieldNumber      = "GRPC_REFLECT_FIELD_NUMBER"      // a field has another number on the server
	CodeFieldType        = "GRPC_REFLECT_FIELD_TYPE"        // a field has another type or cardinality on the server
	CodeMethodUndeclared = "GRPC_REFLECT_METHOD_UNDECLARED" // a warning: the server's service has a method the bundle does not declare
)

// Defaults applied to zero fields of [Options].
const (
	DefaultTimeout  = 10 * time.Second
	DefaultMaxBytes = 8 << 20
	DefaultMaxFiles = 256
)

// Options bound the exchange with the server; nil means the defaults.
type Options struct {
	// Timeout bounds the whole exchange (default 10 s).
	Timeout time.Duration
	// MaxBytes bounds the descriptors the server sends, in all (default
	// 8 MiB); one message is bounded by it too.
	MaxBytes int
	// MaxFiles bounds the descriptor files the server sends (default 256).
	MaxFiles int
}

// Finding is one difference; Path names the service, method or field
// ("inventory.v1.Inventory/GetItem", "inventory.v1.Item.quantity").
type Finding struct {
	Interface string
	Path      string
	Code      string
	Message   string
	// Warning: the difference does not break the bundle's tools.
	Warning bool
}

// Error says why reflection could not be used: the check is not made.
type Error struct{ msg string }

func (e *Error) Error() string { return e.msg }

// Check compiles b's grpc interfaces and compares each with what the
// reflection service at target (host:port, plaintext HTTP/2, loopback
// only) reports. It returns an *Error when the server cannot be asked
// (nothing there, no reflection service, a stall past the deadline,
// descriptors past the bounds), and an error when a .proto does not
// compile (pacto_check and kubepact check report that one already).
func Check(ctx context.Context, b *bundle.Bundle, target string, opts *Options) ([]Finding, error) {
	o := Options{}
	if opts != nil {
		o = *opts
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	if o.MaxFiles <= 0 {
		o.MaxFiles = DefaultMaxFiles
	}
	host, port, err := net.SplitHostPort(target)
	if err != nil || host == "" || port == "" {
		return nil, &Error{fmt.Sprintf("the reflection target %q is not host:port (e.g. 127.0.0.1:9090)", target)}
	}
	if !netx.IsLoopbackHost(host) {
		return nil, &Error{fmt.Sprintf("the reflection target %q is not a loopback address: reflection is asked over plaintext HTTP/2, so only 127.0.0.1, ::1 or localhost are accepted (port-forward a remote server first)", target)}
	}
	if b.Contract == nil {
		return nil, fmt.Errorf("bundle %s: the contract does not parse: %w", b.Source, b.ParseErr)
	}
	type iface struct {
		name     string
		services []protoreflect.ServiceDescriptor
	}
	var ifaces []iface
	for _, in := range b.Contract.Interfaces {
		if in.Type != "grpc" {
			continue
		}
		files, err := grpctools.Compile(ctx, b.FS, in.Ref, grpctools.Limits{})
		if err != nil {
			return nil, fmt.Errorf("interface %s: %w", in.Name, err)
		}
		it := iface{name: in.Name}
		for _, f := range files {
			for i := range f.Services().Len() {
				it.services = append(it.services, f.Services().Get(i))
			}
		}
		ifaces = append(ifaces, it)
	}
	if len(ifaces) == 0 {
		return nil, &Error{fmt.Sprintf("bundle %s declares no grpc interface: --grpc-reflect has nothing to compare", b.Source)}
	}

	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	conn, err := grpc.NewClient("passthrough:///"+target,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(o.MaxBytes)),
		grpc.WithUserAgent("kubepact"))
	if err != nil {
		return nil, &Error{fmt.Sprintf("the reflection target %s is not usable: %v", target, err)}
	}
	defer func() { _ = conn.Close() }()
	r, err := newReflector(ctx, conn, target, &o)
	if err != nil {
		return nil, err
	}
	defer r.close()
	listed, err := r.listServices()
	if err != nil {
		return nil, err
	}
	var out []Finding
	for _, it := range ifaces {
		seen := map[protoreflect.FullName]bool{} // messages compared: each once per interface
		for _, sd := range it.services {
			name := string(sd.FullName())
			if !slices.Contains(listed, name) {
				out = append(out, Finding{Interface: it.name, Path: name, Code: CodeServiceMissing,
					Message: fmt.Sprintf("the server's reflection does not list %s (it lists %s)", name, strings.Join(listed, ", "))})
				continue
			}
			theirs, err := r.service(name)
			if err != nil {
				return nil, err
			}
			out = append(out, compareService(it.name, sd, theirs, seen)...)
		}
	}
	return out, nil
}

// compareService compares the bundle's service with the server's; seen
// holds the messages compared already.
func compareService(iface string, ours, theirs protoreflect.ServiceDescriptor, seen map[protoreflect.FullName]bool) []Finding {
	var out []Finding
	add := func(path, code, msg string, warning bool) {
		out = append(out, Finding{Interface: iface, Path: path, Code: code, Message: msg, Warning: warning})
	}
	for i := range ours.Methods().Len() {
		m := ours.Methods().Get(i)
		path := string(ours.FullName()) + "/" + string(m.Name())
		t := theirs.Methods().ByName(m.Name())
		if t == nil {
			add(path, CodeMethodMissing, fmt.Sprintf("the server's %s has no method %s, which the bundle declares", ours.FullName(), m.Name()), false)
			continue
		}
		if kind(m) != kind(t) {
			add(path, CodeStreamingChanged, fmt.Sprintf("the bundle declares %s %s, the server serves it %s", m.Name(), kind(m), kind(t)), false)
		}
		for _, side := range []struct {
			what         string
			ours, theirs protoreflect.MessageDescriptor
		}{{"request", m.Input(), t.Input()}, {"response", m.Output(), t.Output()}} {
			if side.ours.FullName() != side.theirs.FullName() {
				add(path, CodeMessageChanged, fmt.Sprintf("the %s message is %s in the bundle and %s on the server", side.what, side.ours.FullName(), side.theirs.FullName()), false)
				continue
			}
			out = append(out, compareMessage(iface, side.ours, side.theirs, seen)...)
		}
	}
	for i := range theirs.Methods().Len() {
		if m := theirs.Methods().Get(i); ours.Methods().ByName(m.Name()) == nil {
			add(string(ours.FullName())+"/"+string(m.Name()), CodeMethodUndeclared,
				fmt.Sprintf("the server's %s has a method %s the bundle does not declare (no tool calls it)", ours.FullName(), m.Name()), true)
		}
	}
	return out
}

// compareMessage compares fields by name, into nested messages of the
// same name; seen makes each message compared once (and stops
// recursion).
func compareMessage(iface string, ours, theirs protoreflect.MessageDescriptor, seen map[protoreflect.FullName]bool) []Finding {
	if seen[ours.FullName()] {
		return nil
	}
	seen[ours.FullName()] = true
	var out []Finding
	for i := range ours.Fields().Len() {
		f := ours.Fields().Get(i)
		path := string(f.FullName())
		t := theirs.Fields().ByName(f.Name())
		if t == nil {
			out = append(out, Finding{Interface: iface, Path: path, Code: CodeFieldMissing,
				Message: fmt.Sprintf("the server's %s has no field %s (number %d in the bundle): the server ignores what the bundle sends there", theirs.FullName(), f.Name(), f.Number())})
			continue
		}
		if f.Number() != t.Number() {
			out = append(out, Finding{Interface: iface, Path: path, Code: CodeFieldNumber,
				Message: fmt.Sprintf("field %s is number %d in the bundle and %d on the server: the two read each other's bytes as other fields", f.Name(), f.Number(), t.Number())})
		}
		if a, b := fieldType(f), fieldType(t); a != b {
			out = append(out, Finding{Interface: iface, Path: path, Code: CodeFieldType,
				Message: fmt.Sprintf("field %s is %s in the bundle and %s on the server", f.Name(), a, b)})
			continue
		}
		if f.Message() != nil && t.Message() != nil && !f.IsMap() {
			out = append(out, compareMessage(iface, f.Message(), t.Message(), seen)...)
		}
	}
	return out
}

func kind(m protoreflect.MethodDescriptor) string {
	switch {
	case m.IsStreamingClient() && m.IsStreamingServer():
		return "bidirectional-streaming"
	case m.IsStreamingClient():
		return "client-streaming"
	case m.IsStreamingServer():
		return "server-streaming"
	}
	return "unary"
}

// fieldType is a field's cardinality and type as proto writes it.
func fieldType(f protoreflect.FieldDescriptor) string {
	if f.IsMap() {
		return fmt.Sprintf("map<%s, %s>", fieldType(f.MapKey()), fieldType(f.MapValue()))
	}
	t := f.Kind().String()
	switch f.Kind() {
	case protoreflect.MessageKind, protoreflect.GroupKind:
		t = string(f.Message().FullName())
	case protoreflect.EnumKind:
		t = string(f.Enum().FullName())
	}
	if f.Cardinality() == protoreflect.Repeated {
		return "repeated " + t
	}
	return t
}

// reflector is one reflection stream, v1 or v1alpha (their messages are
// the same on the wire, so v1's types serve both).
type reflector struct {
	target string
	opts   *Options
	stream grpc.ClientStream
	cancel context.CancelFunc
	files  map[string]*descriptorpb.FileDescriptorProto
	bytes  int
}

var (
	methodV1      = "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo"
	methodV1Alpha = "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo"
)

func newReflector(ctx context.Context, conn *grpc.ClientConn, target string, o *Options) (*reflector, error) {
	r := &reflector{target: target, opts: o, files: map[string]*descriptorpb.FileDescriptorProto{}}
	for _, method := range []string{methodV1, methodV1Alpha} {
		sctx, cancel := context.WithCancel(ctx)
		s, err := conn.NewStream(sctx, &grpc.StreamDesc{ServerStreams: true, ClientStreams: true}, method)
		if err != nil {
			cancel()
			return nil, r.failed(ctx, err)
		}
		r.stream, r.cancel = s, cancel
		_, err = r.ask(&rpb.ServerReflectionRequest{MessageRequest: &rpb.ServerReflectionRequest_ListServices{}})
		if status.Code(err) == codes.Unimplemented && method == methodV1 {
			cancel()
			continue // an older server: v1alpha
		}
		if err != nil {
			cancel()
			return nil, r.failed(ctx, err)
		}
		return r, nil // listServices asks again, on this stream
	}
	return nil, &Error{fmt.Sprintf("the server at %s serves no reflection (neither grpc.reflection.v1 nor v1alpha): register it in the server to cross-check", target)}
}

func (r *reflector) close() {
	if r.cancel != nil {
		r.cancel()
	}
}

// failed words a failure of the exchange.
func (r *reflector) failed(ctx context.Context, err error) error {
	var re *Error
	if errors.As(err, &re) {
		return err
	}
	st, _ := status.FromError(err)
	switch {
	case st.Code() == codes.DeadlineExceeded || errors.Is(ctx.Err(), context.DeadlineExceeded):
		return &Error{fmt.Sprintf("the server at %s did not finish answering reflection within %s: nothing was compared", r.target, r.opts.Timeout)}
	case st.Code() == codes.Unimplemented:
		return &Error{fmt.Sprintf("the server at %s serves no reflection (neither grpc.reflection.v1 nor v1alpha): register it in the server to cross-check", r.target)}
	case st.Code() == codes.ResourceExhausted:
		return &Error{fmt.Sprintf("the server at %s sent a reflection answer larger than %d bytes (the bound): nothing was compared", r.target, r.opts.MaxBytes)}
	case st.Code() == codes.Unavailable:
		return &Error{fmt.Sprintf("nothing answers gRPC at %s: start the server, or point --grpc-reflect at where it runs", r.target)}
	}
	return &Error{fmt.Sprintf("the reflection exchange with %s failed: %s", r.target, st.Message())}
}

// ask sends one request and reads its answer; an error answer is an
// error.
func (r *reflector) ask(req *rpb.ServerReflectionRequest) (*rpb.ServerReflectionResponse, error) {
	if err := r.stream.SendMsg(req); err != nil {
		_, err = r.recv() // the stream's status says why
		return nil, err
	}
	return r.recv()
}

func (r *reflector) recv() (*rpb.ServerReflectionResponse, error) {
	resp := &rpb.ServerReflectionResponse{}
	if err := r.stream.RecvMsg(resp); err != nil {
		return nil, err
	}
	if e := resp.GetErrorResponse(); e != nil {
		return resp, status.Error(codes.Code(e.GetErrorCode()), e.GetErrorMessage())
	}
	return resp, nil
}

func (r *reflector) listServices() ([]string, error) {
	resp, err := r.ask(&rpb.ServerReflectionRequest{MessageRequest: &rpb.ServerReflectionRequest_ListServices{}})
	if err != nil {
		return nil, r.failed(r.stream.Context(), err)
	}
	var out []string
	for _, s := range resp.GetListServicesResponse().GetService() {
		out = append(out, s.GetName())
	}
	slices.Sort(out)
	return out, nil
}

// service asks for the file declaring name and the files it imports, and
// returns the server's descriptor of the service.
func (r *reflector) service(name string) (protoreflect.ServiceDescriptor, error) {
	resp, err := r.ask(&rpb.ServerReflectionRequest{MessageRequest: &rpb.ServerReflectionRequest_FileContainingSymbol{FileContainingSymbol: name}})
	if err != nil {
		if status.Code(err) == codes.NotFound {
			return nil, &Error{fmt.Sprintf("the server at %s lists %s but its reflection has no file for it", r.target, name)}
		}
		return nil, r.failed(r.stream.Context(), err)
	}
	if err := r.keep(resp); err != nil {
		return nil, err
	}
	// Imports the server did not send on this stream yet, asked by name.
	for {
		missing := r.missingImport()
		if missing == "" {
			break
		}
		resp, err := r.ask(&rpb.ServerReflectionRequest{MessageRequest: &rpb.ServerReflectionRequest_FileByFilename{FileByFilename: missing}})
		if err != nil {
			return nil, r.failed(r.stream.Context(), err)
		}
		if err := r.keep(resp); err != nil {
			return nil, err
		}
		if r.files[missing] == nil {
			return nil, &Error{fmt.Sprintf("the server at %s did not send %s, which its descriptors import", r.target, missing)}
		}
	}
	set := &descriptorpb.FileDescriptorSet{}
	for _, f := range r.files {
		set.File = append(set.File, f)
	}
	files, err := protodesc.NewFiles(set)
	if err != nil {
		return nil, &Error{fmt.Sprintf("the descriptors the server at %s sent do not link: %v", r.target, err)}
	}
	d, err := files.FindDescriptorByName(protoreflect.FullName(name))
	if err != nil {
		return nil, &Error{fmt.Sprintf("the descriptors the server at %s sent do not declare %s", r.target, name)}
	}
	sd, ok := d.(protoreflect.ServiceDescriptor)
	if !ok {
		return nil, &Error{fmt.Sprintf("the server at %s describes %s as something other than a service", r.target, name)}
	}
	return sd, nil
}

// keep decodes the files of an answer within the bounds.
func (r *reflector) keep(resp *rpb.ServerReflectionResponse) error {
	for _, raw := range resp.GetFileDescriptorResponse().GetFileDescriptorProto() {
		r.bytes += len(raw)
		if r.bytes > r.opts.MaxBytes {
			return &Error{fmt.Sprintf("the server at %s sent more than %d bytes of descriptors (the bound): nothing was compared", r.target, r.opts.MaxBytes)}
		}
		fd := &descriptorpb.FileDescriptorProto{}
		if err := proto.Unmarshal(raw, fd); err != nil {
			return &Error{fmt.Sprintf("the server at %s sent a descriptor that does not decode: %v", r.target, err)}
		}
		if _, dup := r.files[fd.GetName()]; !dup {
			if len(r.files) == r.opts.MaxFiles {
				return &Error{fmt.Sprintf("the server at %s sent more than %d descriptor files (the bound): nothing was compared", r.target, r.opts.MaxFiles)}
			}
			r.files[fd.GetName()] = fd
		}
	}
	return nil
}

// missingImport is an import of a kept file that is neither kept nor
// linked into this program (the google/protobuf standard files are).
func (r *reflector) missingImport() string {
	for _, f := range r.files {
		for _, dep := range f.GetDependency() {
			if r.files[dep] != nil {
				continue
			}
			if gf, err := protoregistry.GlobalFiles.FindFileByPath(dep); err == nil {
				r.files[dep] = protodesc.ToFileDescriptorProto(gf)
				continue
			}
			return dep
		}
	}
	return ""
}
