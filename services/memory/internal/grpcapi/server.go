package grpcapi

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	memoryv1 "github.com/zenmcp/zen/proto/gen/zen/memory/v1"
	"github.com/zenmcp/zen/services/memory/internal/memory"
	"github.com/zenmcp/zen/services/platform/auth"
	"github.com/zenmcp/zen/services/platform/origin"
	"github.com/zenmcp/zen/services/platform/slots"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Server implements memoryv1.MemoryServiceServer over a memory.Service.
type Server struct {
	memoryv1.UnimplementedMemoryServiceServer
	svc    *memory.Service
	logger *slog.Logger
	// calls are the prepares of calls' threads, reads every other read of
	// a whole thread (reads.go).
	calls, reads threadReads
}

// New returns a server for svc.
func New(svc *memory.Service, logger *slog.Logger) *Server {
	return &Server{svc: svc, logger: logger, calls: newThreadReads("calls' prepares"),
		reads: newThreadReads("thread reads")}
}

func (s *Server) GetSettings(context.Context, *memoryv1.GetSettingsRequest) (*memoryv1.GetSettingsResponse, error) {
	return &memoryv1.GetSettingsResponse{MaxTurns: int32(s.svc.MaxTurns()), TtlSeconds: s.svc.TTL().Seconds(),
		Warnings: s.svc.Warnings()}, nil
}

func (s *Server) CreateThread(ctx context.Context, req *memoryv1.CreateThreadRequest) (*memoryv1.CreateThreadResponse, error) {
	t, err := s.svc.Create(ctx, memory.CreateParams{
		ToolName: req.GetToolName(), ParentID: req.GetParentThreadId(), InitialContext: req.GetInitialContext().AsMap(),
		ClientID: auth.Client(ctx), Blobs: fromProtoBlobs(req.GetBlobs()),
		Turns: memory.Served(fromProtoTurns(req.GetTurns()), fromProtoWindow(req.GetModelWindow())),
	})
	if err != nil {
		return nil, s.toStatus(ctx, "create thread", err)
	}
	return &memoryv1.CreateThreadResponse{Thread: toProtoThread(t),
		RemainingTurns: int32(s.svc.MaxTurns() - len(t.Turns))}, nil
}

func (s *Server) GetThread(ctx context.Context, req *memoryv1.GetThreadRequest) (*memoryv1.GetThreadResponse, error) {
	if req.GetView() == memoryv1.ThreadView_THREAD_VIEW_BASIC {
		release, err := s.reads.take(ctx)
		if err != nil {
			return nil, s.toStatus(ctx, "get thread", err)
		}
		defer release()
		t, n, err := s.svc.Head(ctx, req.GetThreadId(), auth.Client(ctx))
		if err != nil {
			return nil, s.toStatus(ctx, "get thread", err)
		}
		return &memoryv1.GetThreadResponse{Thread: toProtoThread(t), TurnCount: int32(n), Weight: t.Weight}, nil
	}
	read, err := s.reads.whole(ctx)
	if err != nil {
		return nil, s.toStatus(ctx, "get thread", err)
	}
	defer read.done()
	chain, err := s.svc.ReadChain(ctx, req.GetThreadId(), auth.Client(ctx), read.admit)
	if err == nil {
		err = ctx.Err() // its caller left: no answer to build
	}
	if err != nil {
		return nil, s.toStatus(ctx, "get thread", err)
	}
	t := chain[len(chain)-1]
	if err := within(t, req.GetMaxWeight()); err != nil {
		return nil, err
	}
	return &memoryv1.GetThreadResponse{Thread: toProtoThread(t), LastModel: memory.LastModelOf(chain),
		TurnCount: int32(len(t.Turns)), Weight: t.Weight}, nil
}

