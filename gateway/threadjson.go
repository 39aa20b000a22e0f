package gateway

import (
	"net/http"
	"regexp"
	"strings"

	memoryv1 "github.com/zenmcp/zen/proto/gen/zen/memory/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
)

// wholeJSON is how the generated routes write JSON (the mux's marshaler),
// and so how thread writes one.
var wholeJSON = protojson.MarshalOptions{UseProtoNames: true, EmitUnpopulated: true}

// emptyTurns is where a thread's turns go in its JSON written without
// them. Turns is the first field of a Thread that can hold an object, and
// a string's quotes are escaped, so the first match is the field's.
var emptyTurns = regexp.MustCompile(`"turns":\s*\[\]`)

// thread answers GET /v1/threads/{thread_id} with the generated route's
// JSON, but writes the thread's turns one at a time, each let go once
// written: the generated route built the whole answer first, and a read of
// a thread at memory's bound took the gateway from 32 to 289 MB. What the
// generated route reads beyond the path (a query such as ?view=, its
// gRPC-Timeout and TE headers), an id holding a slash and other methods go
// to it. The answer has none of its Grpc-Metadata- headers.
func (p threadPaths) thread(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet || r.URL.RawQuery != "" || r.Header.Get("Grpc-Timeout") != "" ||
		r.Header.Get("TE") != "" || strings.Contains(r.PathValue("thread_id"), "/") {
		p.generated.ServeHTTP(w, r)
		return
	}
	got, err := p.memory.GetThread(r.Context(), &memoryv1.GetThreadRequest{ThreadId: r.PathValue("thread_id")})
	if err != nil {
		writeStatus(w, err)
		return
	}
	turns := got.GetThread().GetTurns()
	if got.Thread != nil {
		got.Thread.Turns = nil
	}
	head, err := wholeJSON.Marshal(got)
	at := emptyTurns.FindIndex(head)
	if err == nil && at == nil && len(turns) > 0 {
		err = status.Error(codes.Internal, "the gateway found no turns in a thread's JSON; please report this as a bug")
	}
	if err != nil {
		writeStatus(w, err)
		return
	}
	jsonHeaders(w, "application/json")
	if len(turns) == 0 {
		_, _ = w.Write(head)
		return
	}
	open := at[1] - 2 // the [ of "turns":[]
	if _, err := w.Write(head[:open+1]); err != nil {
		return
	}
	for i, t := range turns {
		b, err := wholeJSON.Marshal(t)
		if err != nil {
			// Half an answer is written: cut the transfer, so that the
			// client does not take it for a whole one. Memory stores no turn
			// JSON refuses (a non-finite number, a time out of range).
			panic(http.ErrAbortHandler)
		}
		if i > 0 {
			b = append([]byte{','}, b...)
		}
		if _, err := w.Write(b); err != nil {
			return // serve.Paced: the client stopped taking it
		}
		turns[i] = nil
	}
	_, _ = w.Write(head[open+1:])
}
