package gateway

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	memoryv1 "github.com/zenmcp/zen/proto/gen/zen/memory/v1"
	routerv1 "github.com/zenmcp/zen/proto/gen/zen/router/v1"
	"github.com/zenmcp/zen/services/platform/httperr"
	"github.com/zenmcp/zen/services/platform/origin"
	"github.com/zenmcp/zen/services/platform/secrets"
	"github.com/zenmcp/zen/services/platform/slots"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
)

var lineJSON = protojson.MarshalOptions{UseProtoNames: true}

// threadPaths serves what the generated routes cannot: export and import
// as JSON lines, the history a model would see, and the thread browser's
// list and thread view (browse.go, view.go).
type threadPaths struct {
	memory     memoryv1.MemoryServiceClient
	router     routerv1.RouterServiceClient
	trace      TraceURL // links a turn's trace id in the thread view
	secrets    *secrets.Scrubber
	imports    *requestSlots
	importTime time.Duration // how long an import's body may take to arrive
	// room bounds what the threads held whole weigh, and roomWait how long
	// a read waits for room (wholethread.go).
	room     *slots.Budget
	roomWait time.Duration
	holders  *slots.Holders // the clients whose reads hold room
	// generated serves the generated routes, for the requests of theirs
	// that thread leaves to them.
	generated http.Handler
}

// export writes one thread per line (GET /v1/threads:export, or
// ?thread_id= for one thread), newest first: each read alone within the
// gateway's room (wholeThread) and held until its line is written, where
// memory's export stream of every thread had the gateway hold each as long
// as its client took to read it, outside any bound. The threads are the
// ones listed when the export began (exportIDs); one deleted or expired
// since is left out. A failure once lines are written cuts the transfer,
// so that a client does not take a part for the whole.
func (p threadPaths) export(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	if id := r.URL.Query().Get("thread_id"); id != "" {
		line, release, err := p.exportLine(ctx, id, p.roomWait)
		if err != nil {
			writeStatus(w, err)
			return
		}
		defer release()
		jsonHeaders(w, "application/x-ndjson")
		_, _ = w.Write(line)
		return
	}
	ids, err := p.exportIDs(ctx)
	if err != nil {
		writeStatus(w, err)
		return
	}
	wrote := false
	for _, id := range ids {
		line, release, err := p.exportNext(ctx, id, wrote)
		if status.Code(err) == codes.NotFound {
			continue
		}
		if err != nil {
			if !wrote {
				writeStatus(w, err)
				return
			}
			panic(http.ErrAbortHandler)
		}
		if !wrote {
			jsonHeaders(w, "application/x-ndjson")
			wrote = true
		}
		_, err = w.Write(line)
		release()
		if err != nil {
			return // serve.Paced: the client stopped taking it
		}
	}
	if !wrote {
		jsonHeaders(w, "application/x-ndjson")
	}
}

// exportPage is how many threads an export lists at a time: memory's
// largest page.
const exportPage = 100

// exportIDs lists the ids of the client's threads, newest first, before
// any is read: a listing by pages as the export went, at its client's
// pace, missed a thread continued meanwhile, which moved ahead of the page
// it was on. The first page is listed again at the end, for one continued
// while the listing ran. At most maxExportThreads.
func (p threadPaths) exportIDs(ctx context.Context) ([]string, error) {
	var ids []string
	seen := map[string]bool{}
	list := func(token string) (string, error) {
		page, err := p.memory.ListThreads(ctx, &memoryv1.ListThreadsRequest{PageSize: exportPage, PageToken: token})
		if err != nil {
			return "", err
		}
		for _, s := range page.GetThreads() {
			if id := s.GetThreadId(); !seen[id] {
				seen[id] = true
				ids = append(ids, id)
			}
		}
		if len(ids) > maxExportThreads {
			return "", status.Errorf(codes.FailedPrecondition, "more than %d live threads are yours: an export "+
				"holds at most that many; delete some, or export them one at a time (?thread_id=)", maxExportThreads)
		}
		return page.GetNextPageToken(), nil
	}
	tokens := map[string]bool{}
	for token := ""; ; {
		next, err := list(token)
		if err != nil {
			return nil, err
		}
		if tokens[next] {
			// A page that points back at one already read would have the
			// export list for ever.
			return nil, status.Errorf(codes.Internal, "memory's listing of your threads came back to a page it "+
				"had given: export them one at a time (?thread_id=)")
		}
		tokens[next] = true
		if token = next; token == "" {
			break
		}
	}
	if _, err := list(""); err != nil {
		return nil, err
	}
	return ids, nil
}

// maxExportThreads bounds the threads one export lists before it reads
// them (exportIDs): their ids, 100 bytes or so each.
const maxExportThreads = 100_000