func (s *Server) AppendTurns(ctx context.Context, req *memoryv1.AppendTurnsRequest) (*memoryv1.AppendTurnsResponse, error) {
	turns := memory.Served(fromProtoTurns(req.GetTurns()), fromProtoWindow(req.GetModelWindow()))
	ex := memory.Exchange{ID: req.GetExchangeId(), After: int(req.GetTurnCountSeen()),
		Unchanged: req.GetRequireStateUnchanged()}
	n, err := s.svc.Append(ctx, req.GetThreadId(), auth.Client(ctx), ex, turns, fromProtoBlobs(req.GetBlobs()))
	resp := &memoryv1.AppendTurnsResponse{Accepted: true, TurnCount: int32(n),
		RemainingTurns: int32(s.svc.MaxTurns() - n)}
	if errors.Is(err, memory.ErrTurnLimit) {
		resp.Accepted = false
		return resp, nil
	}
	if err != nil {
		return nil, s.toStatus(ctx, "append turns", err)
	}
	return resp, nil
}

func (s *Server) SelectHistory(ctx context.Context, req *memoryv1.SelectHistoryRequest) (*memoryv1.SelectHistoryResponse, error) {
	read, err := s.reads.whole(ctx)
	if err != nil {
		return nil, s.toStatus(ctx, "select history", err)
	}
	defer read.done()
	newFiles := make([]memory.FileRef, len(req.GetNewFiles()))
	for i, f := range req.GetNewFiles() {
		newFiles[i] = fromProtoFileRef(f)
	}
	chain, err := s.svc.ReadChain(ctx, req.GetThreadId(), auth.Client(ctx), read.admit)
	if err != nil {
		return nil, s.toStatus(ctx, "select history", err)
	}
	sel, err := s.svc.SelectFrom(ctx, chain, memory.SelectParams{ContextWindow: int64(req.GetContextWindow()),
		Budget: int64(req.GetTokenBudget()), Model: req.GetModel(), NewFiles: newFiles})
	if err != nil {
		return nil, s.toStatus(ctx, "select history", err)
	}
	return toSelectResponse(sel), nil
}

func (s *Server) ListThreads(ctx context.Context, req *memoryv1.ListThreadsRequest) (*memoryv1.ListThreadsResponse, error) {
	page, err := s.svc.List(ctx, auth.Client(ctx), req.GetToolName(), int(req.GetPageSize()), req.GetPageToken())
	if err != nil {
		return nil, s.toStatus(ctx, "list threads", err)
	}
	resp := &memoryv1.ListThreadsResponse{NextPageToken: page.Next}
	for _, sum := range page.Summaries {
		resp.Threads = append(resp.Threads, toSummary(sum))
	}
	return resp, nil
}

func (s *Server) DeleteThread(ctx context.Context, req *memoryv1.DeleteThreadRequest) (*memoryv1.DeleteThreadResponse, error) {
	if err := s.svc.Delete(ctx, req.GetThreadId(), auth.Client(ctx)); err != nil {
		return nil, s.toStatus(ctx, "delete thread", err)
	}
	return &memoryv1.DeleteThreadResponse{}, nil
}

func (s *Server) BranchThread(ctx context.Context, req *memoryv1.BranchThreadRequest) (*memoryv1.BranchThreadResponse, error) {
	release, err := s.reads.take(ctx)
	if err != nil {
		return nil, s.toStatus(ctx, "branch thread", err)
	}
	defer release()
	t, err := s.svc.Branch(ctx, req.GetThreadId(), auth.Client(ctx))
	if err != nil {
		return nil, s.toStatus(ctx, "branch thread", err)
	}
	return &memoryv1.BranchThreadResponse{Thread: toProtoThread(t)}, nil
}

func (s *Server) ExportThreads(req *memoryv1.ExportThreadsRequest,
	stream grpc.ServerStreamingServer[memoryv1.ExportThreadsResponse]) error {
	ctx, id := stream.Context(), req.GetThreadId()
	op := "export threads"
	if id != "" {
		op = "export thread"
	}
	slot, err := s.reads.take(ctx)
	if err != nil {
		return s.toStatus(ctx, op, err)
	}
	defer slot()
	if id != "" {
		err = s.exportOne(ctx, stream, id, readWait, req.GetMaxWeight())
	} else {
		err = s.exportAll(ctx, stream)
	}
	if err != nil {
		return s.toStatus(ctx, op, err)
	}
	return nil
}

