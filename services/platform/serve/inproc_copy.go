package serve

import (
	"reflect"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	grpcstatus "google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// A message crosses Local as a copy of its own, made with proto.Merge
// rather than unmarshalled from its encoding: the receiver gets what
// unmarshalling would give it without parsing, and shares the sender's
// strings, which are immutable, instead of allocating its own. What
// marshalling would check is checked first: a message that is not one,
// that proto.Marshal would refuse (invalid UTF-8, a required field
// unset), or that is over MaxMessageBytes fails as gRPC's codec fails it.
// Only a reply its service names fresh (FreshReplies) is moved, not
// copied: moveInto.

// sendable is m as gRPC's codec would send it: the message and the size
// of its encoding, or the status the codec refuses it with.
func sendable(m any) (proto.Message, int, error) {
	pm, ok := m.(proto.Message)
	if !ok {
		return nil, 0, grpcstatus.Errorf(codes.Internal,
			"grpc: error while marshaling: failed to marshal, message is %T, want proto.Message", m)
	}
	n, err := encodedSize(pm)
	if err != nil {
		return nil, 0, grpcstatus.Errorf(codes.Internal, "grpc: error while marshaling: %v", err)
	}
	if n > MaxMessageBytes {
		return nil, 0, grpcstatus.Errorf(codes.ResourceExhausted,
			"grpc: trying to send message larger than max (%d vs. %d)", n, MaxMessageBytes)
	}
	return pm, n, nil
}

// encodedSize is the size of m's encoding, or why proto.Marshal refuses
// it. A message whose generated code checks its own strings (zen's, by
// protoc-gen-zen-utf8), or that holds none that must be UTF-8, is only
// measured once it passes: reading its strings and measuring it costs
// half of marshalling it (BenchmarkCheck, beside the plugin). Any other
// message, and one that fails, is marshalled, into a buffer kept for the
// next, for proto.Marshal's own answer: protobuf-go checks strings no
// faster (a walk through protoreflect took three times as long).
func encodedSize(m proto.Message) (int, error) {
	var valid bool
	if c, ok := m.(UTF8Checked); ok {
		valid = c.ValidUTF8()
	} else {
		valid = !mayHoldUTF8(m.ProtoReflect().Descriptor())
	}
	if valid && proto.CheckInitialized(m) == nil {
		return proto.Size(m), nil
	}
	buf := encodeBuffers.Get().(*[]byte)
	b, err := proto.MarshalOptions{}.MarshalAppend((*buf)[:0], m)
	if cap(b) <= maxPooledBuffer {
		*buf = b[:0]
		encodeBuffers.Put(buf)
	}
	return len(b), err
}

// UTF8Checked is a message whose generated code (protoc-gen-zen-utf8)
// tells whether the strings proto.Marshal requires to be UTF-8 are. Local
// takes its word for it: a type that has a ValidUTF8 of another meaning
// must not be sent in process.
type UTF8Checked interface{ ValidUTF8() bool }

// encodeBuffers hold encodings that only encodedSize reads.
var encodeBuffers = sync.Pool{New: func() any { return new([]byte) }}

// maxPooledBuffer bounds the buffers encodeBuffers keeps, so one large
// message does not stay allocated.
const maxPooledBuffer = 1 << 20

// copyInto makes dst what unmarshalling src's encoding into it would, and
// shares nothing mutable with src.
func copyInto(dst any, src proto.Message) error {
	pm, err := receivable(dst)
	if err != nil {
		return err
	}
	if !sameType(pm, src) {
		return throughBytes(pm, src)
	}
	proto.Reset(pm)
	proto.Merge(pm, src)
	return nil
}

// moveInto makes dst what copyInto would, taking src's fields themselves:
// src must be a copy no one else holds, and is not to be used after.
func moveInto(dst any, src proto.Message) error {
	pm, err := receivable(dst)
	if err != nil {
		return err
	}
	if !sameType(pm, src) {
		return throughBytes(pm, src)
	}
	proto.Reset(pm)
	d, s := pm.ProtoReflect(), src.ProtoReflect()
	s.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		d.Set(fd, v)
		return true
	})
	if u := s.GetUnknown(); len(u) > 0 {
		d.SetUnknown(u)
	}
	return nil
}

