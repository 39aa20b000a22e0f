package tools

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	executorv1 "github.com/zenmcp/zen/proto/gen/zen/executor/v1"
	routerv1 "github.com/zenmcp/zen/proto/gen/zen/router/v1"
	"github.com/zenmcp/zen/services/platform/serve"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// progressEvery spaces progress reports while a reply streams in.
const progressEvery = time.Second

// cutAtOutputLimit ends the answer of a model that stopped at its output
// limit, which would otherwise read as whole: the agent is told, and how
// to have the rest.
const cutAtOutputLimit = "\n\n[zen: the model stopped here, at its output limit (finish reason %q): this answer " +
	"is not finished. To have the rest, continue this conversation asking it to go on from where it stopped.]"

// generation is one model call.
type generation struct {
	model        *routerv1.Model
	system, user string
	images       []string
	temperature  float64
	thinkingMode string
	// label says in progress messages what the call is for.
	label string
}

// generate asks the call's model, with the call's temperature and thinking
// mode when given.
func generate(ctx context.Context, env *Env, c *Call, m modelArgs, system, user string,
	defaultTemp float64) (*routerv1.GenerateDone, error) {
	g := generation{model: c.Model, system: system, user: user, images: c.Images, temperature: defaultTemp,
		thinkingMode: m.ThinkingMode}
	if m.Temperature != nil {
		g.temperature = *m.Temperature
	}
	return run(ctx, env, c, g)
}

// run makes one model call for c, reporting progress as the reply streams
// in, and adds what it used to c's usage.
func run(ctx context.Context, env *Env, c *Call, g generation) (*routerv1.GenerateDone, error) {
	progress := c.Progress
	req := &routerv1.GenerateRequest{
		Model: g.model.GetName(), SystemPrompt: g.system,
		Messages:    []*routerv1.Message{{Role: "user", Content: g.user, Images: g.images}},
		Temperature: g.temperature, HasTemperature: true,
	}
	if g.model.GetSupportsExtendedThinking() {
		req.ThinkingMode = g.thinkingMode
	}
	if progress == nil {
		progress = func(string, int64) {}
	}
	what := g.model.GetName()
	if g.label != "" {
		what += " (" + g.label + ")"
	}
	progress(fmt.Sprintf("asking %s via %s", what, g.model.GetProvider()), 0)
	stream, err := env.Router.Generate(ctx, req, serve.HandOver()) // req is not used again
	if err != nil {
		return nil, fromRouter(ctx, err)
	}
	var chars int64
	last := time.Now()
	for {
		msg, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return nil, status.Error(codes.Internal, "the model stream ended without a result")
		}
		if err != nil {
			return nil, fromRouter(ctx, err)
		}
		if done := msg.GetDone(); done != nil {
			c.used(done.GetModelName(), done.GetProvider(), done.GetUsage().GetInputTokens(),
				done.GetUsage().GetOutputTokens())
			endOf(stream)
			if done.GetAtOutputLimit() {
				done.Content += fmt.Sprintf(cutAtOutputLimit, done.GetFinishReason())
			}
			return done, nil
		}
		chars += int64(len(msg.GetDelta()))
		if time.Since(last) >= progressEvery {
			last = time.Now()
			tokens := chars / 4
			unit := "tokens"
			if tokens == 1 {
				unit = "token"
			}
			progress(fmt.Sprintf("%s is answering: about %d %s so far", what, tokens, unit), tokens)
		}
	}
}

// toolFailure turns a failed router call into a tool error the agent can
// read. Cancellation and deadlines stay gRPC errors so the edge sees them,
// and so do failures of the provider or the router (see fromRouter): the
// edge words those, naming who failed and what to do.
func toolFailure(ctx context.Context, tool string, err error) (*executorv1.ToolResult, error) {
	if stop := aborted(ctx, err); stop != nil {
		return nil, stop
	}
	if err = fromRouter(ctx, err); beyondExecutor(err) {
		return nil, err
	}
	st := status.Convert(err)
	switch st.Code() {
	case codes.Internal, codes.Unknown:
		return errorResult(tool, fmt.Sprintf("Error in %s: the model call failed inside zen; see the server log.", tool), nil), nil
	}
	return errorResult(tool, fmt.Sprintf("Error in %s: %s", tool, st.Message()), nil), nil
}

// aborted returns the error to pass on as is when a failed call was
// cancelled or ran out of time (the edge must see those as such), and nil
// when the failure is the model's, for the tool to report.
func aborted(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return status.FromContextError(ctx.Err()).Err()
	}
	if code := status.Code(err); code == codes.Canceled || code == codes.DeadlineExceeded {
		return err
	}
	return nil
}

// usage adds up what one call's model calls used.
type usage struct {
	mu sync.Mutex
	u  *executorv1.ModelUsage
}

// used records one model call (or clink's CLI run): the last model to
// answer names the call's model, and the tokens add up.
func (c *Call) used(model, provider string, in, out int32) {
	c.usage.mu.Lock()
	defer c.usage.mu.Unlock()
	u := c.usage.u
	if u == nil {
		u = &executorv1.ModelUsage{}
		c.usage.u = u
	}
	u.Model, u.Provider = model, provider
	u.InputTokens += int64(in)
	u.OutputTokens += int64(out)
}

// Usage is what the call's model calls used; nil when it made none.
func (c *Call) Usage() *executorv1.ModelUsage {
	c.usage.mu.Lock()
	defer c.usage.mu.Unlock()
	return c.usage.u
}

// endOf reads the stream's end after its last message, so that the call
// ends with the router's handler (its span; in one process, without a
// goroutine to end it) rather than when the tool's own call does, much
// later. The reply is whole by then: what the end says changes nothing.
func endOf(stream grpc.ServerStreamingClient[routerv1.GenerateResponse]) {
	_, _ = stream.Recv()
}
