package grpctools

import (
	"math"
	"math/rand/v2"
	"strings"
	"time"

	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/fieldmaskpb"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// randomMessage fills a message of type md with random values of every
// field kind, recursing at most depth levels: the corpus generator of the
// differential test.
func randomMessage(r *rand.Rand, md protoreflect.MessageDescriptor, depth int) *dynamicpb.Message {
	m := dynamicpb.NewMessage(md)
	fields := md.Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		if r.IntN(3) == 0 {
			continue // leave some unset
		}
		if od := fd.ContainingOneof(); od != nil && !od.IsSynthetic() && m.WhichOneof(od) != nil {
			continue
		}
		switch {
		case fd.IsMap():
			mp := m.Mutable(fd).Map()
			for range r.IntN(3) {
				k := randomScalar(r, fd.MapKey()).MapKey()
				v, ok := randomValue(r, m, fd.MapValue(), depth)
				if ok {
					mp.Set(k, v)
				}
			}
		case fd.IsList():
			l := m.Mutable(fd).List()
			for range r.IntN(3) {
				if v, ok := randomValue(r, m, fd, depth); ok {
					l.Append(v)
				}
			}
		default:
			if v, ok := randomValue(r, m, fd, depth); ok {
				m.Set(fd, v)
			}
		}
	}
	return m
}

func randomValue(r *rand.Rand, parent *dynamicpb.Message, fd protoreflect.FieldDescriptor, depth int) (protoreflect.Value, bool) {
	if fd.Kind() != protoreflect.MessageKind {
		return randomScalar(r, fd), true
	}
	md := fd.Message()
	switch md.FullName() {
	case wktTimestamp:
		ts := timestamppb.New(time.Unix(r.Int64N(4e9), r.Int64N(1e9)).UTC())
		return dynamicOf(md, ts.ProtoReflect()), true
	case wktDuration:
		d := durationpb.New(time.Duration(r.Int64N(1e15) - 5e14))
		return dynamicOf(md, d.ProtoReflect()), true
	case wktStruct, wktValue, wktList:
		st, _ := structpb.NewStruct(map[string]any{"a": r.Float64(), "b": []any{"x", true, nil}, "c": map[string]any{"d": "e"}})
		msg := st.ProtoReflect()
		if md.FullName() == wktValue {
			msg = structpb.NewStructValue(st).ProtoReflect()
		}
		if md.FullName() == wktList {
			l, _ := structpb.NewList([]any{1.5, "s", false})
			msg = l.ProtoReflect()
		}
		return dynamicOf(md, msg), true
	case wktFieldMask:
		fm := &fieldmaskpb.FieldMask{Paths: []string{"sku", "price.currency_code"}[:r.IntN(3)]}
		return dynamicOf(md, fm.ProtoReflect()), true
	case wktAny:
		return protoreflect.Value{}, false
	}
	if depth <= 0 {
		return protoreflect.Value{}, false
	}
	return protoreflect.ValueOfMessage(randomMessage(r, md, depth-1)), true
}

// dynamicOf copies a generated well-known message into a dynamic one of
// the bundle's descriptor.
func dynamicOf(md protoreflect.MessageDescriptor, src protoreflect.Message) protoreflect.Value {
	dst := dynamicpb.NewMessage(md)
	copyMessage(dst, src)
	return protoreflect.ValueOfMessage(dst)
}

func copyMessage(dst, src protoreflect.Message) {
	src.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		dfd := dst.Descriptor().Fields().ByNumber(fd.Number())
		switch {
		case fd.IsMap():
			dm := dst.Mutable(dfd).Map()
			v.Map().Range(func(k protoreflect.MapKey, mv protoreflect.Value) bool {
				if fd.MapValue().Message() != nil {
					nm := dm.NewValue()
					copyMessage(nm.Message(), mv.Message())
					dm.Set(k, nm)
				} else {
					dm.Set(k, mv)
				}
				return true
			})
		case fd.IsList():
			dl := dst.Mutable(dfd).List()
			for i := range v.List().Len() {
				if fd.Message() != nil {
					nv := dl.NewElement()
					copyMessage(nv.Message(), v.List().Get(i).Message())
					dl.Append(nv)
				} else {
					dl.Append(v.List().Get(i))
				}
			}
		case fd.Message() != nil:
			copyMessage(dst.Mutable(dfd).Message(), v.Message())
		default:
			dst.Set(dfd, v)
		}
		return true
	})
}

var words = []string{"", "a", "ünïcode", "tab\there", `quote"`, "line\nbreak", strings.Repeat("z", 40), "\u2028"}

func randomScalar(r *rand.Rand, fd protoreflect.FieldDescriptor) protoreflect.Value {
	switch fd.Kind() {
	case protoreflect.BoolKind:
		return protoreflect.ValueOfBool(r.IntN(2) == 0)
	case protoreflect.StringKind:
		return protoreflect.ValueOfString(words[r.IntN(len(words))])
	case protoreflect.BytesKind:
		b := make([]byte, r.IntN(8))
		for i := range b {
			b[i] = byte(r.IntN(256))
		}
		return protoreflect.ValueOfBytes(b)
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return protoreflect.ValueOfInt32(pick(r, int32(0), math.MinInt32, math.MaxInt32, int32(r.Uint32())))
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return protoreflect.ValueOfUint32(pick(r, uint32(0), math.MaxUint32, r.Uint32()))
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return protoreflect.ValueOfInt64(pick(r, int64(0), math.MinInt64, math.MaxInt64, 1<<53+1, int64(r.Uint64())))
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return protoreflect.ValueOfUint64(pick(r, uint64(0), math.MaxUint64, 1<<53+1, r.Uint64()))
	case protoreflect.FloatKind:
		return protoreflect.ValueOfFloat32(pick(r, float32(0), float32(math.Inf(1)), float32(math.NaN()), -1.5e-7, float32(r.NormFloat64())))
	case protoreflect.DoubleKind:
		return protoreflect.ValueOfFloat64(pick(r, 0, math.Inf(-1), math.NaN(), 1e308, r.NormFloat64()))
	case protoreflect.EnumKind:
		vals := fd.Enum().Values()
		return protoreflect.ValueOfEnum(vals.Get(r.IntN(vals.Len())).Number())
	}
	panic("kind " + fd.Kind().String())
}

func pick[T any](r *rand.Rand, vs ...T) T { return vs[r.IntN(len(vs))] }
