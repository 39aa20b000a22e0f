package main

import (
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	memoryv1 "github.com/zenmcp/zen/proto/gen/zen/memory/v1"
)

// What an in-process sender's check costs on a continued call's 50-turn
// history: marshalling it (what the check did before) against ValidUTF8
// and proto.Size (what it does now). The arguments stand for an agent's
// first call's.
func BenchmarkCheck(b *testing.B) {
	ctx, err := structpb.NewStruct(map[string]any{
		"prompt": strings.Repeat("Review the handler for races. ", 40), "model": "auto",
		"absolute_file_paths": []any{"/src/app/server.go", "/src/app/server_test.go"},
	})
	if err != nil {
		b.Fatal(err)
	}
	history := &memoryv1.History{}
	for i := range 50 {
		history.Turns = append(history.Turns, &memoryv1.Turn{
			Role: memoryv1.Role(1 + i%2), Content: strings.Repeat("a reply of some length ", 12),
			Timestamp: timestamppb.Now(), ToolName: "chat", ModelProvider: "openai", ModelName: "gpt-5",
		})
	}
	m := &memoryv1.PrepareCallResponse{Limits: &memoryv1.Limits{MaxTurns: 100}, ToolName: "chat",
		InitialContext: ctx, LastModel: "gpt-5", RemainingTurns: 50, History: history, TurnCount: 50}
	b.Run("marshal", func(b *testing.B) {
		var buf []byte
		for b.Loop() {
			if buf, err = (proto.MarshalOptions{}).MarshalAppend(buf[:0], m); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("ValidUTF8-and-Size", func(b *testing.B) {
		for b.Loop() {
			if !m.ValidUTF8() || proto.Size(m) == 0 {
				b.Fatal("invalid")
			}
		}
	})
}