// exportAll sends each of the client's live threads, newest first, reading
// each as it sends it: the threads listed when the export began (and the
// first page again at the end, for one continued while the listing ran),
// so that one continued meanwhile, which moves ahead of the page it was
// on, is sent all the same. One deleted, expired or lost since is left
// out. At most maxExportThreads.
func (s *Server) exportAll(ctx context.Context,
	stream grpc.ServerStreamingServer[memoryv1.ExportThreadsResponse]) error {
	var ids []string
	seen := map[string]bool{}
	list := func(token string) (string, error) {
		page, err := s.svc.List(ctx, auth.Client(ctx), "", exportPage, token)
		if err != nil {
			return "", err
		}
		for _, sum := range page.Summaries {
			if id := sum.Thread.ID; !seen[id] {
				seen[id] = true
				ids = append(ids, id)
			}
		}
		if len(ids) > maxExportThreads {
			return "", status.Errorf(codes.FailedPrecondition, "more than %d live threads are yours: an export "+
				"holds at most that many; delete some, or export them one at a time (thread_id)", maxExportThreads)
		}
		return page.Next, nil
	}
	for token := ""; ; {
		next, err := list(token)
		if err != nil {
			return err
		}
		if token = next; token == "" {
			break
		}
	}
	if _, err := list(""); err != nil {
		return err
	}
	for _, id := range ids {
		// As long as its client waits: an export refused halfway could not
		// be taken up where it stopped.
		err := s.exportOne(ctx, stream, id, slots.UntilTheCallerLeaves, 0)
		if err != nil && !errors.Is(err, memory.ErrNotFound) {
			return err
		}
	}
	return nil
}

// maxExportThreads bounds the threads one export lists before it reads
// them: their ids, 100 bytes or so each.
const maxExportThreads = 100_000

// exportPage is how many threads' heads an export lists at a time.
const exportPage = 100

// exportOne reads one thread of an export alone (an export carries no
// ancestor), once the reads' budget has room for it, waiting up to wait,
// and sends it, unless it weighs more than max (within). The room is given
// back once the answer is built, before it is sent: a client that takes
// its export slowly would hold up every client's reads.
func (s *Server) exportOne(ctx context.Context, stream grpc.ServerStreamingServer[memoryv1.ExportThreadsResponse],
	id string, wait time.Duration, max int64) error {
	read := &held{reads: s.reads, wait: wait}
	t, err := s.svc.ReadAlone(ctx, id, auth.Client(ctx), read.admit)
	if err == nil {
		err = within(t, max)
	}
	var msg *memoryv1.ExportThreadsResponse
	if err == nil {
		msg = &memoryv1.ExportThreadsResponse{Thread: toProtoThread(t)}
	}
	read.done()
	if err != nil {
		return err
	}
	return stream.Send(msg)
}

// within refuses a thread that weighs more than max, when max is set
// (GetThreadRequest.max_weight).
func within(t *memory.Thread, max int64) error {
	if max > 0 && t.Weight > max {
		return origin.Error(codes.FailedPrecondition, fmt.Sprintf("thread %s weighs %s, more than the %s it was "+
			"to be read within: it was written since it was weighed; weigh it again", t.ID,
			memory.InUnits(t.Weight), memory.InUnits(max)), origin.HeavierThanAsked, nil)
	}
	return nil
}

