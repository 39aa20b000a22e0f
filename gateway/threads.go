package gateway

import (
	"context"
	"errors"
	"io"
	"net/http"
	"time"

	memoryv1 "github.com/zenmcp/zen/proto/gen/zen/memory/v1"
	routerv1 "github.com/zenmcp/zen/proto/gen/zen/router/v1"
	"github.com/zenmcp/zen/services/platform/httperr"
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
	imports    *slots
	importTime time.Duration // how long an import's body may take to arrive
	// generated serves the generated routes, for the requests of theirs
	// that thread leaves to them.
	generated http.Handler
}

// export writes one thread per line (GET /v1/threads:export, or
// ?thread_id= for one thread).
func (p threadPaths) export(w http.ResponseWriter, r *http.Request) {
	stream, err := p.memory.ExportThreads(r.Context(), &memoryv1.ExportThreadsRequest{ThreadId: r.URL.Query().Get("thread_id")})
	if err != nil {
		writeStatus(w, err)
		return
	}
	first, err := stream.Recv()
	if err != nil && !errors.Is(err, io.EOF) {
		writeStatus(w, err)
		return
	}
	jsonHeaders(w, "application/x-ndjson")
	for msg := first; msg != nil; {
		line, err := lineJSON.Marshal(msg.GetThread())
		if err != nil {
			return
		}
		if _, err := w.Write(append(line, '\n')); err != nil {
			return // serve.Paced: the client stopped taking it
		}
		if msg, err = stream.Recv(); err != nil {
			return // on an error, the status line is gone; a truncated export fails its import
		}
	}
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
		thread, err := p.memory.GetThread(ctx, &memoryv1.GetThreadRequest{ThreadId: id})
		if err != nil {
			return nil, err
		}
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
func writeStatus(w http.ResponseWriter, err error) { httperr.FromError(w, err) }
