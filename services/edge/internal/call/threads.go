package call

import (
	"context"
	"fmt"
	"math"
	"time"

	executorv1 "github.com/zenmcp/zen/proto/gen/zen/executor/v1"
	memoryv1 "github.com/zenmcp/zen/proto/gen/zen/memory/v1"
	routerv1 "github.com/zenmcp/zen/proto/gen/zen/router/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// prepareMemory is the one round trip to memory before a call runs: the
// limits in force for a call that starts a thread, and for one that
// continues thread id, everything about the thread the call needs (see
// PrepareCall). A missing thread ends the call here, before any model is
// asked; a full one is the caller's to weigh (unkeptExchange). Memory's
// limits are never kept between calls: a memory restarted with other
// limits is heard at the next call. A workflow's final step (finalStep)
// also learns the images and files its earlier steps named.
func (r *Runner) prepareMemory(ctx context.Context, tool *Tool, id string, window *memoryv1.ModelWindow,
	finalStep bool) (*memoryv1.PrepareCallResponse, *Outcome, error) {
	resp, err := r.b.Memory.PrepareCall(ctx, &memoryv1.PrepareCallRequest{ThreadId: id, ToolName: tool.GetName(),
		ModelWindow: window, WantToolImages: finalStep, WantToolFiles: finalStep})
	if id == "" {
		if err != nil {
			return nil, nil, &BackendError{"memory", err}
		}
		return resp, nil, nil
	}
	if out := missingThread(tool, id, err); out != nil {
		return nil, out, nil
	}
	if err != nil {
		return nil, nil, &BackendError{"memory", err}
	}
	return resp, nil, nil
}

// missingThread is the answer to a continuation whose thread memory does
// not have: lost with the store's data (DataLoss, whose message says when),
// or not found (worded with the limits memory attached). Nil for any other
// result. Like every refusal it is the tool's error envelope (the reference
// sent plain text here).
func missingThread(tool *Tool, id string, err error) *Outcome {
	switch st := status.Convert(err); st.Code() {
	case codes.DataLoss:
		return ptr(toolError(tool.GetName(), fmt.Sprintf("Conversation thread '%s' is gone: %s. Its history "+
			"cannot be recovered. Start a new conversation by calling the tool again without continuation_id, and "+
			"include the context it needs.", id, st.Message()), nil))
	case codes.NotFound:
		var ttl float64
		for _, d := range st.Details() {
			if l, ok := d.(*memoryv1.Limits); ok {
				ttl = l.GetTtlSeconds()
			}
		}
		return ptr(toolError(tool.GetName(), notFoundMessage(id, ttl), nil))
	}
	return nil
}

// notFoundMessage is the reference's reply to an unknown or expired thread,
// with the TTL actually configured (when memory said).
func notFoundMessage(id string, ttlSeconds float64) string {
	hours := ttlSeconds / 3600
	ttl := fmt.Sprintf(" %g hours", math.Round(hours*100)/100)
	switch {
	case hours == 1:
		ttl = " 1 hour"
	case ttlSeconds <= 0:
		ttl = ""
	}
	return fmt.Sprintf("Conversation thread '%s' was not found or has expired. Threads expire%s after their last "+
		"message (CONVERSATION_TIMEOUT_HOURS), and an id must be one a zen tool returned. Start a new conversation "+
		"by calling the tool again without continuation_id, and include the context it needs.", id, ttl)
}

// unkeptExchange says why a continuation's exchange cannot be kept: its
// thread has no room left for it (two turns; one for a workflow step,
// which may have no expert's answer; or less weight left than
// minExchangeWeight); "" when it can. As the reference's does at the turn
// limit, such a call still runs and is answered, its exchange not stored
// and no continuation offered (unkeptAnswer says so, and how to go on),
// but for a workflow step that pauses (fullWorkflow).
func unkeptExchange(tool *Tool, prep *memoryv1.PrepareCallResponse) string {
	need := 2
	if tool.GetWorkflow() {
		need = 1
	}
	remaining, limit := int(prep.GetRemainingTurns()), int(prep.GetLimits().GetMaxTurns())
	most, weight := prep.GetLimits().GetMaxThreadWeight(), prep.GetThreadWeight()
	if left := most - weight; most > 0 && left < minExchangeWeight {
		return fmt.Sprintf("the conversation holds %.1f of the %d MiB one thread may hold, too little for another "+
			"exchange", float64(weight)/(1<<20), most>>20)
	}
	if need <= remaining {
		return ""
	}
	return fmt.Sprintf("the conversation had reached its limit of %d turns (MAX_CONVERSATION_TURNS), holding %d "+
		"where this exchange needed %d more", limit, limit-remaining, need)
}

// unkeptAnswer is the continuation_error of an answer whose exchange was
// not kept, for why (unkeptExchange).
func unkeptAnswer(why string) string {
	return "this answer was not saved: " + why + ". Start a new conversation by calling the tool again without " +
		"continuation_id, and include the context it needs: a summary of this conversation and the files it used"
}

// fullWorkflow is the refusal of a workflow step that pauses on a thread
// that cannot keep it, for why (unkeptExchange): it calls no model, and
// run, its findings would reach no later step, while its answer told the
// agent to carry on.
func fullWorkflow(tool *Tool, why string) Outcome {
	return toolError(tool.GetName(), "This step was not run: "+why+", so neither it nor the steps after it could "+
		"be kept. Go on in a new conversation: step_number 1, without continuation_id, with a summary of the "+
		"findings so far.", nil)
}

// minExchangeWeight is the least weight (memory's Limits.max_thread_weight)
// a thread must have left for a continuation's exchange to be stored: with
// less, most exchanges would not fit (an agent's question and a model's
// answer weigh tens of kilobytes), and none is tried. One heavier than
// what is left is tried, and its answer says it was not saved.
const minExchangeWeight = 32 << 10

// noModelWindow is the context assumed for tools that resolve no model at
// the edge (clink's CLIs, consensus's per-step models): a common size.
const noModelWindow = 200_000

// modelWindow is what a history is selected for when the call runs with
// model (nil for tools that resolve none).
func modelWindow(model *routerv1.Model) *memoryv1.ModelWindow {
	window := model.GetContextWindow()
	if window == 0 {
		window = noModelWindow
	}
	return &memoryv1.ModelWindow{Model: model.GetName(), ContextWindow: window}
}

// conversation is the history that fits the call's model: turns within the
// history budget and the files they used, as stored, within the file
// budget. Memory selected it with the rest of the thread (PrepareCall) for
// the model the call named, or the one it inherits at the window that model
// last had; only when the model resolved is another (the thread's model is
// gone, or its window changed) is the history selected again. Files never
// come from this machine's disk here, so any edge can continue any thread.
func (r *Runner) conversation(ctx context.Context, id string, prep *memoryv1.PrepareCallResponse,
	model *routerv1.Model) (*executorv1.Conversation, error) {
	want := modelWindow(model)
	h := prep.GetHistory()
	if h == nil || !proto.Equal(h.GetModelWindow(), want) {
		sel, err := r.b.Memory.SelectHistory(ctx, &memoryv1.SelectHistoryRequest{
			ThreadId: id, ContextWindow: want.GetContextWindow(), Model: want.GetModel(),
		})
		if err != nil {
			return nil, &BackendError{"memory", err}
		}
		h = &memoryv1.History{ModelWindow: want, Turns: sel.GetTurns(), TotalTurns: sel.GetTotalTurns(),
			OmittedTurns: sel.GetOmittedTurns(), Files: sel.GetFiles(), OmittedFiles: sel.GetOmittedFiles()}
	}
	conv := &executorv1.Conversation{
		ThreadId: id, ToolName: prep.GetToolName(), Turns: h.GetTurns(), TotalTurns: h.GetTotalTurns(),
		OmittedTurns: h.GetOmittedTurns(), MaxTurns: prep.GetLimits().GetMaxTurns(), OmittedFiles: h.GetOmittedFiles(),
	}
	for _, f := range h.GetFiles() {
		fc := &executorv1.FileContent{Path: f.GetPath(), Sha256: f.GetSha256(), Content: f.GetContent(),
			SizeBytes: f.GetSizeBytes()}
		if f.GetModifiedAt() != nil {
			fc.ModifiedAt = f.GetModifiedAt().AsTime().UTC().Format(time.RFC3339)
		}
		conv.Files = append(conv.Files, fc)
	}
	return conv, nil
}
