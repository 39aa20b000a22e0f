package call

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	"github.com/google/uuid"
	executorv1 "github.com/zenmcp/zen/proto/gen/zen/executor/v1"
	memoryv1 "github.com/zenmcp/zen/proto/gen/zen/memory/v1"
	routerv1 "github.com/zenmcp/zen/proto/gen/zen/router/v1"
	"github.com/zenmcp/zen/services/edge/internal/files"
	"github.com/zenmcp/zen/services/platform/reply"
	"github.com/zenmcp/zen/services/platform/secrets"
	"github.com/zenmcp/zen/services/platform/serve"
	"github.com/zenmcp/zen/services/platform/storedjson"
	"github.com/zenmcp/zen/services/platform/telemetry"
	"github.com/zenmcp/zen/services/platform/textcut"
	"github.com/zenmcp/zen/services/platform/turnmeta"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// Backends are the services a call uses.
type Backends struct {
	Memory   memoryv1.MemoryServiceClient
	Router   routerv1.RouterServiceClient
	Executor executorv1.ExecutorServiceClient
	// MemoryHealth, when set, says whether memory can store right now: a
	// call that would store its exchange then fails fast, instead of after
	// a model call whose answer cannot be kept.
	MemoryHealth *HealthWatch
}

// MemoryService is the name memory's health service reports under.
const MemoryService = "zen.memory.v1.MemoryService"

// memoryReady fails when memory last said it cannot store.
func (r *Runner) memoryReady() error {
	if r.b.MemoryHealth.Down() {
		return &BackendError{"memory", status.Error(codes.Unavailable, "memory cannot reach its store")}
	}
	return nil
}

// keepsThreads tells the tools whose exchanges are stored.
func (t *Tool) keepsThreads() bool {
	return t.GetRequiresModel() || t.GetWorkflow() || t.GetFilesArgument() != ""
}

// Outcome is what the client receives: the tool's reply (every answer,
// refusals included, is the JSON envelope).
type Outcome struct {
	// Reply must not change once deliver has encoded it: the client gets
	// encoded, not Reply.
	Reply   *reply.Reply
	IsError bool
	// Summary says what the call did, for the log; Run fills it even when
	// the call fails.
	Summary Summary
	// encoded is Reply as the client reads it, once deliver has scrubbed,
	// capped and encoded it: Reply is read-only from then on.
	encoded []byte
	// keepsToolErrorShape keeps a refusal out of a workflow step's failure
	// shape (asWorkflowError): the reference's server makes it before any
	// tool runs (an unknown model), in one shape for every tool.
	keepsToolErrorShape bool
}

// Encoded is the reply as the client reads it: the bytes deliver made, or,
// for the edge's own refusals, the reply encoded now.
func (o Outcome) Encoded() ([]byte, error) {
	if o.encoded != nil {
		return o.encoded, nil
	}
	return o.Reply.MarshalJSON()
}

// BackendError is a service that failed in a way the agent cannot fix.
type BackendError struct {
	Role string
	Err  error
}

func (e *BackendError) Error() string { return e.Role + ": " + e.Err.Error() }
func (e *BackendError) Unwrap() error { return e.Err }

// Runner runs tool calls.
type Runner struct {
	b      Backends
	logger *slog.Logger
	tools  map[string]*Tool
	files  files.Policy
	// promptLimit bounds user-written text (see PromptLimit).
	promptLimit int
	// outputTokens bounds a result (MAX_MCP_OUTPUT_TOKENS).
	outputTokens int
	// Secrets, when set, are scrubbed from every outcome and progress
	// message (see Run).
	Secrets *secrets.Scrubber
	// dirs are the working directories that passed the check lately.
	dirs lapsing[string, struct{}]
	// models are the router's resolutions given lately (resolve).
	models lapsing[resolution, *routerv1.Model]
}

