package diff

import (
	"context"
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"strings"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/kubepact/kubepact/internal/protofiles"
)

// protoModel is what the diff compares of a compiled .proto: services
// with their methods, messages with their fields, enums with their
// values, each by full name.
type protoModel struct {
	methods  map[string]protoMethod // "pkg.Service/Method"
	services map[string]bool
	messages map[string]map[protoreflect.FieldNumber]protoField
	enums    map[string][]string
}

type protoMethod struct {
	in, out                  string
	clientStream, serverStrm bool
}

type protoField struct {
	name, typ string
	required  bool
}

// protoChanges compares the .proto files of a gRPC interface on both
// sides, RPC by RPC and field by field. It reports whether it said
// anything; when a side does not compile (or nothing it compares
// changed), the caller falls back to "the spec changed".
func (d *differ) protoChanges(p string, o, n contractRef, ofs, nfs fs.FS) bool {
	om, err1 := compileProto(d.ctx, ofs, o.ref)
	nm, err2 := compileProto(d.ctx, nfs, n.ref)
	if err1 != nil || err2 != nil {
		return false
	}
	before := len(d.out)
	d.named(p+".services", sortedTrue(om.services), sortedTrue(nm.services), Breaking, NonBreaking)
	for _, m := range slices.Sorted(maps.Keys(om.methods)) {
		svc, _, _ := strings.Cut(m, "/")
		if !nm.services[svc] {
			continue // the whole service is gone: said above
		}
		ov, nv := om.methods[m], nm.methods[m]
		mp := p + ".rpcs." + m
		if _, ok := nm.methods[m]; !ok {
			d.add(mp, "removed", Breaking, "RPC "+m+" is removed: its callers get UNIMPLEMENTED", m, "")
			continue
		}
		if ov.in != nv.in {
			d.add(mp+".request", "changed", Breaking, "RPC "+m+" takes another request message", ov.in, nv.in)
		}
		if ov.out != nv.out {
			d.add(mp+".response", "changed", Breaking, "RPC "+m+" returns another response message", ov.out, nv.out)
		}
		if ov.clientStream != nv.clientStream || ov.serverStrm != nv.serverStrm {
			d.add(mp+".streaming", "changed", Breaking, "RPC "+m+" changes its streaming kind: callers built for the old kind fail", streamKind(ov), streamKind(nv))
		}
	}
	for _, m := range slices.Sorted(maps.Keys(nm.methods)) {
		svc, _, _ := strings.Cut(m, "/")
		if _, ok := om.methods[m]; !ok && om.services[svc] {
			d.add(p+".rpcs."+m, "added", NonBreaking, "RPC "+m+" is added", "", m)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(om.messages)) {
		nf, ok := nm.messages[name]
		if !ok {
			d.add(p+".messages."+name, "removed", PotentiallyBreaking, "message "+name+" is removed (breaking where an RPC or a field still names it; an Any holding it no longer resolves)", name, "")
			continue
		}
		d.fields(p+".messages."+name, om.messages[name], nf)
	}
	for _, name := range slices.Sorted(maps.Keys(nm.messages)) {
		if _, ok := om.messages[name]; !ok {
			d.add(p+".messages."+name, "added", NonBreaking, "message "+name+" is added", "", name)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(om.enums)) {
		if nv, ok := nm.enums[name]; ok {
			d.named(p+".enums."+name, om.enums[name], nv, Breaking, NonBreaking)
		}
	}
	return len(d.out) > before
}

// fields compares one message's fields by number: a removed field, a
// changed type, a number now used by a field of another name and type
// (reused) are BREAKING; the same number under a new name keeps the wire
// format but not the JSON one (POTENTIAL_BREAKING); a new optional field
// is NON_BREAKING, a new required one BREAKING.
func (d *differ) fields(mp string, o, n map[protoreflect.FieldNumber]protoField) {
	oldByName := map[string]protoreflect.FieldNumber{}
	for num, f := range o {
		oldByName[f.name] = num
	}
	newByName := map[string]protoreflect.FieldNumber{}
	for num, f := range n {
		newByName[f.name] = num
	}
	for _, num := range slices.Sorted(maps.Keys(o)) {
		of := o[num]
		fp := mp + ".fields." + of.name
		nf, ok := n[num]
		switch {
		case !ok:
			if moved, still := newByName[of.name]; still {
				d.add(fp+".number", "changed", Breaking, fmt.Sprintf("field %s moves from number %d to %d: old and new peers read each other's values as unknown", of.name, num, moved), fmt.Sprint(num), fmt.Sprint(moved))
				continue
			}
			d.add(fp, "removed", Breaking, fmt.Sprintf("field %s (number %d) is removed: its values are dropped", of.name, num), of.typ, "")
		case nf.name != of.name && nf.typ != of.typ:
			d.add(mp+".fields."+nf.name, "changed", Breaking, fmt.Sprintf("number %d, which was %s %s, is reused by %s %s: old peers misread it", num, of.typ, of.name, nf.typ, nf.name), of.name+" "+of.typ, nf.name+" "+nf.typ)
		case nf.name != of.name:
			d.add(fp+".name", "changed", PotentiallyBreaking, fmt.Sprintf("field number %d is renamed from %s to %s: the wire format is the same, its JSON name is not", num, of.name, nf.name), of.name, nf.name)
		case nf.typ != of.typ:
			d.add(fp+".type", "changed", Breaking, fmt.Sprintf("field %s changes type from %s to %s", of.name, of.typ, nf.typ), of.typ, nf.typ)
		}
	}
	for _, num := range slices.Sorted(maps.Keys(n)) {
		nf := n[num]
		if _, ok := o[num]; ok {
			continue
		}
		if _, moved := oldByName[nf.name]; moved {
			continue // said as a changed number
		}
		class, what := NonBreaking, "optional: old peers skip it"
		if nf.required {
			class, what = Breaking, "required: old peers do not send it"
		}
		d.add(mp+".fields."+nf.name, "added", class, fmt.Sprintf("field %s (number %d) is added, %s", nf.name, num, what), "", nf.typ)
	}
}

func streamKind(m protoMethod) string {
	switch {
	case m.clientStream && m.serverStrm:
		return "bidi-streaming"
	case m.clientStream:
		return "client-streaming"
	case m.serverStrm:
		return "server-streaming"
	}
	return "unary"
}

func sortedTrue(m map[string]bool) []string { return slices.Sorted(maps.Keys(m)) }

// contractRef is the part of an interface the proto comparison reads.
type contractRef struct{ ref string }

// compileProto compiles ref inside fsys (internal/protofiles: confined
// to the bundle, bounded) and models it.
func compileProto(ctx context.Context, fsys fs.FS, ref string) (*protoModel, error) {
	if fsys == nil {
		return nil, fs.ErrNotExist
	}
	res, err := protofiles.Compile(ctx, fsys, ref, protofiles.Limits{})
	if err != nil {
		return nil, err
	}
	m := &protoModel{methods: map[string]protoMethod{}, services: map[string]bool{}, messages: map[string]map[protoreflect.FieldNumber]protoField{}, enums: map[string][]string{}}
	f := res[0]
	for i := range f.Services().Len() {
		sd := f.Services().Get(i)
		m.services[string(sd.FullName())] = true
		for j := range sd.Methods().Len() {
			md := sd.Methods().Get(j)
			m.methods[string(sd.FullName())+"/"+string(md.Name())] = protoMethod{in: string(md.Input().FullName()), out: string(md.Output().FullName()),
				clientStream: md.IsStreamingClient(), serverStrm: md.IsStreamingServer()}
		}
	}
	m.addMessages(f.Messages())
	m.addEnums(f.Enums())
	return m, nil
}

func (m *protoModel) addMessages(ms protoreflect.MessageDescriptors) {
	for i := range ms.Len() {
		md := ms.Get(i)
		if md.IsMapEntry() {
			continue
		}
		fields := map[protoreflect.FieldNumber]protoField{}
		for j := range md.Fields().Len() {
			fd := md.Fields().Get(j)
			fields[fd.Number()] = protoField{name: string(fd.Name()), typ: fieldType(fd), required: fd.Cardinality() == protoreflect.Required}
		}
		m.messages[string(md.FullName())] = fields
		m.addMessages(md.Messages())
		m.addEnums(md.Enums())
	}
}

func (m *protoModel) addEnums(es protoreflect.EnumDescriptors) {
	for i := range es.Len() {
		ed := es.Get(i)
		var names []string
		for j := range ed.Values().Len() {
			names = append(names, string(ed.Values().Get(j).Name()))
		}
		m.enums[string(ed.FullName())] = names
	}
}

// fieldType spells a field's type with its cardinality: "int64",
// "repeated string", "map<string, pkg.V>", "pkg.Message".
func fieldType(fd protoreflect.FieldDescriptor) string {
	if fd.IsMap() {
		return "map<" + scalarType(fd.MapKey()) + ", " + scalarType(fd.MapValue()) + ">"
	}
	t := scalarType(fd)
	if fd.IsList() {
		return "repeated " + t
	}
	return t
}

func scalarType(fd protoreflect.FieldDescriptor) string {
	switch fd.Kind() {
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return string(fd.Message().FullName())
	case protoreflect.EnumKind:
		return string(fd.Enum().FullName())
	}
	return fd.Kind().String()
}
