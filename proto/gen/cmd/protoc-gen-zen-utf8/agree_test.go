package main

import (
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	// Every zen package, so that its files are registered; TestEveryZenPackageIsChecked says when one is missing.
	_ "github.com/zenmcp/zen/proto/gen/zen/executor/v1"
	_ "github.com/zenmcp/zen/proto/gen/zen/gateway/v1"
	memoryv1 "github.com/zenmcp/zen/proto/gen/zen/memory/v1"
	_ "github.com/zenmcp/zen/proto/gen/zen/router/v1"
	_ "github.com/zenmcp/zen/proto/gen/zen/utf8test/v1"
)

// utf8Checked is what the plugin gives every message.
type utf8Checked interface{ ValidUTF8() bool }

// depth bounds how far into messages within messages the test plants:
// Struct holds Values that hold Structs without end.
const depth = 5

// Every generated message's ValidUTF8 agrees with proto.Marshal, and
// neither panics: for a message with every field set to something valid,
// and for one with a single thing planted at any place within depth
// levels: an invalid string wherever a string can be (refused in proto3,
// taken in proto2), and a nil wherever a message can be (a list's
// element, a map's value, a oneof's wrapper), which proto.Marshal takes.
func TestValidUTF8AgreesWithMarshal(t *testing.T) {
	t.Parallel()
	refused, taken := 0, 0
	for _, md := range zenMessages(t) {
		planted := variants(md, depth)
		for _, v := range planted {
			if v.valid {
				taken++
			} else {
				refused++
			}
		}
		t.Run(string(md.FullName()), func(t *testing.T) {
			full := newMessage(md)
			fill(full, depth)
			if !validUTF8(t, full) {
				t.Errorf("ValidUTF8 of a message with every field valid = false")
			}
			if _, err := proto.Marshal(full.Interface()); err != nil {
				t.Fatalf("the valid message does not marshal: %v", err)
			}
			for _, v := range planted {
				_, err := proto.Marshal(v.msg.Interface())
				if (err == nil) != v.valid {
					t.Fatalf("the test's own message with %s: proto.Marshal's error %v, want valid %t",
						v.path, err, v.valid)
				}
				if got := validUTF8(t, v.msg); got != v.valid {
					t.Errorf("ValidUTF8 with %s = %t, want %t as proto.Marshal finds", v.path, got, v.valid)
				}
			}
		})
	}
	if refused < 200 || taken < 100 {
		t.Errorf("only %d refused and %d taken messages were planted: the test no longer reaches the messages",
			refused, taken)
	}
}

// validUTF8 is m's ValidUTF8, failing the test when the plugin gave m's
// type none.
func validUTF8(t *testing.T, m protoreflect.Message) bool {
	t.Helper()
	c, ok := m.Interface().(utf8Checked)
	if !ok {
		t.Fatalf("%s has no ValidUTF8 method", m.Descriptor().FullName())
	}
	return c.ValidUTF8()
}

// Every proto file under proto/zen is registered here, so that
// TestValidUTF8AgreesWithMarshal checks each message the plugin writes a
// method for: a new package must be imported above.
func TestEveryZenPackageIsChecked(t *testing.T) {
	t.Parallel()
	const root = "../../../" // proto/, where buf finds the files
	var protos []string
	err := filepath.WalkDir(root+"zen", func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".proto") {
			protos = append(protos, strings.TrimPrefix(filepath.ToSlash(path), root))
		}
		return err
	})
	if err != nil || len(protos) == 0 {
		t.Fatalf("no proto files found under proto/zen (%v)", err)
	}
	for _, path := range protos {
		if _, err := protoregistry.GlobalFiles.FindFileByPath(path); err != nil {
			t.Errorf("%s is not registered: import its generated package in agree_test.go", path)
		}
	}
}

// A nil message is valid, as proto.Marshal finds it.
func TestValidUTF8OfANilMessage(t *testing.T) {
	t.Parallel()
	var turn *memoryv1.Turn
	if !turn.ValidUTF8() {
		t.Errorf("ValidUTF8 of a nil Turn = false")
	}
}

// zenMessages are the messages of every registered file of zen's.
func zenMessages(t *testing.T) []protoreflect.MessageDescriptor {
	t.Helper()
	var out []protoreflect.MessageDescriptor
	protoregistry.GlobalFiles.RangeFiles(func(fd protoreflect.FileDescriptor) bool {
		if strings.HasPrefix(fd.Path(), "zen/") {
			out = append(out, messagesOf(fd.Messages())...)
		}
		return true
	})
	if len(out) == 0 {
		t.Fatal("no zen message is registered")
	}
	return out
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
