package gateway

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	memoryv1 "github.com/zenmcp/zen/proto/gen/zen/memory/v1"
	"github.com/zenmcp/zen/services/platform/httperr"
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
// a thread at memory's bound took the gateway from 32 to 289 MB. It holds
// the thread within the gateway's room (wholeThread) until it is written.
// What the generated route reads beyond the path and the view (its
// gRPC-Timeout and TE headers, other query parameters), an id holding a
// slash and other methods go to it: within the room too, at what its
// whole answer costs, but for the basic view, which has no turns.
func (p threadPaths) thread(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("thread_id")
	if r.Method != http.MethodGet || strings.Contains(id, "/") {
		p.generated.ServeHTTP(w, r)
		return
	}
	switch view, here := viewOf(r); {
	case view == memoryv1.ThreadView_THREAD_VIEW_BASIC:
		p.generated.ServeHTTP(w, r)
		return
	case !here:
		p.generatedWithin(w, r, id)
		return
	}
	got, release, err := p.wholeThread(r.Context(), id, 1)
	if err != nil {
		writeStatus(w, err)
		return
	}
	defer release()
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

// generatedWithin answers a read of thread id through the generated route,
// within the gateway's room at what its whole answer costs. Memory sends
// the thread within the weight made room for (max_weight); one written
// anew, heavier, since it was weighed is weighed again, unless its client
// asked for no more than that (a 400, saying so).
func (p threadPaths) generatedWithin(w http.ResponseWriter, r *http.Request, id string) {
	q := r.URL.Query()
	asked, err := askedWeight(q)
	if err != nil {
		writeStatus(w, err)
		return
	}
	release, err := p.withinRoom(r.Context(), id, generatedCost, p.roomWait, func(weight int64) error {
		read, bound := &weighedRead{}, weight
		if asked > 0 && asked <= weight {
			read.asked, bound = asked, asked
		}
		q.Set("max_weight", strconv.FormatInt(bound, 10))
		within := r.Clone(context.WithValue(r.Context(), weighedReadKey{}, read))
		within.URL.RawQuery = q.Encode()
		p.generated.ServeHTTP(w, within)
		return read.grown
	})
	if err != nil {
		writeStatus(w, err)
		return
	}
	release()
}

// weighedRead is a generated route's read of a thread the gateway has
// weighed: its error handler (writeGatewayError) answers memory's refusal
// of a thread heavier than the read's bound (heavierThanAsked) itself.
type weighedRead struct {
	// asked is the client's own max_weight, when it bounds the read (it is
	// at most the weight the gateway weighed); 0 when the gateway's does.
	asked int64
	// grown is memory's refusal of a read within the gateway's weight: the
	// thread was written anew since it was weighed, and is weighed again.
	grown error
}

type weighedReadKey struct{}

// answerWeighed answers err for a weighed read (weighedRead), reporting
// whether it did: memory's refusal of a read within the gateway's weight
// is kept for the read to weigh the thread again, and one within the
// client's own bound is answered 400 in the gateway's words (memory's say
// to weigh it again).
func answerWeighed(ctx context.Context, w http.ResponseWriter, err error) bool {
	read, _ := ctx.Value(weighedReadKey{}).(*weighedRead)
	if read == nil || !heavierThanAsked(err) {
		return false
	}
	if read.asked == 0 {
		read.grown = err
		return true
	}
	httperr.Status(w, http.StatusBadRequest, status.Newf(codes.FailedPrecondition,
		"the thread weighs more than the max_weight of %d asked for: ask for more, or leave max_weight out",
		read.asked))
	return true
}

// askedWeight is the max_weight a read of a thread asks for, by either of
// its names, which it takes out of q; 0 for none, or for one that is no
// positive number (the gateway's own bound applies then).
func askedWeight(q url.Values) (int64, error) {
	values := append(q["max_weight"], q["maxWeight"]...)
	q.Del("max_weight")
	q.Del("maxWeight")
	switch len(values) {
	case 0:
		return 0, nil
	case 1:
		n, err := strconv.ParseInt(values[0], 10, 64)
		if err != nil || n <= 0 {
			return 0, nil
		}
		return n, nil
	}
	return 0, status.Errorf(codes.InvalidArgument, "max_weight (or maxWeight) is given %d times: give it once",
		len(values))
}

// generatedCost is how many times a thread's weight the generated route
// holds to answer it: its JSON built whole, 200 MB for a thread of 32 MiB.
const generatedCost = 6

// viewOf is the view a read of a thread asks for, and whether thread
// answers it itself: a full view asked with no other query parameter and
// neither of the headers the generated route reads.
func viewOf(r *http.Request) (memoryv1.ThreadView, bool) {
	q := r.URL.Query()
	view := memoryv1.ThreadView_THREAD_VIEW_UNSPECIFIED
	if v := q.Get("view"); v != "" {
		n, ok := memoryv1.ThreadView_value[v]
		if i, err := strconv.Atoi(v); err == nil {
			n, ok = int32(i), true
		}
		if !ok {
			return view, false
		}
		view = memoryv1.ThreadView(n)
	}
	full := view == memoryv1.ThreadView_THREAD_VIEW_UNSPECIFIED || view == memoryv1.ThreadView_THREAD_VIEW_FULL
	onlyView := len(q) == 0 || len(q) == 1 && len(q["view"]) == 1
	return view, full && onlyView && r.Header.Get("Grpc-Timeout") == "" && r.Header.Get("TE") == ""
}
