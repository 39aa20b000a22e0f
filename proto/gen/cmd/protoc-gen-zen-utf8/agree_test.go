package main

import (
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	executorv1 "github.com/zenmcp/zen/proto/gen/zen/executor/v1"
	gatewayv1 "github.com/zenmcp/zen/proto/gen/zen/gateway/v1"
	memoryv1 "github.com/zenmcp/zen/proto/gen/zen/memory/v1"
	routerv1 "github.com/zenmcp/zen/proto/gen/zen/router/v1"
)

// utf8Checked is what the plugin gives every message.
type utf8Checked interface{ ValidUTF8() bool }

// depth bounds how far into messages within messages the test plants a
// bad string: Struct holds Values that hold Structs without end.
const depth = 5

// Every generated message's ValidUTF8 agrees with proto.Marshal: false for
// a message with an invalid string at any place a string can be, down to
// depth, and true for one with every field set to something valid.
func TestValidUTF8AgreesWithMarshal(t *testing.T) {
	t.Parallel()
	files := []protoreflect.FileDescriptor{
		memoryv1.File_zen_memory_v1_memory_proto, routerv1.File_zen_router_v1_router_proto,
		executorv1.File_zen_executor_v1_executor_proto, gatewayv1.File_zen_gateway_v1_gateway_proto,
	}
	planted := 0
	for _, fd := range files {
		for _, md := range messagesOf(fd.Messages()) {
			t.Run(string(md.FullName()), func(t *testing.T) {
				full := newMessage(md)
				fill(full, depth)
				if !full.Interface().(utf8Checked).ValidUTF8() {
					t.Errorf("ValidUTF8 of a message with every field valid = false")
				}
				if _, err := proto.Marshal(full.Interface()); err != nil {
					t.Fatalf("the valid message does not marshal: %v", err)
				}
				for _, bad := range plant(md, depth) {
					planted++
					if bad.msg.Interface().(utf8Checked).ValidUTF8() {
						t.Errorf("ValidUTF8 with an invalid string at %s = true", bad.path)
					}
					if _, err := proto.Marshal(bad.msg.Interface()); err == nil {
						t.Errorf("the test's own message with an invalid string at %s marshals", bad.path)
					}
				}
			})
		}
	}
	if planted < 100 {
		t.Errorf("only %d invalid strings were planted: the test no longer reaches the messages' strings", planted)
	}
}

// A message of a type that holds no string is valid whatever it holds, and
// a nil message is valid, as proto.Marshal finds them.
func TestValidUTF8OfMessagesWithoutStrings(t *testing.T) {
	t.Parallel()
	var nilTurn *memoryv1.Turn
	if !nilTurn.ValidUTF8() {
		t.Errorf("ValidUTF8 of a nil Turn = false")
	}
	withNil := &memoryv1.Thread{Turns: []*memoryv1.Turn{nil}}
	if !withNil.ValidUTF8() {
		t.Errorf("ValidUTF8 of a Thread with a nil turn = false")
	}
	if _, err := proto.Marshal(withNil); err != nil {
		t.Errorf("a Thread with a nil turn does not marshal: %v", err)
	}
	if !(&memoryv1.Limits{MaxTurns: 3}).ValidUTF8() {
		t.Errorf("ValidUTF8 of Limits = false")
	}
}

func messagesOf(ms protoreflect.MessageDescriptors) []protoreflect.MessageDescriptor {
	var out []protoreflect.MessageDescriptor
	for i := range ms.Len() {
		md := ms.Get(i)
		if md.IsMapEntry() {
			continue
		}
		out = append(out, md)
		out = append(out, messagesOf(md.Messages())...)
	}
	return out
}

// newMessage is an empty message of md's generated Go type.
func newMessage(md protoreflect.MessageDescriptor) protoreflect.Message {
	mt, err := protoregistry.GlobalTypes.FindMessageByName(md.FullName())
	if err != nil {
		panic(err)
	}
	return mt.New()
}

// planted is a message with one invalid string, and where it is.
type planted struct {
	msg  protoreflect.Message
	path string
}

const invalid = "ok\xff"

// plant is a message of md's type for each place within depth levels
// where a string must be UTF-8, with an invalid string there.
func plant(md protoreflect.MessageDescriptor, depth int) []planted {
	if depth == 0 {
		return nil
	}
	var out []planted
	fields := md.Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		name := string(fd.Name())
		switch {
		case fd.IsMap():
			if fd.MapKey().Kind() == protoreflect.StringKind {
				m := newMessage(md)
				m.Mutable(fd).Map().Set(protoreflect.ValueOfString(invalid).MapKey(), element(m, fd, fd.MapValue(), 2))
				out = append(out, planted{m, name + "[key]"})
			}
			for _, v := range plantValue(fd.MapValue(), depth) {
				m := newMessage(md)
				m.Mutable(fd).Map().Set(protoreflect.ValueOfString("key").MapKey(), v.value(m, fd))
				out = append(out, planted{m, name + "[value]" + v.path})
			}
		case fd.IsList():
			for _, v := range plantValue(fd, depth) {
				m := newMessage(md)
				list := m.Mutable(fd).List()
				list.Append(element(m, fd, fd, 2))
				list.Append(v.value(m, fd))
				out = append(out, planted{m, name + "[1]" + v.path})
			}
		default:
			for _, v := range plantValue(fd, depth) {
				m := newMessage(md)
				m.Set(fd, v.value(m, fd))
				out = append(out, planted{m, name + v.path})
			}
		}
	}
	return out
}

// plantedValue makes a value of a field, holding an invalid string.
type plantedValue struct {
	path  string
	value func(parent protoreflect.Message, fd protoreflect.FieldDescriptor) protoreflect.Value
}

// plantValue are the values of one element of fd with an invalid string.
func plantValue(fd protoreflect.FieldDescriptor, depth int) []plantedValue {
	switch fd.Kind() {
	case protoreflect.StringKind:
		return []plantedValue{{"", func(protoreflect.Message, protoreflect.FieldDescriptor) protoreflect.Value {
			return protoreflect.ValueOfString(invalid)
		}}}
	case protoreflect.MessageKind:
		var out []plantedValue
		for _, p := range plant(fd.Message(), depth-1) {
			out = append(out, plantedValue{"." + p.path,
				func(protoreflect.Message, protoreflect.FieldDescriptor) protoreflect.Value {
					return protoreflect.ValueOfMessage(p.msg)
				}})
		}
		return out
	}
	return nil
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
			if fd.MapKey().Kind() != protoreflect.StringKind {
				panic("a map keyed by " + fd.MapKey().Kind().String() + " in " + string(fd.FullName()) + ": teach the test")
			}
			m.Mutable(fd).Map().Set(protoreflect.ValueOfString("é").MapKey(), element(m, fd, fd.MapValue(), depth))
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