// NewRunner returns a runner for the given tools, reading files as policy
// allows and holding prompts to promptLimit characters. A Runner is made
// only here: its zero value keeps nothing it learned (see lapsing).
func NewRunner(b Backends, tools []*Tool, policy files.Policy, maxOutputTokens int, logger *slog.Logger) *Runner {
	m := map[string]*Tool{}
	for _, t := range tools {
		m[t.GetName()] = t
	}
	return &Runner{b: b, tools: m, files: policy, promptLimit: PromptLimit(maxOutputTokens), outputTokens: maxOutputTokens,
		logger: logger, dirs: newLapsing[string, struct{}](maxCheckedDirs, dirCheckLasts),
		models: newLapsing[resolution, *routerv1.Model](maxResolutions, resolutionLasts)}
}

// toolError is a refusal the edge makes before the tool runs, worded as
// the tool's own errors are (see reply.Error).
func toolError(tool, msg string, meta map[string]any) Outcome {
	r := reply.Error(tool, quoteLittle(msg))
	if meta != nil {
		r.With(meta)
	}
	return Outcome{IsError: true, Reply: r}
}

// run executes one call for Run. Progress, when set, hears what the call
// is doing; sum learns what it did.
func (r *Runner) run(ctx context.Context, name string, rawArgs json.RawMessage,
	progress func(string), sum *Summary) (Outcome, error) {
	asked := time.Now()
	quiet := progress == nil // the client asked for no progress
	if quiet {
		progress = func(string) {}
	}
	tool, ok := r.tools[name]
	if !ok {
		return Outcome{}, &UnknownToolError{Name: name}
	}
	args, bad := tool.Decode(rawArgs)
	if bad != nil {
		var loose map[string]any
		_ = json.Unmarshal(rawArgs, &loose) // for the step number, when there is one
		return tool.asWorkflowError(*bad, loose), nil
	}
	sum.requested(args)
	if tool.keepsThreads() {
		if err := r.memoryReady(); err != nil {
			return Outcome{}, err
		}
	}
	var learnt prepared
	req, out, err := r.prepare(ctx, tool, args, progress, &learnt)
	if err != nil || out != nil {
		return tool.asWorkflowError(deref(out), args), err
	}
	sum.prepared(req)
	req.NoProgress = quiet
	result, err := r.execute(ctx, req, progress)
	if err != nil {
		return Outcome{}, err
	}
	sum.executed(result)
	stampTurns(result.GetTurns(), asked, time.Now(), telemetry.TraceID(ctx))
	return r.finish(ctx, tool, req, result, learnt, sum)
}

// stampTurns dates the exchange's turns the executor left undated: the
// request when the call came in, the rest when the answer was ready.
// Memory would date them all as it stores them, at one moment. Each turn
// also keeps the exchange's trace id in its model_metadata, so that a
// person reading the thread (the gateway's thread browser) can find the
// trace of the call that wrote it.
func stampTurns(turns []*memoryv1.Turn, asked, answered time.Time, traceID string) {
	for _, t := range turns {
		if traceID != "" {
			t.ModelMetadata = turnmeta.PutTraceID(t.ModelMetadata, traceID)
		}
		if t.GetTimestamp() != nil {
			continue
		}
		at := answered
		if t.GetRole() == memoryv1.Role_ROLE_USER {
			at = asked
		}
		t.Timestamp = timestamppb.New(at)
	}
}

func deref(o *Outcome) Outcome {
	if o == nil {
		return Outcome{}
	}
	return *o
}

// execute streams the executor's answer, passing progress on.
func (r *Runner) execute(ctx context.Context, req *executorv1.ExecuteToolRequest, progress func(string)) (*executorv1.ToolResult, error) {
	// Nothing changes the request from here (finish only reads it), so in
	// one process it is not copied.
	stream, err := r.b.Executor.ExecuteTool(ctx, req, serve.HandOver())
	if err != nil {
		return nil, &BackendError{"executor", err}
	}
	for {
		msg, err := stream.Recv()
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, &BackendError{"executor", err}
		}
		if p := msg.GetProgress(); p != nil {
			progress(p.GetMessage())
			continue
		}
		if res := msg.GetResult(); res != nil {
			// The stream's end too, so that the call ends (its span; in one
			// process, without a goroutine to end it) with the executor's
			// handler, not with the client's request. The result is whole:
			// what the end says changes nothing.
			_, _ = stream.Recv()
			// The turns are scrubbed before they are stored, for the same
			// reasons as the reply (see finish).
			r.Secrets.Message(res)
			return res, nil
		}
	}
}

