package grpcapi

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	memoryv1 "github.com/zenmcp/zen/proto/gen/zen/memory/v1"
	"github.com/zenmcp/zen/services/memory/internal/memory"
	"github.com/zenmcp/zen/services/platform/auth"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// TestPrepareCallRepliesAreFresh: PrepareCall's reply shares nothing
// mutable with the store, or with the next reply, on every store: in one
// process it reaches the edge as built, not copied (FreshReplies), so what
// the edge does to it must not reach the thread. The caller changes every
// field it holds (changeAll), and every field of a reply that could share
// memory (a message, list, map or bytes) must be among them, so a field
// added later fails the test until the thread below fills it.
func TestPrepareCallRepliesAreFresh(t *testing.T) {
	t.Parallel()
	const content = "package main\n"
	sum := sha256.Sum256([]byte(content))
	sha := hex.EncodeToString(sum[:])
	window := &memoryv1.ModelWindow{Model: "gpt-5", ContextWindow: 400_000}
	// nested holds a value of every kind a Struct can.
	nested := map[string]any{"tool": "debug", "step": 1.0, "done": false, "none": nil, "list": []any{"a", 1.0},
		"deep": map[string]any{"x": "y"}}
	for _, st := range stores {
		t.Run(st.name, func(t *testing.T) {
			t.Parallel()
			srv := New(memory.NewService(st.open(t), time.Hour, 10), slog.New(slog.DiscardHandler))
			if !slices.Contains(srv.FreshReplies(), "PrepareCall") {
				t.Fatal("PrepareCall is not among the fresh replies: this test guards nothing")
			}
			ctx := auth.WithClient(t.Context(), "alice")
			created, err := srv.CreateThread(ctx, &memoryv1.CreateThreadRequest{
				ToolName: "debug", InitialContext: mustStruct(t, map[string]any{"path": "/repo", "options": nested}),
				Blobs: []*memoryv1.FileBlob{{Sha256: sha, Content: content}}, ModelWindow: window,
				Turns: []*memoryv1.Turn{
					{Role: memoryv1.Role_ROLE_USER, Content: "look", ToolName: "debug", Images: []string{"/repo/a.png"},
						Files: []*memoryv1.FileRef{{Path: "/repo/main.go", Sha256: sha, SizeBytes: int32(len(content)),
							ModifiedAt: timestamppb.New(time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC))}}},
					// Written before workflow_state existed: its state is in the metadata.
					{Role: memoryv1.Role_ROLE_ASSISTANT, Content: "looked", ToolName: "debug", ModelName: "gpt-5",
						ModelMetadata: mustStruct(t, map[string]any{"workflow": nested})},
					{Role: memoryv1.Role_ROLE_USER, Content: "and?", ToolName: "debug",
						ModelMetadata: mustStruct(t, map[string]any{"step": map[string]any{"step_number": 2.0,
							"relevant_files": []any{"/repo/main.go"}}})},
					{Role: memoryv1.Role_ROLE_ASSISTANT, Content: "so", ToolName: "debug", ModelName: "gpt-5",
						WorkflowState: mustStruct(t, map[string]any{"tool": "debug", "step": 2.0, "more": nested})},
				},
			})
			if err != nil {
				t.Fatal(err)
			}
			req := &memoryv1.PrepareCallRequest{ThreadId: created.GetThread().GetThreadId(), ToolName: "debug",
				ModelWindow: window, WantToolImages: true, WantToolFiles: true}
			first, err := srv.PrepareCall(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			thread, err := srv.GetThread(ctx, &memoryv1.GetThreadRequest{ThreadId: req.GetThreadId()})
			if err != nil {
				t.Fatal(err)
			}
			want := proto.Clone(first)
			changed := map[protoreflect.FullName]bool{}
			changeAll(first.ProtoReflect(), changed) // everything the caller can reach
			shared := map[protoreflect.FullName]bool{}
			mayShare(first.ProtoReflect().Descriptor(), shared)
			for name := range shared {
				if !changed[name] && !neverInACallsHistory[name] {
					t.Errorf("the reply never held %s, so the test did not change it: fill it in the thread", name)
				}
			}
			again, err := srv.PrepareCall(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, again, protocmp.Transform()); diff != "" {
				t.Errorf("a caller's changes to a reply reached the next (-before +after):\n%s", diff)
			}
			threadAgain, err := srv.GetThread(ctx, &memoryv1.GetThreadRequest{ThreadId: req.GetThreadId()})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(thread, threadAgain, protocmp.Transform()); diff != "" {
				t.Errorf("a caller's changes to a reply reached the thread (-before +after):\n%s", diff)
			}
		})
	}
}

