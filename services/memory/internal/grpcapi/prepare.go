package grpcapi

import (
	"context"

	memoryv1 "github.com/zenmcp/zen/proto/gen/zen/memory/v1"
	"github.com/zenmcp/zen/services/memory/internal/memory"
	"github.com/zenmcp/zen/services/platform/auth"
	"google.golang.org/grpc/status"
)

func (s *Server) PrepareCall(ctx context.Context, req *memoryv1.PrepareCallRequest) (*memoryv1.PrepareCallResponse,
	error) {
	limits := toProtoLimits(s.svc.Limits())
	resp := &memoryv1.PrepareCallResponse{Limits: limits, RemainingTurns: limits.GetMaxTurns()}
	if req.GetThreadId() == "" {
		return resp, nil
	}
	read, err := s.calls.whole(ctx)
	if err != nil {
		return nil, withLimits(s.toStatus(ctx, "prepare call", err), limits)
	}
	defer read.done()
	var window *memory.ModelWindow
	if w := req.GetModelWindow(); w != nil {
		window = &memory.ModelWindow{Model: w.GetModel(), ContextWindow: int64(w.GetContextWindow())}
	}
	chain, err := s.svc.ReadChain(ctx, req.GetThreadId(), auth.Client(ctx), read.admit)
	if err != nil {
		return nil, withLimits(s.toStatus(ctx, "prepare call", err), limits)
	}
	p, err := s.svc.PrepareFrom(ctx, chain, req.GetToolName(), window)
	if err != nil {
		return nil, withLimits(s.toStatus(ctx, "prepare call", err), limits)
	}
	resp.ToolName, resp.InitialContext = p.Thread.ToolName, toStruct(p.Thread.InitialContext)
	resp.LastModel, resp.RemainingTurns = p.LastModel, int32(p.Remaining)
	resp.TurnCount, resp.ThreadWeight = int32(len(p.Thread.Turns)), p.Thread.Weight
	resp.WorkflowState = toStruct(p.WorkflowState)
	if req.GetWantToolImages() {
		resp.ToolImages = memory.SessionImages(p.Thread.Turns, req.GetToolName())
	}
	if req.GetWantToolFiles() {
		resp.ToolFiles = memory.SessionFiles(p.Thread.Turns, req.GetToolName())
	}
	if sel := p.History; sel != nil {
		resp.History = &memoryv1.History{
			ModelWindow: &memoryv1.ModelWindow{Model: p.Window.Model, ContextWindow: clamp(p.Window.ContextWindow)},
			Turns:       callTurns(sel.Turns), TotalTurns: int32(sel.Total), OmittedTurns: int32(sel.Omitted),
			Files: historyFiles(sel.Files), OmittedFiles: int32(sel.OmittedFiles),
		}
	}
	return resp, nil
}

// withLimits attaches the limits to a failure, so the caller can word a
// missing thread's answer (threads expire after the TTL) without asking
// again.
func withLimits(err error, limits *memoryv1.Limits) error {
	st, derr := status.Convert(err).WithDetails(limits)
	if derr != nil {
		return err
	}
	return st.Err()
}

func toProtoLimits(l memory.Limits) *memoryv1.Limits {
	return &memoryv1.Limits{MaxTurns: int32(l.MaxTurns), TtlSeconds: l.TTL.Seconds(), MaxThreadWeight: l.MaxWeight}
}

func fromProtoWindow(w *memoryv1.ModelWindow) memory.ModelWindow {
	return memory.ModelWindow{Model: w.GetModel(), ContextWindow: int64(w.GetContextWindow())}
}

// callTurns are the history's turns as the call about to run reads them
// (convertTurns): usage, timestamps and the like are for people
// inspecting a thread.
func callTurns(turns []memory.Turn) []*memoryv1.Turn {
	return convertTurns(turns, true)
}

// FreshReplies names PrepareCall, whose replies Local may hand to a caller
// in process without copying them (serve.FreshReplies): each is built
// anew, sharing only strings with the store. A reply is most of what a
// continued call moves between roles.
func (s *Server) FreshReplies() []string { return []string{"PrepareCall"} }