// receivable is dst as a message to receive into, or gRPC's refusal.
func receivable(dst any) (proto.Message, error) {
	pm, ok := dst.(proto.Message)
	if !ok {
		return nil, grpcstatus.Errorf(codes.Internal, "grpc: failed to unmarshal, message is %T, want proto.Message", dst)
	}
	return pm, nil
}

// sameType reports whether a and b are of one Go type and one descriptor,
// which proto.Merge and moving fields need.
func sameType(a, b proto.Message) bool {
	return reflect.TypeOf(a) == reflect.TypeOf(b) && a.ProtoReflect().Descriptor() == b.ProtoReflect().Descriptor()
}

// throughBytes receives src into dst of another type, as the network does
// for any two.
func throughBytes(dst, src proto.Message) error {
	b, err := proto.Marshal(src)
	if err != nil {
		return grpcstatus.Errorf(codes.Internal, "grpc: error while marshaling: %v", err)
	}
	if err := proto.Unmarshal(b, dst); err != nil {
		return grpcstatus.Errorf(codes.Internal, "grpc: failed to unmarshal the received message: %v", err)
	}
	return nil
}

// enforcesUTF8 is protobuf-go's rule for which strings must be UTF-8
// (internal/strs.EnforceUTF8): proto3's, and editions' that say so.
func enforcesUTF8(fd protoreflect.FieldDescriptor) bool {
	if fd.Syntax() == protoreflect.Editions {
		if fd, ok := fd.(interface{ EnforceUTF8() bool }); ok {
			return fd.EnforceUTF8()
		}
	}
	return fd.Syntax() == protoreflect.Proto3
}

// utf8Types caches mayHoldUTF8 by message descriptor.
var utf8Types sync.Map // protoreflect.MessageDescriptor → bool

// mayHoldUTF8 reports whether a message of type md can hold a string that
// must be UTF-8, in itself or any message within (extensions count).
func mayHoldUTF8(md protoreflect.MessageDescriptor) bool {
	if v, ok := utf8Types.Load(md); ok {
		return v.(bool)
	}
	may := holdsUTF8(md, map[protoreflect.MessageDescriptor]bool{})
	utf8Types.Store(md, may)
	return may
}

func holdsUTF8(md protoreflect.MessageDescriptor, seen map[protoreflect.MessageDescriptor]bool) bool {
	if seen[md] {
		return false // answered where it was first met
	}
	seen[md] = true
	if md.ExtensionRanges().Len() > 0 {
		return true
	}
	fields := md.Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		if fd.IsMap() {
			if holdsUTF8Value(fd.MapKey(), seen) || holdsUTF8Value(fd.MapValue(), seen) {
				return true
			}
		} else if holdsUTF8Value(fd, seen) {
			return true
		}
	}
	return false
}

func holdsUTF8Value(fd protoreflect.FieldDescriptor, seen map[protoreflect.MessageDescriptor]bool) bool {
	switch fd.Kind() {
	case protoreflect.StringKind:
		return enforcesUTF8(fd)
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return holdsUTF8(fd.Message(), seen)
	}
	return false
}

// HandOver is a call option for a caller that hands the messages it
// streams over: once sent, neither it nor the handler changes one (both
// may still read it). A streaming call in process then gives the handler
// the caller's own message instead of a copy (still checked as a network
// would check it). Across a network it changes nothing.
func HandOver() grpc.CallOption { return handOver{} }

type handOver struct{ grpc.EmptyCallOption }

func handsOver(opts []grpc.CallOption) bool {
	for _, o := range opts {
		if _, ok := o.(handOver); ok {
			return true
		}
	}
	return false
}