// prepared is what preparing a call learns that only its end reads.
type prepared struct {
	// omitted are the files of named directories left out.
	omitted files.Omitted
	// turnCount is the thread's turn count memory prepared the call with
	// (PrepareCallResponse.turn_count): the append looks for a stored
	// attempt of the exchange no further back.
	turnCount int32
	// unkept says why the exchange of a call that continues a full thread
	// is not stored (unkeptExchange); "" when it is.
	unkept string
}

// finish stores the exchange and adds to the tool's reply what transport
// knows: the files left out (learnt's and the request's skipped files),
// the trace id, the continuation, the output cap. sum learns the thread the
// exchange went to.
func (r *Runner) finish(ctx context.Context, tool *Tool, req *executorv1.ExecuteToolRequest,
	res *executorv1.ToolResult, learnt prepared, sum *Summary) (Outcome, error) {
	out, err := reply.Decode(res.GetReply())
	if err != nil {
		r.logger.ErrorContext(ctx, "executor reply", "tool", tool.GetName(), "err", err)
		return Outcome{}, &BackendError{"executor", status.Error(codes.Internal, "executor: its reply did not decode")}
	}
	noteOmitted(out, req.GetModel(), learnt.omitted)
	noteSkipped(out, req.GetSkippedFiles())
	out.Metadata.TraceID = telemetry.TraceID(ctx)
	if code := res.GetGeneratedCode(); code != "" {
		r.saveGeneratedCode(out, req.GetArguments().AsMap(), code)
	}
	if res.GetIsError() || !res.GetOffersContinuation() || len(res.GetTurns()) == 0 {
		return r.deliver(out, res.GetIsError(), ""), nil
	}
	if learnt.unkept != "" {
		notContinued(out, unkeptAnswer(learnt.unkept))
		return r.deliver(out, false, ""), nil
	}
	threadID, stored, remaining, err := r.store(ctx, tool, req, res, learnt.turnCount)
	if err != nil {
		// The answer is good; only the continuation is lost. Say so rather
		// than throw the answer away.
		r.logger.ErrorContext(ctx, "store exchange", "tool", tool.GetName(), "err", err)
		notContinued(out, saveFailure(err))
		if _, ok := out.Fields["next_steps"]; ok && status.Code(err) == codes.Aborted {
			// A step another overtook: what the agent does next is send
			// it again, not the step after it.
			out.Fields["next_steps"] = out.Metadata.ContinuationError
		}
		return r.deliver(out, false, ""), nil
	}
	// An offer needs room for one more exchange: two turns.
	switch res.GetContinuation() {
	case executorv1.Continuation_CONTINUATION_ID:
		// A workflow names its thread even at the turn limit: the steps so
		// far are stored, and the agent needs the id to report them.
		if stored {
			out.ContinuationID = threadID
		}
	case executorv1.Continuation_CONTINUATION_OFFER_KEEP_STATUS:
		if stored && remaining >= 2 {
			out.ContinuationOffer = &reply.Offer{ContinuationID: threadID, RemainingTurns: remaining,
				Note: fmt.Sprintf("The %s workflow can continue for %s.", tool.GetName(), reply.TurnsLeft(remaining))}
		}
	default:
		if stored && remaining >= 2 {
			out.Status = reply.StatusContinuationAvailable
			out.ContinuationOffer = &reply.Offer{ContinuationID: threadID, RemainingTurns: remaining,
				Note: "You can continue this conversation for " + reply.TurnsLeft(remaining) + "."}
		}
	}
	if !stored {
		threadID = "" // nothing of this exchange is in the thread to read back
		// The thread had no room for this exchange (calls raced for its
		// last turns, or a workflow's last step wrote two turns with one
		// left): it would look like one that was saved.
		notContinued(out, "this answer was not saved: the conversation had reached its turn "+
			"limit (MAX_CONVERSATION_TURNS). Start a new conversation by calling the tool again without "+
			"continuation_id")
	} else {
		sum.ThreadID = threadID
	}
	return r.deliver(out, false, threadID), nil
}

