package grpcapi

import (
	"slices"

	memoryv1 "github.com/zenmcp/zen/proto/gen/zen/memory/v1"
	"github.com/zenmcp/zen/services/memory/internal/memory"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"
)

func toProtoThread(t *memory.Thread) *memoryv1.Thread {
	return &memoryv1.Thread{
		ThreadId: t.ID, ParentThreadId: t.ParentID, CreatedAt: timestamppb.New(t.CreatedAt),
		LastUpdatedAt: timestamppb.New(t.UpdatedAt), ExpiresAt: timestamppb.New(t.ExpiresAt),
		ToolName: t.ToolName, Turns: toProtoTurns(t.Turns), InitialContext: toStruct(t.InitialContext),
		ClientId: t.ClientID,
	}
}

// toProtoTurns converts turns whole, workflow state included: the thread
// as stored, for inspection and export.
func toProtoTurns(turns []memory.Turn) []*memoryv1.Turn {
	out := historyTurns(turns)
	for i, t := range turns {
		out[i].WorkflowState = toStruct(t.WorkflowState)
	}
	return out
}

// historyTurns converts turns for a model's history: a workflow's state is
// the executor's to read once, through PrepareCall, not with every turn.
func historyTurns(turns []memory.Turn) []*memoryv1.Turn {
	return convertTurns(turns, false)
}

// convertTurns converts turns, the messages in one slab. For a call (forCall)
// it leaves out what the call's prompt never reads: the timestamps, and
// the model metadata but for the workflow state that threads written
// before Turn.workflow_state existed keep there. Converting every turn's
// metadata was a sixth of PrepareCall.
func convertTurns(turns []memory.Turn, forCall bool) []*memoryv1.Turn {
	out := make([]*memoryv1.Turn, len(turns))
	converted := make([]memoryv1.Turn, len(turns))
	for i := range turns {
		t, c := &turns[i], &converted[i]
		// Images are copied: the store may keep the slice (serve.FreshReplies).
		c.Role, c.Content, c.Images = memoryv1.Role(t.Role), t.Content, slices.Clone(t.Images)
		c.ToolName, c.ModelProvider, c.ModelName = t.ToolName, t.ModelProvider, t.ModelName
		if len(t.Files) > 0 {
			c.Files = make([]*memoryv1.FileRef, len(t.Files))
			for j, f := range t.Files {
				c.Files[j] = toProtoFileRef(f)
			}
		}
		if !forCall {
			c.Timestamp = timestamppb.New(t.Timestamp)
		}
		if _, legacy := t.ModelMetadata["workflow"]; !forCall || legacy {
			c.ModelMetadata = toStruct(t.ModelMetadata)
		}
		out[i] = c
	}
	return out
}

func fromProtoTurns(turns []*memoryv1.Turn) []memory.Turn {
	out := make([]memory.Turn, len(turns))
	for i, t := range turns {
		files := make([]memory.FileRef, len(t.GetFiles()))
		for j, f := range t.GetFiles() {
			files[j] = fromProtoFileRef(f)
		}
		turn := memory.Turn{
			Role: memory.Role(t.GetRole()), Content: t.GetContent(), Files: files, Images: t.GetImages(),
			ToolName: t.GetToolName(), ModelProvider: t.GetModelProvider(), ModelName: t.GetModelName(),
			ModelMetadata: t.GetModelMetadata().AsMap(), WorkflowState: t.GetWorkflowState().AsMap(),
		}
		if len(turn.ModelMetadata) == 0 {
			turn.ModelMetadata = nil
		}
		if len(turn.WorkflowState) == 0 {
			turn.WorkflowState = nil
		}
		if t.GetTimestamp() != nil {
			turn.Timestamp = t.GetTimestamp().AsTime()
		}
		out[i] = turn
	}
	return out
}