// exportNext reads the next line of a whole export. Once lines are
// written, a thread waits for room as long as its client does, and
// memory's refusals for want of its own room (after its own wait) are
// tried again, a second apart: an export cut halfway could not go on
// where it stopped. A full store is no want of room.
func (p threadPaths) exportNext(ctx context.Context, id string, wrote bool) ([]byte, func(), error) {
	if !wrote {
		return p.exportLine(ctx, id, p.roomWait)
	}
	for {
		line, release, err := p.exportLine(ctx, id, slots.UntilTheCallerLeaves)
		if reason, _ := origin.Of(err); status.Code(err) != codes.ResourceExhausted || reason == origin.StoreFull {
			return line, release, err
		}
		select {
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

// exportCost is how many times a thread's weight an export holds to write
// it: the thread and its line.
const exportCost = 2

// exportLine reads thread id alone, as an export carries it, within the
// gateway's room, waiting up to wait, and returns its line, holding the
// room until release.
func (p threadPaths) exportLine(ctx context.Context, id string, wait time.Duration) ([]byte, func(), error) {
	var line []byte
	release, err := p.withinRoom(ctx, id, exportCost, wait, func(weight int64) (err error) {
		line, err = p.readLine(ctx, id, weight)
		return err
	})
	return line, release, err
}

// readLine reads thread id alone from memory's export, within weight, as
// one line.
func (p threadPaths) readLine(ctx context.Context, id string, weight int64) ([]byte, error) {
	// The stream ends with the line: left open, each held a goroutine and
	// its buffers until the whole export ended.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := p.memory.ExportThreads(ctx, &memoryv1.ExportThreadsRequest{ThreadId: id, MaxWeight: weight})
	if err != nil {
		return nil, err
	}
	msg, err := stream.Recv()
	if err != nil {
		return nil, err
	}
	line, err := lineJSON.Marshal(msg.GetThread())
	if err != nil {
		return nil, err
	}
	return append(line, '\n'), nil
}

// threadHistory is the answer of GET /v1/threads/{thread_id}/history.
type threadHistory struct {
	ThreadID      string `json:"thread_id"`
	Model         string `json:"model"` // the model's canonical name
	ContextWindow int32  `json:"context_window"`
	// Selection is memory's SelectHistoryResponse as protojson writes it.
	Selection rawJSON `json:"selection"`
}

// history shows what a model would see of a thread
// (GET /v1/threads/{thread_id}/history?model=): without a model, the
// thread's own, as a continuation that names none would use.
func (p threadPaths) history(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("thread_id")
	model, err := p.historyModel(r.Context(), id, r.URL.Query().Get("model"))
	if err != nil {
		writeStatus(w, err)
		return
	}
	sel, err := p.memory.SelectHistory(r.Context(), &memoryv1.SelectHistoryRequest{ThreadId: id, ContextWindow: model.GetContextWindow(), Model: model.GetName()})
	if err != nil {
		writeStatus(w, err)
		return
	}
	// The files a call read are shown as its model read them, but for
	// zen's own secrets, which every answer redacts.
	p.secrets.Message(sel)
	body, err := lineJSON.Marshal(sel)
	if err != nil {
		writeStatus(w, err)
		return
	}
	writeJSON(w, http.StatusOK, threadHistory{ThreadID: id, Model: model.GetName(),
		ContextWindow: model.GetContextWindow(), Selection: rawJSON(body)})
}

// historyModel resolves the model a history is shown for: the one named,
// else the model of the thread's last answer, else (a thread with no answer
// yet, or whose model is gone) the default or auto mode's pick, as for a
// continuation.
func (p threadPaths) historyModel(ctx context.Context, id, named string) (*routerv1.Model, error) {
	if named == "" {
		thread, release, err := p.wholeThread(ctx, id, 1)
		if err != nil {
			return nil, err
		}
		release()
		if last := thread.GetLastModel(); last != "" {
			resolved, err := p.router.ResolveModel(ctx, &routerv1.ResolveModelRequest{Model: last})
			if status.Code(err) != codes.NotFound {
				return resolved.GetModel(), err
			}
		}
	}
	resolved, err := p.router.ResolveModel(ctx, &routerv1.ResolveModelRequest{Model: named})
	return resolved.GetModel(), err
}

type rawJSON []byte

func (r rawJSON) MarshalJSON() ([]byte, error) { return r, nil }

func defaultString(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// writeStatus answers a gRPC error as the generated routes do.
// writeStatus answers err, and, when it knows (noRoom), when to try again.
func writeStatus(w http.ResponseWriter, err error) {
	if later, ok := errors.AsType[*noRoom](err); ok {
		w.Header().Set("Retry-After", strconv.Itoa(int(later.RetryAfter().Seconds())))
	}
	httperr.FromError(w, err)
}