// deliver makes the reply what the client reads, once: scrubbed (a split
// executor may not know every secret; before the cap, so a cut cannot
// leave part of one), capped to the client's budget, and encoded.
func (r *Runner) deliver(out *reply.Reply, isError bool, threadID string) Outcome {
	out.Scrub(r.Secrets)
	return Outcome{Reply: out, IsError: isError, encoded: capOutput(out, r.outputTokens, threadID)}
}

// store creates the thread or appends to it, retrying while memory is
// unavailable (retryMemory). It reports whether the turns were stored and
// how many more turns the thread may then hold, under the limit memory
// enforces now.
func (r *Runner) store(ctx context.Context, tool *Tool, req *executorv1.ExecuteToolRequest,
	res *executorv1.ToolResult, turnCount int32) (string, bool, int, error) {
	blobs := make([]*memoryv1.FileBlob, len(req.GetFiles()))
	for i, f := range req.GetFiles() {
		blobs[i] = &memoryv1.FileBlob{Sha256: f.GetSha256(), Content: f.GetContent()}
	}
	// The model the exchange ran with: memory keeps its window for a
	// continuation that inherits it.
	var window *memoryv1.ModelWindow
	if m := req.GetModel(); m != nil {
		window = modelWindow(m)
	}
	fitTurns(res.GetTurns())
	if c := req.GetConversation(); c != nil {
		// One exchange id for every attempt: memory stores a retried
		// append whose first attempt got through only once.
		add := &memoryv1.AppendTurnsRequest{ThreadId: c.GetThreadId(), Turns: res.GetTurns(), Blobs: blobs,
			ExchangeId: uuid.NewString(), ModelWindow: window, TurnCountSeen: turnCount,
			RequireStateUnchanged: carriesState(res.GetTurns())}
		var resp *memoryv1.AppendTurnsResponse
		err := r.retryMemory(ctx, "AppendTurns", func(ctx context.Context, opts ...grpc.CallOption) (err error) {
			resp, err = r.b.Memory.AppendTurns(ctx, add, opts...)
			return err
		})
		if err != nil {
			return "", false, 0, err
		}
		return c.GetThreadId(), resp.GetAccepted(), int(resp.GetRemainingTurns()), nil
	}
	var resp *memoryv1.CreateThreadResponse
	err := r.retryMemory(ctx, "CreateThread", func(ctx context.Context, opts ...grpc.CallOption) (err error) {
		resp, err = r.b.Memory.CreateThread(ctx, &memoryv1.CreateThreadRequest{
			ToolName: tool.GetName(), InitialContext: res.GetInitialContext(), Turns: res.GetTurns(), Blobs: blobs,
			ModelWindow: window,
		}, opts...)
		return err
	})
	if err != nil {
		return "", false, 0, err
	}
	return resp.GetThread().GetThreadId(), true, int(resp.GetRemainingTurns()), nil
}

// notKept ends the start of an answer longer than a turn keeps.
const notKept = "\n\n[zen: the rest of this answer, past what a conversation keeps of one turn, was not kept]"

// fitTurns keeps the start of a turn's text longer than memory keeps (a
// model allowed more output than that), saying so: memory refused the
// whole exchange once the model had answered and been billed, and the
// rest of the answer, past the client's cut, existed nowhere.
func fitTurns(turns []*memoryv1.Turn) {
	for _, t := range turns {
		if len(t.GetContent()) > storedjson.MaxTurnBytes {
			t.Content = textcut.Prefix(t.GetContent(), storedjson.MaxTurnBytes-len(notKept)) + notKept
		}
	}
}

// carriesState reports whether turns keep a workflow's state: such a step
// builds on the state of the step before it, and is stored only on the
// thread its call was prepared with.
func carriesState(turns []*memoryv1.Turn) bool {
	return len(turns) > 0 && turns[len(turns)-1].GetWorkflowState() != nil
}

// UnknownToolError is a call to a tool zen does not have.
type UnknownToolError struct{ Name string }

func (e *UnknownToolError) Error() string { return "unknown tool: " + e.Name }
