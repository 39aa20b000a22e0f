package grpcapi

import (
	"context"
	"log/slog"
	"sync"

	executorv1 "github.com/zenmcp/zen/proto/gen/zen/executor/v1"
	routerv1 "github.com/zenmcp/zen/proto/gen/zen/router/v1"
	"github.com/zenmcp/zen/services/executor/internal/tools"
	"github.com/zenmcp/zen/services/platform/reply"
	"github.com/zenmcp/zen/services/platform/secrets"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Server implements executorv1.ExecutorServiceServer.
type Server struct {
	executorv1.UnimplementedExecutorServiceServer
	env    *tools.Env
	scrub  *secrets.Scrubber
	logger *slog.Logger
}

// New returns a server whose tools use env. Every result and progress
// message it sends is scrubbed of zen's secrets first: a model or a CLI
// may repeat a key it saw, and what leaves here reaches clients and
// threads.
func New(env *tools.Env, scrub *secrets.Scrubber, logger *slog.Logger) *Server {
	return &Server{env: env, scrub: scrub, logger: logger}
}

func (s *Server) ListTools(ctx context.Context, _ *executorv1.ListToolsRequest) (*executorv1.ListToolsResponse, error) {
	models, err := s.env.Router.ListModels(ctx, &routerv1.ListModelsRequest{})
	if err != nil {
		s.logger.WarnContext(ctx, "list tools: router unavailable", "err", err)
		return nil, status.Error(codes.Unavailable, "executor: the router is unavailable, so tool schemas cannot list models")
	}
	catalog := tools.NewCatalog(models)
	if s.env.CLIs != nil {
		catalog.CLIs, catalog.CLIRoles = s.env.CLIs.Names(), s.env.CLIs.Roles()
	}
	resp := &executorv1.ListToolsResponse{}
	for _, t := range tools.Enabled(s.env.Disabled) {
		p, err := t.Proto(catalog)
		if err != nil {
			s.logger.ErrorContext(ctx, "tool schema", "tool", t.Name, "err", err)
			return nil, status.Error(codes.Internal, "executor: internal error")
		}
		resp.Tools = append(resp.Tools, p)
	}
	return resp, nil
}

func (s *Server) ExecuteTool(req *executorv1.ExecuteToolRequest, stream grpc.ServerStreamingServer[executorv1.ExecuteToolResponse]) error {
	ctx := stream.Context()
	tool, ok := tools.Find(req.GetToolName(), s.env.Disabled)
	if !ok {
		return status.Errorf(codes.NotFound, "unknown tool %q", req.GetToolName())
	}
	if tool.RequiresModel && req.GetModel() == nil {
		return status.Errorf(codes.InvalidArgument, "tool %s needs a resolved model", tool.Name)
	}
	var mu sync.Mutex
	call := &tools.Call{
		Args: req.GetArguments().AsMap(), Model: req.GetModel(), ModelRequested: req.GetModelRequested(),
		Conversation: req.GetConversation(), Files: req.GetFiles(), Images: req.GetImages(), ImageRefs: req.GetImageRefs(), RemainingTurns: int(req.GetRemainingTurns()),
		WorkflowState: req.GetWorkflowState(), Skipped: req.GetSkippedFiles(),
	}
	if !req.GetNoProgress() {
		call.Progress = func(msg string, tokens int64) {
			mu.Lock()
			defer mu.Unlock()
			_ = stream.Send(&executorv1.ExecuteToolResponse{Event: &executorv1.ExecuteToolResponse_Progress{
				Progress: &executorv1.Progress{Message: s.scrub.String(msg), OutputTokens: int32(tokens)},
			}})
		}
	}
	result, err := tool.Run(ctx, s.env, call)
	if err != nil {
		if st, ok := status.FromError(err); ok && st.Code() != codes.Unknown {
			// Details stay: they say where a failure came from (origin).
			p := st.Proto()
			p.Message = s.scrub.String(p.GetMessage())
			return status.ErrorProto(p)
		}
		s.logger.ErrorContext(ctx, "tool failed", "tool", tool.Name, "err", err)
		return status.Error(codes.Internal, "executor: internal error")
	}
	result.Usage = call.Usage()
	s.scrub.Message(result)
	if result.Reply, err = reply.ScrubJSON(result.GetReply(), s.scrub); err != nil {
		s.logger.ErrorContext(ctx, "tool reply", "tool", tool.Name, "err", err)
		return status.Error(codes.Internal, "executor: internal error")
	}
	mu.Lock()
	defer mu.Unlock()
	return stream.Send(&executorv1.ExecuteToolResponse{Event: &executorv1.ExecuteToolResponse_Result{Result: result}})
}
