package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	memoryv1 "github.com/zenmcp/zen/proto/gen/zen/memory/v1"
	"github.com/zenmcp/zen/services/platform/auth"
	"github.com/zenmcp/zen/services/platform/slots"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Thread resources let an agent that lost its context find a conversation
// again: zen://threads lists the recent ones, zen://threads/{id} reads one.
const (
	threadsURI     = "zen://threads"
	threadTemplate = "zen://threads/{thread_id}"
	recentThreads  = 50
)

type threadResources struct {
	memory  memoryv1.MemoryServiceClient
	now     func() time.Time
	reading *slots.PerClient // readsEach a client
}

func addThreadResources(s *mcp.Server, memory memoryv1.MemoryServiceClient) {
	r := threadResources{memory: memory, now: time.Now, reading: slots.New(readsEach)}
	s.AddResource(&mcp.Resource{
		URI: threadsURI, Name: "threads", Title: "Recent zen conversations", MIMEType: "application/json",
		Description: "The most recently updated conversations: continuation_id, tool, first prompt and age. " +
			"Pass a continuation_id to any tool to go on.",
	}, r.list)
	s.AddResourceTemplate(&mcp.ResourceTemplate{
		URITemplate: threadTemplate, Name: "thread", Title: "A zen conversation", MIMEType: "application/json",
		Description: "One conversation with its turns: the newest that fit in 256 KiB.",
	}, r.read)
}

func (r threadResources) list(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	ctx = withCaller(ctx, req.Extra)
	resp, err := r.memory.ListThreads(ctx, &memoryv1.ListThreadsRequest{PageSize: recentThreads})
	if err != nil {
		return nil, resourceError(req.Params.URI, err)
	}
	type entry struct {
		ContinuationID string `json:"continuation_id"`
		Tool           string `json:"tool"`
		FirstPrompt    string `json:"first_prompt"`
		Turns          int32  `json:"turns"`
		LastUpdated    string `json:"last_updated_at"`
		Age            string `json:"age"`
		ExpiresIn      string `json:"expires_in"`
	}
	out := []entry{}
	now := r.now()
	for _, t := range resp.GetThreads() {
		updated, expires := t.GetLastUpdatedAt().AsTime(), t.GetExpiresAt().AsTime()
		out = append(out, entry{ContinuationID: t.GetThreadId(), Tool: t.GetToolName(), FirstPrompt: t.GetFirstPrompt(),
			Turns: t.GetTurnCount(), LastUpdated: updated.UTC().Format(time.RFC3339),
			Age: now.Sub(updated).Round(time.Second).String(), ExpiresIn: expires.Sub(now).Round(time.Second).String()})
	}
	text, err := json.MarshalIndent(map[string]any{"threads": out}, "", "  ")
	if err != nil {
		return nil, err
	}
	return &mcp.ReadResourceResult{Cacheable: ownersOnly,
		Contents: []*mcp.ResourceContents{{URI: threadsURI, MIMEType: "application/json", Text: string(text)}}}, nil
}

func (r threadResources) read(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	ctx = withCaller(ctx, req.Extra)
	id, ok := strings.CutPrefix(req.Params.URI, threadsURI+"/")
	if !ok || id == "" || strings.Contains(id, "/") {
		return nil, mcp.ResourceNotFoundError(req.Params.URI)
	}
	release, ok := r.reading.TryTake(auth.Client(ctx))
	if !ok {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf(
			"zen is reading %d conversations for this client already (every caller, without tokens): read this "+
				"one once one of them has finished", readsEach)}
	}
	defer release()
	resp, err := r.memory.GetThread(ctx, &memoryv1.GetThreadRequest{ThreadId: id})
	if err != nil {
		return nil, resourceError(req.Params.URI, err)
	}
	text, note, err := fitThread(ctx, resp.GetThread(), threadAnswerBytes)
	if err != nil {
		return nil, err
	}
	contents := []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "application/json", Text: text}}
	if note != "" {
		contents = append(contents, &mcp.ResourceContents{URI: req.Params.URI, MIMEType: "text/plain", Text: note})
	}
	return &mcp.ReadResourceResult{Cacheable: ownersOnly, Contents: contents}, nil
}

// ownersOnly marks an answer as its client's alone: the SDK calls an
// answer that says nothing "public", which any cache between may keep and
// serve to another client.
var ownersOnly = mcp.Cacheable{CacheScope: "private"}

// resourceError: a missing thread, or one lost with the store's data
// (asking again will not bring it back), is the resource-not-found error;
// memory trouble is the server's.
func resourceError(uri string, err error) error {
	if c := status.Code(err); c == codes.NotFound || c == codes.DataLoss {
		return mcp.ResourceNotFoundError(uri)
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "zen's memory service could not answer; try again shortly"}
}
