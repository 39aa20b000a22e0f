package httperr

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/zenmcp/zen/services/platform/origin"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// answer is what a client sees of a response.
type answer struct {
	Status      int
	ContentType string
	Body        string
}

func record(h http.Handler, r *http.Request) answer {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	return answer{rec.Code, rec.Header().Get("Content-Type"), rec.Body.String()}
}

func TestOneShape(t *testing.T) {
	t.Parallel()
	withDetail, err := status.New(codes.Unavailable, "router is down").WithDetails(wrapperspb.String("router"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		write func(http.ResponseWriter)
		want  answer
		// retryAfter is the answer's Retry-After: a client told 429 or 503
		// is told when to try again.
		retryAfter string
	}{
		{"code alone", func(w http.ResponseWriter) { Error(w, codes.NotFound, "thread t1 was not found") },
			answer{404, "application/json", `{"code":5,"message":"thread t1 was not found","details":[]}` + "\n"}, ""},
		{"HTML left as written", func(w http.ResponseWriter) {
			Error(w, codes.Unauthenticated, "send Authorization: Bearer <token> & retry")
		}, answer{401, "application/json",
			`{"code":16,"message":"send Authorization: Bearer <token> & retry","details":[]}` + "\n"}, ""},
		{"a status of its own", func(w http.ResponseWriter) {
			Status(w, http.StatusUnsupportedMediaType, status.New(codes.InvalidArgument, "send JSON"))
		}, answer{415, "application/json", `{"code":3,"message":"send JSON","details":[]}` + "\n"}, ""},
		{"details compacted", func(w http.ResponseWriter) { FromError(w, withDetail.Err()) },
			answer{503, "application/json", `{"code":14,"message":"router is down","details":[` +
				`{"@type":"type.googleapis.com/google.protobuf.StringValue","value":"router"}]}` + "\n"}, "1"},
		{"an error without a status", func(w http.ResponseWriter) { FromError(w, fmt.Errorf("boom")) },
			answer{500, "application/json", `{"code":2,"message":"boom","details":[]}` + "\n"}, ""},
		// Not 429, which clients retry as a rate limit.
		{"a full store", func(w http.ResponseWriter) {
			FromError(w, origin.Error(codes.ResourceExhausted, "memory: the store is full", origin.StoreFull, nil))
		}, answer{507, "application/json", `{"code":8,"message":"memory: the store is full","details":[` +
			`{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"STORE_FULL","domain":"zen"}]}` + "\n"}, ""},
		{"another exhausted resource", func(w http.ResponseWriter) {
			Error(w, codes.ResourceExhausted, "too many calls")
		}, answer{429, "application/json", `{"code":8,"message":"too many calls","details":[]}` + "\n"}, "1"},
		// Not 500: no fault of zen's, and nothing to retry; the thread is
		// gone with the store's data (memory's DATA_LOSS).
		{"a thread the store lost", func(w http.ResponseWriter) {
			Error(w, codes.DataLoss, "thread not found: the memory store lost its data")
		}, answer{410, "application/json",
			`{"code":15,"message":"thread not found: the memory store lost its data","details":[]}` + "\n"}, ""},
		// A route that knows how long its client should wait says so first.
		{"a wait of the route's own", func(w http.ResponseWriter) {
			w.Header().Set("Retry-After", "10")
			Status(w, http.StatusTooManyRequests, status.New(codes.ResourceExhausted, "busy"))
		}, answer{429, "application/json", `{"code":8,"message":"busy","details":[]}` + "\n"}, "10"},
		{"unavailable", func(w http.ResponseWriter) { Error(w, codes.Unavailable, "memory is restarting") },
			answer{503, "application/json", `{"code":14,"message":"memory is restarting","details":[]}` + "\n"}, "1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rec := httptest.NewRecorder()
			tt.write(rec)
			got := answer{rec.Code, rec.Header().Get("Content-Type"), rec.Body.String()}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if got := rec.Header().Get("Retry-After"); got != tt.retryAfter {
				t.Errorf("Retry-After %q, want %q", got, tt.retryAfter)
			}
		})
	}
}

func TestReplacePlainText(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		handler http.HandlerFunc
		want    answer
		header  map[string]string // headers the answer keeps
	}{
		{"SDK refusal", func(w http.ResponseWriter, _ *http.Request) {
			http.Error(w, "Accept must contain both 'application/json' and 'text/event-stream'", http.StatusBadRequest)
		}, answer{400, "application/json", `{"code":3,"message":"Accept must contain both 'application/json' ` +
			`and 'text/event-stream'","details":[]}` + "\n"}, nil},
		{"token refusal keeps its challenge", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="zen"`)
			http.Error(w, "no bearer token", http.StatusUnauthorized)
		}, answer{401, "application/json", `{"code":16,"message":"no bearer token","details":[]}` + "\n"},
			map[string]string{"WWW-Authenticate": `Bearer realm="zen"`}},
		{"mux's wrong method", func(w http.ResponseWriter, r *http.Request) {
			mux := http.NewServeMux()
			mux.HandleFunc("GET /healthz", func(http.ResponseWriter, *http.Request) {})
			mux.ServeHTTP(w, r)
		}, answer{405, "application/json", `{"code":12,"message":"Method Not Allowed","details":[]}` + "\n"},
			map[string]string{"Allow": "GET, HEAD"}},
		{"JSON error untouched", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusRequestEntityTooLarge)
			_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"too large"}}` + "\n"))
		}, answer{413, "application/json", `{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"too large"}}` +
			"\n"}, nil},
		{"plain success untouched", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/plain")
			_, _ = w.Write([]byte("ok\n"))
		}, answer{200, "text/plain", "ok\n"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rec := httptest.NewRecorder()
			ReplacePlainText(tt.handler).ServeHTTP(rec, httptest.NewRequest("POST", "/healthz", nil))
			got := answer{rec.Code, rec.Header().Get("Content-Type"), rec.Body.String()}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			for k, v := range tt.header {
				if rec.Header().Get(k) != v {
					t.Errorf("header %s = %q, want %q", k, rec.Header().Get(k), v)
				}
			}
		})
	}
}

// TestReplacePlainTextStreams checks an event stream reaches the client as
// it is flushed, not when the handler returns.
func TestReplacePlainTextStreams(t *testing.T) {
	t.Parallel()
	rec := httptest.NewRecorder()
	ReplacePlainText(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write([]byte("data: 1\n\n"))
		http.NewResponseController(w).Flush()
		if !rec.Flushed || rec.Body.String() != "data: 1\n\n" {
			t.Errorf("after a flush the client has %q (flushed %v), want the first event", rec.Body, rec.Flushed)
		}
	})).ServeHTTP(rec, httptest.NewRequest("POST", "/mcp", nil))
}

func TestNotFound(t *testing.T) {
	t.Parallel()
	got := record(NotFound("MCP is at /mcp"), httptest.NewRequest("GET", "/nope", nil))
	want := answer{404, "application/json", `{"code":5,"message":"no route for GET /nope: MCP is at /mcp",` +
		`"details":[]}` + "\n"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
