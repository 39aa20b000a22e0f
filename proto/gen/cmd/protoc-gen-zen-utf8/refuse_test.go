package main

import (
	"strings"
	"testing"

	"google.golang.org/protobuf/compiler/protogen"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/pluginpb"
)

// The plugin refuses, at generation, a message it could not check as
// proto.Marshal does, naming it, rather than let its strings pass.
func TestWhatCannotBeCheckedIsRefused(t *testing.T) {
	t.Parallel()
	str := descriptorpb.FieldDescriptorProto_TYPE_STRING.Enum()
	msg := descriptorpb.FieldDescriptorProto_TYPE_MESSAGE.Enum()
	optional := descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum()
	type (
		fieldProto = descriptorpb.FieldDescriptorProto
		fileProto  = descriptorpb.FileDescriptorProto
	)
	field := func(name string, typ *descriptorpb.FieldDescriptorProto_Type, typeName string) *fieldProto {
		f := &descriptorpb.FieldDescriptorProto{
			Name:     proto.String(name),
			Number:   proto.Int32(1),
			Label:    optional,
			Type:     typ,
			JsonName: proto.String(name),
		}
		if typeName != "" {
			f.TypeName = proto.String(typeName)
		}
		return f
	}
	// Each file is a Go package of its own, named t unless the name says
	// otherwise (dir/name.proto is package dir).
	file := func(name, syntax string, deps []string, msgs ...*descriptorpb.DescriptorProto) *fileProto {
		pkg, goPkg := "t", "t"
		if dir, _, nested := strings.Cut(name, "/"); nested {
			pkg, goPkg = dir, "p"
		}
		f := &descriptorpb.FileDescriptorProto{Name: proto.String(name), Package: proto.String(pkg),
			Dependency: deps, MessageType: msgs,
			Options: &descriptorpb.FileOptions{GoPackage: proto.String("example.com/t/" +
				strings.TrimSuffix(name, ".proto") + ";" + goPkg)}}
		if syntax == "editions" {
			f.Syntax, f.Edition = proto.String("editions"), descriptorpb.Edition_EDITION_2023.Enum()
		} else {
			f.Syntax = proto.String(syntax)
		}
		return f
	}
	holder := func(typeName string) *descriptorpb.DescriptorProto {
		return &descriptorpb.DescriptorProto{Name: proto.String("Holder"),
			Field: []*descriptorpb.FieldDescriptorProto{field("inner", msg, typeName)}}
	}
	cases := []struct {
		name  string
		files []*descriptorpb.FileDescriptorProto
		want  string
	}{
		{"a message of an imported editions file", []*descriptorpb.FileDescriptorProto{
			file("ed.proto", "editions", nil, &descriptorpb.DescriptorProto{Name: proto.String("Ed"),
				Field: []*descriptorpb.FieldDescriptorProto{field("s", str, "")}}),
			file("a.proto", "proto3", []string{"ed.proto"}, holder(".t.Ed")),
		}, "t.Ed, from an editions file, is not supported"},
		{"an extendable message held", []*descriptorpb.FileDescriptorProto{
			file("ext.proto", "proto2", nil, &descriptorpb.DescriptorProto{Name: proto.String("Ext"),
				ExtensionRange: []*descriptorpb.DescriptorProto_ExtensionRange{{Start: proto.Int32(100),
					End: proto.Int32(200)}}}),
			file("a.proto", "proto3", []string{"ext.proto"}, holder(".t.Ext")),
		}, "t.Ext: messages with extensions are not supported"},
		{"an editions file to generate", []*descriptorpb.FileDescriptorProto{
			file("a.proto", "editions", nil, &descriptorpb.DescriptorProto{Name: proto.String("Ed")}),
		}, "a.proto: editions files are not supported"},
		{"two messages of other packages whose checks share a name", []*descriptorpb.FileDescriptorProto{
			file("x/m.proto", "proto3", nil, &descriptorpb.DescriptorProto{Name: proto.String("M"),
				Field: []*descriptorpb.FieldDescriptorProto{field("s", str, "")}}),
			file("y/m.proto", "proto3", nil, &descriptorpb.DescriptorProto{Name: proto.String("M"),
				Field: []*descriptorpb.FieldDescriptorProto{field("s", str, "")}}),
			file("a.proto", "proto3", []string{"x/m.proto", "y/m.proto"}, &descriptorpb.DescriptorProto{
				Name: proto.String("Both"), Field: []*descriptorpb.FieldDescriptorProto{
					field("x", msg, ".x.M"),
					{
						Name:     proto.String("y"),
						Number:   proto.Int32(2),
						Label:    optional,
						Type:     msg,
						TypeName: proto.String(".y.M"),
						JsonName: proto.String("y"),
					},
				}}),
		}, "x.M and y.M would share the function validUTF8PM"},
		{"a field that would be named ValidUTF8", []*descriptorpb.FileDescriptorProto{
			file("a.proto", "proto3", nil, &descriptorpb.DescriptorProto{Name: proto.String("Clash"),
				Field: []*descriptorpb.FieldDescriptorProto{field("valid_u_t_f8", str, "")}}),
		}, "t.Clash.valid_u_t_f8: a field named ValidUTF8 in Go would clash"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			req := &pluginpb.CodeGeneratorRequest{FileToGenerate: []string{"a.proto"}, ProtoFile: tc.files}
			gen, err := protogen.Options{}.New(req)
			if err != nil {
				t.Fatalf("the test's request: %v", err)
			}
			err = run(gen)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("run = %v, want an error with %q", err, tc.want)
			}
		})
	}
}