func (s *Server) ImportThreads(ctx context.Context, req *memoryv1.ImportThreadsRequest) (*memoryv1.ImportThreadsResponse, error) {
	threads := make([]*memory.Thread, len(req.GetThreads()))
	for i, t := range req.GetThreads() {
		threads[i] = fromProtoThread(t)
	}
	// A client imports into its own threads only, whatever the export says.
	n, err := s.svc.Import(ctx, auth.Client(ctx), threads, req.GetReplace())
	if err != nil {
		return nil, s.toStatus(ctx, "import threads", err)
	}
	return &memoryv1.ImportThreadsResponse{Imported: int32(n)}, nil
}

// toStatus is the one place domain errors become status codes. Internal
// error text stays in the log.
func (s *Server) toStatus(ctx context.Context, op string, err error) error {
	if st, ok := status.FromError(err); ok {
		return st.Err() // this server's own answer (reads.go)
	}
	var lost *memory.LostError
	var full *memory.ClientFullError
	switch {
	case errors.As(err, &lost):
		// Its own code, so the edge can tell the client the store lost
		// the thread rather than that it expired.
		s.logger.WarnContext(ctx, "thread lost with the store's data", "op", op, "lost_at", lost.At)
		return status.Error(codes.DataLoss, lost.Error()+" (Redis restarted without persistence, or was flushed)")
	case errors.Is(err, memory.ErrNotFound):
		return status.Error(codes.NotFound, "thread not found or expired")
	case errors.Is(err, memory.ErrInvalid):
		return status.Error(codes.InvalidArgument, err.Error())
	case errors.Is(err, memory.ErrThreadFull):
		// The thread's state, not the request's: the same exchange fits in
		// a new thread.
		return status.Error(codes.FailedPrecondition, err.Error())
	case errors.Is(err, memory.ErrGone):
		// Not Unavailable: trying again does not help until zen restarts.
		// The file's path is the operator's to read, in the log.
		s.logger.ErrorContext(ctx, "memory store's file is gone", "op", op, "err", err)
		return status.Error(codes.FailedPrecondition, "memory: its database file was removed or replaced while "+
			"zen ran, so it stores nothing more until zen restarts (its log names the file)")
	case errors.Is(err, memory.ErrMoved):
		return status.Error(codes.Aborted, "this step was not saved: another step of this workflow was stored in "+
			"its thread while this one ran, and each step builds on the one before it. Send this step again with "+
			"the same continuation_id to record it after that one")
	case errors.Is(err, memory.ErrOwned):
		return status.Error(codes.AlreadyExists, "a thread of the import has the id of another client's thread, "+
			"which an import never replaces: give yours a new thread_id")
	case errors.Is(err, memory.ErrExists):
		return status.Error(codes.AlreadyExists, err.Error()+"; import with replace to overwrite")
	case errors.Is(err, memory.ErrFull):
		// Not Unavailable: trying again does not help until an operator acts.
		s.logger.ErrorContext(ctx, "memory store full: nothing more can be stored", "op", op, "err", err,
			"fix", "raise Redis's maxmemory or delete threads; under SQLite, free disk space")
		return origin.Error(codes.ResourceExhausted, "memory: the store is full, so it refused this write (an "+
			"import keeps the threads it stored before the refused one: import again with replace once there is "+
			"room). It takes an operator to make room: raise Redis's maxmemory or delete threads, or free disk "+
			"space under SQLite. Stored threads can still be read.", origin.StoreFull, nil)
	case errors.As(err, &full):
		// What the client holds, and what to do.
		return origin.Error(codes.ResourceExhausted, full.Error(), origin.ClientFull, nil)
	case errors.Is(err, memory.ErrUnavailable):
		s.logger.WarnContext(ctx, "memory store unavailable", "op", op, "err", err)
		return status.Error(codes.Unavailable, "memory: the store is unavailable; try again shortly")
	case errors.Is(err, context.Canceled):
		return status.Error(codes.Canceled, "cancelled")
	case errors.Is(err, context.DeadlineExceeded):
		return status.Error(codes.DeadlineExceeded, "deadline exceeded")
	}
	s.logger.ErrorContext(ctx, "memory call failed", "op", op, "err", err)
	return status.Error(codes.Internal, "memory: internal error")
}
