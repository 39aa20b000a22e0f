package call

import (
	"fmt"

	memoryv1 "github.com/zenmcp/zen/proto/gen/zen/memory/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// missingThread is the answer to a continuation whose thread memory does
// not have: lost with the store's data (DataLoss, whose message says when),
// or not found. Nil for any other result.
func missingThread(id string, settings *memoryv1.GetSettingsResponse, err error) *Outcome {
	switch st := status.Convert(err); st.Code() {
	case codes.DataLoss:
		return &Outcome{IsError: true, Text: fmt.Sprintf("Conversation thread '%s' is gone: %s. Its history "+
			"cannot be recovered. Start a new conversation by calling the tool again without continuation_id, and "+
			"include the context it needs.", id, st.Message())}
	case codes.NotFound:
		return &Outcome{Text: notFoundMessage(id, settings.GetTtlSeconds()), IsError: true}
	}
	return nil
}

// fullThread is the answer to a continuation of a thread with no room left
// for the exchange (two turns; one for a workflow step, which may have no
// expert's answer): memory would refuse to store it, so the call ends here
// rather than after a model call whose answer nobody could continue.
func fullThread(tool *Tool, thread *memoryv1.Thread, settings *memoryv1.GetSettingsResponse) *Outcome {
	need := 2
	if tool.GetWorkflow() {
		need = 1
	}
	have, limit := len(thread.GetTurns()), int(settings.GetMaxTurns())
	if have+need <= limit {
		return nil
	}
	return &Outcome{IsError: true, Text: fmt.Sprintf("Conversation thread '%s' has reached its limit of %d turns "+
		"(MAX_CONVERSATION_TURNS): it holds %d and this exchange needs %d more, so it could not be kept, and no "+
		"model was called. Start a new conversation by calling the tool again without continuation_id, and include "+
		"the context it needs: a summary of this conversation and the files it used.",
		thread.GetThreadId(), limit, have, need)}
}