// toStruct converts JSON-shaped maps; values that came from a Struct always
// convert back, so the error is unreachable for stored data.
func toStruct(m map[string]any) *structpb.Struct {
	if len(m) == 0 {
		return nil
	}
	s, err := structpb.NewStruct(m)
	if err != nil {
		return nil
	}
	return s
}

func fromProtoThread(t *memoryv1.Thread) *memory.Thread {
	out := &memory.Thread{
		ID: t.GetThreadId(), ParentID: t.GetParentThreadId(), ToolName: t.GetToolName(), Turns: fromProtoTurns(t.GetTurns()),
		InitialContext: t.GetInitialContext().AsMap(), ClientID: t.GetClientId(),
	}
	if t.GetCreatedAt() != nil {
		out.CreatedAt = t.GetCreatedAt().AsTime()
	}
	if t.GetLastUpdatedAt() != nil {
		out.UpdatedAt = t.GetLastUpdatedAt().AsTime()
	}
	return out
}

func toSummary(sum memory.Summary) *memoryv1.ThreadSummary {
	t := sum.Thread
	return &memoryv1.ThreadSummary{
		ThreadId: t.ID, ParentThreadId: t.ParentID, ToolName: t.ToolName, CreatedAt: timestamppb.New(t.CreatedAt),
		LastUpdatedAt: timestamppb.New(t.UpdatedAt), ExpiresAt: timestamppb.New(t.ExpiresAt),
		TurnCount: int32(sum.TurnCount), FirstPrompt: sum.FirstPrompt, // cut by the store (memory.Preview)
	}
}

func toProtoFileRef(f memory.FileRef) *memoryv1.FileRef {
	ref := &memoryv1.FileRef{Path: f.Path, Sha256: f.SHA256, SizeBytes: int32(f.Size)}
	if !f.Modified.IsZero() {
		ref.ModifiedAt = timestamppb.New(f.Modified)
	}
	return ref
}

func fromProtoFileRef(f *memoryv1.FileRef) memory.FileRef {
	ref := memory.FileRef{Path: f.GetPath(), SHA256: f.GetSha256(), Size: int64(f.GetSizeBytes())}
	if f.GetModifiedAt() != nil {
		ref.Modified = f.GetModifiedAt().AsTime()
	}
	return ref
}

func fromProtoBlobs(blobs []*memoryv1.FileBlob) []memory.Blob {
	out := make([]memory.Blob, len(blobs))
	for i, b := range blobs {
		out[i] = memory.Blob{SHA256: b.GetSha256(), Content: b.GetContent()}
	}
	return out
}

func toSelectResponse(sel memory.Selection) *memoryv1.SelectHistoryResponse {
	resp := &memoryv1.SelectHistoryResponse{
		Turns: historyTurns(sel.Turns), TotalTurns: int32(sel.Total), OmittedTurns: int32(sel.Omitted),
		TokensUsed: clamp(sel.TokensUsed), ToolName: sel.Thread.ToolName, OmittedFiles: int32(sel.OmittedFiles),
		FileTokensUsed: clamp(sel.FileTokens), KnownFiles: sel.Known, HistoryBudget: clamp(sel.HistoryBudget),
		FileBudget: clamp(sel.FileBudget), Tokenizer: sel.Encoding,
	}
	resp.Files = historyFiles(sel.Files)
	return resp
}

func historyFiles(files []memory.HistoryFile) []*memoryv1.HistoryFile {
	out := make([]*memoryv1.HistoryFile, len(files))
	for i, f := range files {
		ref := toProtoFileRef(f.FileRef)
		out[i] = &memoryv1.HistoryFile{Path: f.Path, Sha256: f.SHA256, Content: f.Content,
			SizeBytes: ref.GetSizeBytes(), ModifiedAt: ref.GetModifiedAt(), Tokens: clamp(f.Tokens)}
	}
	return out
}

// clamp fits a count into the int32 the API uses.
func clamp(n int64) int32 { return int32(min(n, 1<<31-1)) }
