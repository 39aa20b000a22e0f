package main

import (
	"reflect"
	"slices"
	"strings"

	"google.golang.org/protobuf/reflect/protoreflect"
)

// variant is a message with one thing planted in it, where, and whether
// proto.Marshal takes it.
type variant struct {
	msg   protoreflect.Message
	path  string
	valid bool
}

const invalid = "ok\xff"

// variants are messages of md's type, each with one thing planted at a
// place within depth levels (TestValidUTF8AgreesWithMarshal).
func variants(md protoreflect.MessageDescriptor, depth int) []variant {
	if depth == 0 {
		return nil
	}
	var out []variant
	fields := md.Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		name := string(fd.Name())
		switch {
		case fd.IsMap():
			out = append(out, mapVariants(md, fd, depth)...)
		case fd.IsList():
			for _, v := range elementVariants(fd, depth) {
				m := newMessage(md)
				list := m.Mutable(fd).List()
				list.Append(element(m, fd, fd, 2))
				list.Append(v.value())
				out = append(out, variant{m, name + "[1]" + v.path, v.valid})
			}
			if fd.Kind() == protoreflect.MessageKind {
				m := newMessage(md)
				field := goField(m, fd)
				field.Set(reflect.MakeSlice(field.Type(), 1, 1))
				out = append(out, variant{m, name + "[0] nil", true})
			}
		default:
			for _, v := range elementVariants(fd, depth) {
				m := newMessage(md)
				m.Set(fd, v.value())
				out = append(out, variant{m, name + v.path, v.valid})
			}
			if fd.ContainingOneof() != nil && !fd.ContainingOneof().IsSynthetic() {
				out = append(out, nilInOneof(md, fd)...)
			}
		}
	}
	return out
}

// nilInOneof are messages whose oneof holds fd's wrapper as a typed nil,
// and, for a message member, a wrapper that holds a nil message: both
// read as unset to proto.Marshal.
func nilInOneof(md protoreflect.MessageDescriptor, fd protoreflect.FieldDescriptor) []variant {
	name := string(fd.Name())
	m := newMessage(md)
	m.Set(fd, element(m, fd, fd, 2))
	field := goOneof(m, fd.ContainingOneof())
	wrapper := field.Elem().Type()
	field.Set(reflect.Zero(wrapper))
	out := []variant{{m, name + "'s wrapper nil", true}}
	if fd.Kind() == protoreflect.MessageKind {
		m := newMessage(md)
		goOneof(m, fd.ContainingOneof()).Set(reflect.New(wrapper.Elem()))
		out = append(out, variant{m, name + " nil in its wrapper", true})
	}
	return out
}

func mapVariants(md protoreflect.MessageDescriptor, fd protoreflect.FieldDescriptor, depth int) []variant {
	name := string(fd.Name())
	var out []variant
	if fd.MapKey().Kind() == protoreflect.StringKind {
		m := newMessage(md)
		m.Mutable(fd).Map().Set(protoreflect.ValueOfString(invalid).MapKey(), element(m, fd, fd.MapValue(), 2))
		out = append(out, variant{m, name + "[invalid key]", false})
	}
	for _, v := range elementVariants(fd.MapValue(), depth) {
		m := newMessage(md)
		m.Mutable(fd).Map().Set(element(m, fd, fd.MapKey(), 1).MapKey(), v.value())
		out = append(out, variant{m, name + "[value]" + v.path, v.valid})
	}
	if fd.MapValue().Kind() == protoreflect.MessageKind {
		m := newMessage(md)
		field := goField(m, fd)
		nilValue := reflect.MakeMap(field.Type())
		key := reflect.ValueOf(element(m, fd, fd.MapKey(), 1).Interface()).Convert(field.Type().Key())
		nilValue.SetMapIndex(key, reflect.Zero(field.Type().Elem()))
		field.Set(nilValue)
		out = append(out, variant{m, name + "[value] nil", true})
	}
	return out
}

// valueVariant makes one value of a field with something planted in it.
type valueVariant struct {
	path  string
	valid bool
	value func() protoreflect.Value
}

// elementVariants are the values of one element of fd with something
// planted in them.
func elementVariants(fd protoreflect.FieldDescriptor, depth int) []valueVariant {
	switch fd.Kind() {
	case protoreflect.StringKind:
		return []valueVariant{{" invalid", fd.Syntax() != protoreflect.Proto3, func() protoreflect.Value {
			return protoreflect.ValueOfString(invalid)
		}}}
	case protoreflect.MessageKind:
		var out []valueVariant
		for _, v := range variants(fd.Message(), depth-1) {
			out = append(out, valueVariant{"." + v.path, v.valid, func() protoreflect.Value {
				return protoreflect.ValueOfMessage(v.msg)
			}})
		}
		return out
	}
	return nil
}

// goField is fd's field in m's Go struct, found by its protobuf tag.
func goField(m protoreflect.Message, fd protoreflect.FieldDescriptor) reflect.Value {
	return structField(m, func(f reflect.StructField) bool {
		return slices.Contains(strings.Split(f.Tag.Get("protobuf"), ","), "name="+string(fd.Name()))
	})
}

// goOneof is od's interface field in m's Go struct.
func goOneof(m protoreflect.Message, od protoreflect.OneofDescriptor) reflect.Value {
	return structField(m, func(f reflect.StructField) bool {
		return f.Tag.Get("protobuf_oneof") == string(od.Name())
	})
}

func structField(m protoreflect.Message, is func(reflect.StructField) bool) reflect.Value {
	v := reflect.ValueOf(m.Interface()).Elem()
	for i := range v.NumField() {
		if is(v.Type().Field(i)) {
			return v.Field(i)
		}
	}
	panic("no such field in " + v.Type().String())
}

// fill sets every field of m, depth levels down, to something valid.
func fill(m protoreflect.Message, depth int) {
	if depth == 0 {
		return
	}
	fields := m.Descriptor().Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		switch {
		case fd.IsMap():
			key := element(m, fd, fd.MapKey(), 1).MapKey()
			m.Mutable(fd).Map().Set(key, element(m, fd, fd.MapValue(), depth))
		case fd.IsList():
			m.Mutable(fd).List().Append(element(m, fd, fd, depth))
		default:
			m.Set(fd, element(m, fd, fd, depth))
		}
	}
}

// element is one valid value of vd, a part of m's field fd.
func element(m protoreflect.Message, fd, vd protoreflect.FieldDescriptor, depth int) protoreflect.Value {
	switch vd.Kind() {
	case protoreflect.StringKind:
		return protoreflect.ValueOfString("é")
	case protoreflect.BytesKind:
		return protoreflect.ValueOfBytes([]byte{0xff})
	case protoreflect.BoolKind:
		return protoreflect.ValueOfBool(true)
	case protoreflect.EnumKind:
		return protoreflect.ValueOfEnum(1)
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return protoreflect.ValueOfInt32(7)
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return protoreflect.ValueOfInt64(7)
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return protoreflect.ValueOfUint32(7)
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return protoreflect.ValueOfUint64(7)
	case protoreflect.FloatKind:
		return protoreflect.ValueOfFloat32(0.5)
	case protoreflect.DoubleKind:
		return protoreflect.ValueOfFloat64(0.5)
	case protoreflect.MessageKind:
		sub := newMessage(vd.Message())
		fill(sub, depth-1)
		return protoreflect.ValueOfMessage(sub)
	}
	panic("a field of kind " + vd.Kind().String() + " in " + string(fd.FullName()) + ": teach the test")
}
