package tools

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	executorv1 "github.com/zenmcp/zen/proto/gen/zen/executor/v1"
	routerv1 "github.com/zenmcp/zen/proto/gen/zen/router/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// progressEvery spaces progress reports while a reply streams in.
const progressEvery = time.Second

// generate asks the router for a reply, reporting progress as it streams.
func generate(ctx context.Context, env *Env, c *Call, system, user string, defaultTemp float64) (*routerv1.GenerateDone, error) {
	req := &routerv1.GenerateRequest{
		Model: c.Model.GetName(), SystemPrompt: system,
		Messages:    []*routerv1.Message{{Role: "user", Content: user, Images: c.Images}},
		Temperature: defaultTemp, HasTemperature: true,
	}
	if t, ok := c.Args["temperature"].(float64); ok {
		req.Temperature = t
	}
	if mode, ok := c.Args["thinking_mode"].(string); ok && c.Model.GetSupportsExtendedThinking() {
		req.ThinkingMode = mode
	}
	progress := c.Progress
	if progress == nil {
		progress = func(string, int64) {}
	}
	progress(fmt.Sprintf("asking %s (%s)", c.Model.GetName(), c.Model.GetProvider()), 0)
	stream, err := env.Router.Generate(ctx, req)
	if err != nil {
		return nil, err
	}
	var chars int64
	last := time.Now()
	for {
		msg, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return nil, status.Error(codes.Internal, "the model stream ended without a result")
		}
		if err != nil {
			return nil, err
		}
		if done := msg.GetDone(); done != nil {
			return done, nil
		}
		chars += int64(len(msg.GetDelta()))
		if time.Since(last) >= progressEvery {
			last = time.Now()
			tokens := chars / 4
			progress(fmt.Sprintf("%s is answering: about %d tokens so far", c.Model.GetName(), tokens), tokens)
		}
	}
}

// toolFailure turns a failed model call into a tool error the agent can
// read; cancellation and deadlines stay gRPC errors so the edge sees them.
func toolFailure(ctx context.Context, tool string, err error) (*executorv1.ToolResult, error) {
	if ctx.Err() != nil {
		return nil, status.FromContextError(ctx.Err()).Err()
	}
	st := status.Convert(err)
	switch st.Code() {
	case codes.Canceled, codes.DeadlineExceeded:
		return nil, err
	case codes.Internal, codes.Unknown:
		return errorResult(tool, fmt.Sprintf("Error in %s: the model call failed inside zen; see the server log.", tool), nil), nil
	}
	return errorResult(tool, fmt.Sprintf("Error in %s: %s", tool, st.Message()), nil), nil
}