// neverInACallsHistory are the fields PrepareCall's history leaves out.
var neverInACallsHistory = map[protoreflect.FullName]bool{
	"zen.memory.v1.Turn.timestamp": true, "zen.memory.v1.Turn.workflow_state": true,
}

// mayShare adds to into every field reachable from md whose value could
// share memory with another message: messages, lists, maps and bytes.
func mayShare(md protoreflect.MessageDescriptor, into map[protoreflect.FullName]bool) {
	fields := md.Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		if into[fd.FullName()] {
			continue
		}
		switch {
		case fd.IsMap():
			into[fd.FullName()] = true
			if v := fd.MapValue(); v.Message() != nil {
				mayShare(v.Message(), into)
			}
		case fd.Message() != nil:
			into[fd.FullName()] = true
			mayShare(fd.Message(), into)
		case fd.IsList() || fd.Kind() == protoreflect.BytesKind:
			into[fd.FullName()] = true
		}
	}
}

// changeAll changes every field m holds, at every depth, as a careless
// caller might: each value, each element of a list and each entry of a
// map, and one element or entry more. It records the fields it changed.
func changeAll(m protoreflect.Message, changed map[protoreflect.FullName]bool) {
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		changed[fd.FullName()] = true
		switch {
		case fd.IsList():
			l := v.List()
			for i := range l.Len() {
				if fd.Message() != nil {
					changeAll(l.Get(i).Message(), changed)
				} else {
					l.Set(i, changedValue(fd, l.Get(i)))
				}
			}
			if fd.Message() != nil {
				l.Append(l.NewElement())
			} else {
				l.Append(changedValue(fd, l.NewElement()))
			}
		case fd.IsMap():
			mp := v.Map()
			mp.Range(func(k protoreflect.MapKey, mv protoreflect.Value) bool {
				if fd.MapValue().Message() != nil {
					changeAll(mv.Message(), changed)
				} else {
					mp.Set(k, changedValue(fd.MapValue(), mv))
				}
				return true
			})
			if fd.MapKey().Kind() == protoreflect.StringKind {
				mp.Set(protoreflect.ValueOfString("added by the caller").MapKey(), mp.NewValue())
			}
		case fd.Message() != nil:
			changeAll(v.Message(), changed)
		default:
			m.Set(fd, changedValue(fd, v))
		}
		return true
	})
}

// changedValue is another value of fd's kind than v; bytes are changed in
// place, so bytes shared with the store would show.
func changedValue(fd protoreflect.FieldDescriptor, v protoreflect.Value) protoreflect.Value {
	switch fd.Kind() {
	case protoreflect.StringKind:
		return protoreflect.ValueOfString(v.String() + " changed")
	case protoreflect.BytesKind:
		if b := v.Bytes(); len(b) > 0 {
			b[0] ^= 0xff
			return protoreflect.ValueOfBytes(b)
		}
		return protoreflect.ValueOfBytes([]byte{'!'})
	case protoreflect.BoolKind:
		return protoreflect.ValueOfBool(!v.Bool())
	case protoreflect.EnumKind:
		return protoreflect.ValueOfEnum(v.Enum() + 1)
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return protoreflect.ValueOfInt32(int32(v.Int()) + 1)
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return protoreflect.ValueOfInt64(v.Int() + 1)
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return protoreflect.ValueOfUint32(uint32(v.Uint()) + 1)
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return protoreflect.ValueOfUint64(v.Uint() + 1)
	case protoreflect.FloatKind:
		return protoreflect.ValueOfFloat32(float32(v.Float()) + 1)
	case protoreflect.DoubleKind:
		return protoreflect.ValueOfFloat64(v.Float() + 1)
	}
	panic(fmt.Sprintf("changedValue: no case for %v", fd.Kind()))
}
