package grpcapi

import (
	"cmp"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	routerv1 "github.com/zenmcp/zen/proto/gen/zen/router/v1"
	"github.com/zenmcp/zen/services/platform/origin"
	"github.com/zenmcp/zen/services/platform/telemetry"
	"github.com/zenmcp/zen/services/router/internal/dispatch"
	"github.com/zenmcp/zen/services/router/internal/provider"
	"github.com/zenmcp/zen/services/router/internal/routing"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Server implements routerv1.RouterServiceServer.
type Server struct {
	routerv1.UnimplementedRouterServiceServer
	reg     *routing.Registry
	calls   *dispatch.Dispatcher
	logger  *slog.Logger
	metrics telemetry.Instruments
	// catalogued holds each provider's catalogue names: the only model
	// label values, whatever names clients send.
	catalogued map[catalogueName]bool
	series     seriesCache // the attribute sets of the model metrics
	deltaEvery time.Duration
}

type catalogueName struct{ provider, model string }

// New returns a server over reg whose calls follow policy, recording its
// metrics on in.
func New(reg *routing.Registry, policy dispatch.Policy, logger *slog.Logger, in telemetry.Instruments) *Server {
	s := &Server{reg: reg, calls: dispatch.New(reg, policy, logger, in), logger: logger, metrics: in,
		catalogued: map[catalogueName]bool{}, deltaEvery: deltaEvery}
	for _, e := range reg.Entries() {
		s.catalogued[catalogueName{e.Provider.Name, e.Name}] = true
	}
	return s
}

func toProto(e routing.Entry) *routerv1.Model {
	return &routerv1.Model{
		Name: e.Name, Provider: e.Provider.Name, FriendlyName: e.FriendlyName, Aliases: e.Aliases,
		IntelligenceScore: int32(e.IntelligenceScore), Description: e.Description, ContextWindow: int32(e.ContextWindow),
		MaxOutputTokens: int32(e.MaxOutputTokens), MaxThinkingTokens: int32(e.MaxThinkingTokens),
		SupportsExtendedThinking: e.SupportsExtendedThinking, SupportsSystemPrompts: e.SupportsSystemPrompts,
		SupportsStreaming: e.SupportsStreaming, SupportsFunctionCalling: e.SupportsFunctionCalling,
		SupportsImages: e.SupportsImages, SupportsJsonMode: e.SupportsJSONMode, SupportsTemperature: e.SupportsTemperature,
		TemperatureConstraint: e.TemperatureConstraint, MaxImageSizeMb: e.MaxImageSizeMB,
		UseOpenaiResponseApi: e.UseOpenAIResponseAPI, DefaultReasoningEffort: e.DefaultReasoningEffort,
		AllowCodeGeneration: e.AllowCodeGeneration, Configured: e.Configured, Rank: int32(e.Rank()),
		InputCostPerMillionTokens: e.InputCostPerMillion, OutputCostPerMillionTokens: e.OutputCostPerMillion,
	}
}

func (s *Server) ListModels(_ context.Context, req *routerv1.ListModelsRequest) (*routerv1.ListModelsResponse, error) {
	resp := &routerv1.ListModelsResponse{
		ConfiguredProviders: s.reg.ConfiguredProviders(), DefaultModel: s.reg.DefaultModel(), AutoMode: s.reg.AutoMode(),
		SetupHelp: s.reg.SetupHelp(),
	}
	for _, e := range s.reg.Entries() {
		if req.GetConfiguredOnly() && !e.Configured {
			continue
		}
		resp.Models = append(resp.Models, toProto(e))
	}
	return resp, nil
}

func (s *Server) GetModel(_ context.Context, req *routerv1.GetModelRequest) (*routerv1.GetModelResponse, error) {
	e, ok := s.reg.Lookup(req.GetName())
	if !ok {
		return nil, status.Errorf(codes.NotFound, "no catalogue lists a model or alias named %q", req.GetName())
	}
	return &routerv1.GetModelResponse{Model: toProto(e)}, nil
}

func (s *Server) ResolveModel(_ context.Context, req *routerv1.ResolveModelRequest) (*routerv1.ResolveModelResponse, error) {
	if _, err := routing.ParseCategory(req.GetCategory()); err != nil {
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}
	e, why, err := s.reg.Resolve(req.GetModel(), req.GetCategory())
	if errors.Is(err, routing.ErrNoProvider) {
		return nil, origin.Error(codes.FailedPrecondition, err.Error(), origin.NoProvider, nil)
	}
	if errors.Is(err, routing.ErrNotAvailable) {
		return nil, status.Errorf(codes.NotFound, "model %q is not available with the configured providers", req.GetModel())
	}
	if err != nil {
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}
	return &routerv1.ResolveModelResponse{Model: toProto(e), Reason: why}, nil
}

func (s *Server) Generate(req *routerv1.GenerateRequest, stream grpc.ServerStreamingServer[routerv1.GenerateResponse]) error {
	ctx := stream.Context()
	// Generate serves named models only (ResolveModel picks for auto and the
	// default), so those are refused before any resolving work.
	notServed := req.GetModel() == "" || req.GetModel() == "auto"
	var e routing.Entry
	var err error
	if !notServed {
		e, _, err = s.reg.Resolve(req.GetModel(), "")
	}
	if errors.Is(err, routing.ErrNoProvider) {
		return origin.Error(codes.FailedPrecondition, err.Error(), origin.NoProvider, nil)
	}
	if notServed || err != nil {
		return status.Errorf(codes.NotFound, "model %q is not available with the configured providers", req.GetModel())
	}
	if err := checkImages(req, e); err != nil {
		return status.Error(codes.InvalidArgument, err.Error())
	}
	// A delta that cannot be sent ends the provider's request: nobody will
	// read the rest of the reply.
	callCtx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	var sendErr error
	started := time.Now()
	build := func(served routing.Entry) provider.Request { return request(req, served) }
	deltas := deltaBatch{every: s.deltaEvery, last: started}
	out, err := s.calls.Generate(callCtx, e, build, func(delta string) {
		text, due := deltas.add(delta)
		if sendErr == nil && due {
			sendErr = stream.Send(&routerv1.GenerateResponse{Event: &routerv1.GenerateResponse_Delta{Delta: text}})
			if sendErr != nil {
				stop(sendErr)
			}
		}
	})
	if sendErr != nil {
		err = sendErr // what ended the call, whatever the provider made of it
	}
	if err != nil {
		err = s.toStatus(ctx, err)
		s.record(ctx, e, started, err, provider.Usage{})
		return err
	}
	u := out.Usage
	s.record(ctx, out.Served, started, nil, u)
	cost := out.Served.Cost(u.InputTokens, u.OutputTokens)
	trace.SpanFromContext(ctx).SetAttributes(
		attribute.String("gen_ai.system", out.Served.Provider.Name), attribute.String("gen_ai.response.model", out.Served.Name),
		attribute.Int64("gen_ai.usage.input_tokens", u.InputTokens), attribute.Int64("gen_ai.usage.output_tokens", u.OutputTokens),
		attribute.Int("zen.attempts", out.Attempts), attribute.Float64("zen.cost_usd", cost))
	return stream.Send(&routerv1.GenerateResponse{Event: &routerv1.GenerateResponse_Done{Done: &routerv1.GenerateDone{
		Content: out.Content, FinishReason: out.FinishReason, AtOutputLimit: provider.AtOutputLimit(out.FinishReason),
		ModelName: out.Served.Name, Provider: out.Served.Provider.Name,
		Usage: &routerv1.Usage{InputTokens: clamp(u.InputTokens), OutputTokens: clamp(u.OutputTokens),
			TotalTokens: clamp(u.InputTokens + u.OutputTokens), CostUsd: cost},
	}}})
}

// maxImages is the most images one call may send.
const maxImages = 5

// checkImages holds images to what the model accepts: some at all, at most
// five, within its size limit. The edge checks first; this guards every
// other caller.
func checkImages(req *routerv1.GenerateRequest, e routing.Entry) error {
	var n, total int
	for _, m := range req.GetMessages() {
		for _, img := range m.GetImages() {
			n++
			_, data, _ := strings.Cut(img, ",")
			total += base64.StdEncoding.DecodedLen(len(data))
		}
	}
	switch {
	case n == 0:
		return nil
	case !e.SupportsImages:
		return fmt.Errorf("model %s does not accept images; pick one that does (see listmodels) or send none", e.Name)
	case n > maxImages:
		return fmt.Errorf("%d images: at most %d per call", n, maxImages)
	case e.MaxImageSizeMB > 0 && float64(total) > e.MaxImageSizeMB*1024*1024:
		return fmt.Errorf("images of %.1f MB: %s accepts %.0f MB in all", float64(total)/(1024*1024), e.Name, e.MaxImageSizeMB)
	}
	return nil
}

// request builds the provider request for the entry that serves the call:
// its model name, its temperature rules, its system prompt support.
func request(req *routerv1.GenerateRequest, e routing.Entry) provider.Request {
	preq := provider.Request{Model: e.Name, Stream: e.SupportsStreaming, MaxTokens: int64(req.GetMaxOutputTokens()),
		Responses: e.UseOpenAIResponseAPI, MaxOutputTokens: e.MaxOutputTokens}
	if i := strings.LastIndexByte(req.GetModel(), ':'); i > 0 && e.Provider.Name == "custom" {
		preq.Model = e.Name + req.GetModel()[i:] // keep the Ollama tag: llama3.2:8b
	}
	if req.GetHasTemperature() && e.SupportsTemperature {
		t := e.ClampTemperature(req.GetTemperature())
		preq.Temperature = &t
	}
	if sp := req.GetSystemPrompt(); sp != "" {
		role := "system"
		if !e.SupportsSystemPrompts {
			role = "user"
		}
		preq.Messages = append(preq.Messages, provider.Message{Role: role, Content: sp})
	}
	for _, m := range req.GetMessages() {
		preq.Messages = append(preq.Messages, provider.Message{Role: m.GetRole(), Content: m.GetContent(), Images: m.GetImages()})
	}
	thinking(&preq, req.GetThinkingMode(), e)
	return preq
}

// thinkingShare is the part of a Gemini model's thinking budget each mode
// spends, as the reference sets it.
var thinkingShare = map[string]float64{"minimal": 0.005, "low": 0.08, "medium": 0.33, "high": 0.67, "max": 1.0}

// defaultThinking is the thinking mode of a Gemini call that names none:
// the reference's simple tools' (chat's), which only its Gemini provider
// acted on. The tools that default otherwise (experts, thinkdeep,
// consensus) name their mode.
const defaultThinking = "medium"

// thinking maps thinking_mode to the provider's own knob: Gemini's
// thinking budget, or a reasoning effort for the models that take one (the
// catalogue says which; the reference ignores thinking_mode there, and
// without one the model's default effort holds).
func thinking(preq *provider.Request, mode string, e routing.Entry) {
	if e.Provider.Name != "gemini" {
		preq.ReasoningEffort = e.ReasoningEffort(e.Provider.Name, mode)
		return
	}
	mode = cmp.Or(mode, defaultThinking)
	share, ok := thinkingShare[mode]
	if !e.SupportsExtendedThinking || !ok || e.MaxThinkingTokens == 0 {
		return
	}
	if mode == "medium" && strings.HasPrefix(e.Name, "gemini-3-pro") {
		share = thinkingShare["high"] // this model thinks poorly on less
	}
	budget := int32(float64(e.MaxThinkingTokens) * share)
	preq.ThinkingBudget = &budget
}

func clamp(n int64) int32 { return int32(min(n, 1<<31-1)) }

// retryableOrigin tells a provider that only ever timed out (connected
// but silent) from one that failed otherwise.
func retryableOrigin(failed *dispatch.Failed) origin.Reason {
	for _, e := range failed.Errs {
		var perr *provider.Error
		if !errors.As(e, &perr) || perr.Fault != provider.FaultTimeout {
			return origin.ProviderUnavailable
		}
	}
	return origin.ProviderTimeout
}

// providerOf names the provider of a failed call's first failure.
func providerOf(failed *dispatch.Failed) map[string]string {
	for _, e := range failed.Errs {
		var perr *provider.Error
		if errors.As(e, &perr) {
			return map[string]string{origin.KeyProvider: perr.Provider, origin.KeyModel: perr.Model}
		}
	}
	return nil
}

// toStatus is the one place provider failures become status codes. The
// provider's own message is meant for people, so it is passed on. A caller
// that went away shows as its context's error, from the provider call it
// ended, or as the status of a send to it that failed.
func (s *Server) toStatus(ctx context.Context, err error) error {
	var failed *dispatch.Failed
	switch {
	case errors.Is(err, context.Canceled) || status.Code(err) == codes.Canceled:
		s.logger.DebugContext(ctx, "caller went away", "err", err)
		return status.Error(codes.Canceled, "the caller cancelled the model call")
	case errors.Is(err, context.DeadlineExceeded) || status.Code(err) == codes.DeadlineExceeded:
		// Marked with their origin (the provider), so that the edge blames
		// the provider, not the roles that passed the failure on.
		return origin.Error(codes.DeadlineExceeded, "the model call ran out of time: "+err.Error(),
			origin.ProviderTimeout, nil)
	case errors.As(err, &failed):
		s.logger.WarnContext(ctx, "model call failed", "attempts", failed.Attempts, "err", failed.Error())
		if failed.Retryable() {
			return origin.Error(codes.Unavailable, failed.Error(), retryableOrigin(failed), providerOf(failed))
		}
		return origin.Error(codes.FailedPrecondition, failed.Error(), origin.ProviderError, providerOf(failed))
	}
	s.logger.ErrorContext(ctx, "generate failed", "err", err)
	return status.Error(codes.Internal, "router: internal error")
}
