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
)

// TestPrepareCallRepliesAreFresh: PrepareCall's reply shares nothing
// mutable with the store, or with the next reply, on every store: in one
// process it reaches the edge as built, not copied (FreshReplies), so what
// the edge does to it must not reach the thread. The caller changes every
// field (changeAll), so a field added later is covered too.
func TestPrepareCallRepliesAreFresh(t *testing.T) {
	t.Parallel()
	const content = "package main\n"
	sum := sha256.Sum256([]byte(content))
	sha := hex.EncodeToString(sum[:])
	window := &memoryv1.ModelWindow{Model: "gpt-5", ContextWindow: 400_000}
	for _, st := range stores {
		t.Run(st.name, func(t *testing.T) {
			t.Parallel()
			srv := New(memory.NewService(st.open(t), time.Hour, 10), slog.New(slog.DiscardHandler))
			if !slices.Contains(srv.FreshReplies(), "PrepareCall") {
				t.Fatal("PrepareCall is not among the fresh replies: this test guards nothing")
			}
			ctx := auth.WithClient(t.Context(), "alice")
			created, err := srv.CreateThread(ctx, &memoryv1.CreateThreadRequest{
				ToolName: "debug", InitialContext: mustStruct(t, map[string]any{"path": "/repo"}),
				Blobs: []*memoryv1.FileBlob{{Sha256: sha, Content: content}}, ModelWindow: window,
				Turns: []*memoryv1.Turn{
					{Role: memoryv1.Role_ROLE_USER, Content: "look", ToolName: "debug", Images: []string{"/repo/a.png"},
						Files: []*memoryv1.FileRef{{Path: "/repo/main.go", Sha256: sha, SizeBytes: int32(len(content))}}},
					{Role: memoryv1.Role_ROLE_ASSISTANT, Content: "looked", ToolName: "debug", ModelName: "gpt-5",
						WorkflowState: mustStruct(t, map[string]any{"tool": "debug", "step": 1.0})},
				},
			})
			if err != nil {
				t.Fatal(err)
			}
			req := &memoryv1.PrepareCallRequest{ThreadId: created.GetThread().GetThreadId(), ToolName: "debug",
				ModelWindow: window}
			first, err := srv.PrepareCall(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			thread, err := srv.GetThread(ctx, &memoryv1.GetThreadRequest{ThreadId: req.GetThreadId()})
			if err != nil {
				t.Fatal(err)
			}
			want := proto.Clone(first)
			changeAll(first.ProtoReflect()) // everything the caller can reach
			if proto.Equal(first, want) {
				t.Fatal("changeAll changed nothing: this test guards nothing")
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

// changeAll changes every field m holds, at every depth, as a careless
// caller might: each value, each element of a list and each entry of a
// map, and one element or entry more.
func changeAll(m protoreflect.Message) {
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsList():
			l := v.List()
			for i := range l.Len() {
				if fd.Message() != nil {
					changeAll(l.Get(i).Message())
				} else {
					l.Set(i, changed(fd, l.Get(i)))
				}
			}
			if fd.Message() != nil {
				l.Append(l.NewElement())
			} else {
				l.Append(changed(fd, fd.Default()))
			}
		case fd.IsMap():
			mp := v.Map()
			mp.Range(func(k protoreflect.MapKey, mv protoreflect.Value) bool {
				if fd.MapValue().Message() != nil {
					changeAll(mv.Message())
				} else {
					mp.Set(k, changed(fd.MapValue(), mv))
				}
				return true
			})
			if fd.MapKey().Kind() == protoreflect.StringKind {
				mp.Set(protoreflect.ValueOfString("added by the caller").MapKey(), mp.NewValue())
			}
		case fd.Message() != nil:
			changeAll(v.Message())
		default:
			m.Set(fd, changed(fd, v))
		}
		return true
	})
}

// changed is another value of fd's kind than v.
func changed(fd protoreflect.FieldDescriptor, v protoreflect.Value) protoreflect.Value {
	switch fd.Kind() {
	case protoreflect.StringKind:
		return protoreflect.ValueOfString(v.String() + " changed")
	case protoreflect.BytesKind:
		return protoreflect.ValueOfBytes(append(slices.Clone(v.Bytes()), '!'))
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
	panic(fmt.Sprintf("changed: no case for %v", fd.Kind()))
}
