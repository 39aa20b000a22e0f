package gateway

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"

	memoryv1 "github.com/zenmcp/zen/proto/gen/zen/memory/v1"
	routerv1 "github.com/zenmcp/zen/proto/gen/zen/router/v1"
	"github.com/zenmcp/zen/services/platform/auth"
	"github.com/zenmcp/zen/services/platform/httperr"
	"github.com/zenmcp/zen/services/platform/serve"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
)

// maxImportBytes bounds an import body.
const maxImportBytes = serve.MaxMessageBytes

// maxImportThreads bounds the threads of one import. Memory writes an
// import whole, in one transaction under SQLite, while every other write
// waits: 800,000 empty threads in one held every client's calls for
// twenty seconds. A larger export goes in as several imports. Memory
// refuses more too (memory.MaxImportThreads, with its bounds on turns and
// files); the gateway stops reading at the first thread past it.
const maxImportThreads = 1000

// importReadTime bounds how long an import's body may take to arrive:
// 64 MiB at half a megabyte a second.
const importReadTime = 2 * time.Minute

var lineJSON = protojson.MarshalOptions{UseProtoNames: true}

// threadPaths serves what the generated routes cannot: export and import
// as JSON lines, the history a model would see, and the thread browser's
// list and thread view (browse.go, view.go).
type threadPaths struct {
	memory     memoryv1.MemoryServiceClient
	router     routerv1.RouterServiceClient
	trace      TraceURL // links a turn's trace id in the thread view
	imports    *importSlots
	importTime time.Duration // how long an import's body may take to arrive
}

// maxImports bounds the imports a gateway runs at once.
const maxImports = 4

// importSlots are the imports running: one a client, and maxImports in
// all, as each holds its body and its decoded threads until memory has
// them. One a client, not one for everyone: a client that sends slowly, or
// one slow import after another, keeps itself waiting and one slot only.
type importSlots struct {
	mu      sync.Mutex
	running map[string]bool
}

// take holds client's slot, or says why it cannot.
func (s *importSlots) take(client string) (release func(), refused string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.running[client]:
		return nil, "your import before this one is still running: send this one once it has ended"
	case len(s.running) >= maxImports:
		return nil, fmt.Sprintf("%d imports are running on this gateway: send yours again shortly", maxImports)
	}
	s.running[client] = true
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		delete(s.running, client)
	}, ""
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
		_, _ = w.Write(append(line, '\n'))
		if msg, err = stream.Recv(); err != nil {
			return // the status line is gone; a truncated export fails its import
		}
	}
}

// importThreads reads threads, one per line, and stores them all or none
// (POST /v1/threads:import, ?replace=true to overwrite).
func (p threadPaths) importThreads(w http.ResponseWriter, r *http.Request) {
	replace, err := strconv.ParseBool(defaultString(r.URL.Query().Get("replace"), "false"))
	if err != nil {
		writeStatus(w, status.Error(codes.InvalidArgument, "replace must be true or false"))
		return
	}
	release, refused := p.imports.take(auth.Client(r.Context()))
	if release == nil {
		writeStatus(w, status.Error(codes.ResourceExhausted, refused+"; nothing was imported"))
		return
	}
	defer release()
	// A slot is not held for long by a client that sends slowly.
	_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(p.importTime))
	// Read as it arrives: a bound crossed is told at once, and the body is
	// not held beside the threads it decodes to.
	req := &memoryv1.ImportThreadsRequest{Replace: replace}
	sc := bufio.NewScanner(http.MaxBytesReader(w, r.Body, maxImportBytes))
	sc.Buffer(make([]byte, 0, 64<<10), maxImportBytes)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		if len(req.Threads) == maxImportThreads {
			writeStatus(w, status.Errorf(codes.InvalidArgument, "an import holds at most %d threads: "+
				"split the file and import each part; nothing was imported", maxImportThreads))
			return
		}
		t := &memoryv1.Thread{}
		if err := protojson.Unmarshal(line, t); err != nil {
			writeStatus(w, status.Errorf(codes.InvalidArgument, "line %d is not a thread as GET /v1/threads:export writes it: %v; nothing was imported", n, err))
			return
		}
		req.Threads = append(req.Threads, t)
	}
	if err := sc.Err(); err != nil {
		if tooLarge := (*http.MaxBytesError)(nil); errors.As(err, &tooLarge) {
			httperr.Status(w, http.StatusRequestEntityTooLarge, status.Newf(codes.InvalidArgument,
				"an import body holds at most %d bytes: split the file and import each part; nothing was imported",
				maxImportBytes))
			return
		}
		writeStatus(w, status.Errorf(codes.InvalidArgument, "could not read the import body: %v "+
			"(it has %s to arrive); nothing was imported", err, p.importTime))
		return
	}
	resp, err := p.memory.ImportThreads(r.Context(), req)
	if err != nil {
		writeStatus(w, err)
		return
	}
	writeJSON(w, http.StatusOK, importResult{Imported: resp.GetImported()})
}

// importResult is the answer of POST /v1/threads:import.
type importResult struct {
	Imported int32 `json:"imported"`
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
