package httperr

import (
	"bytes"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"strings"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"github.com/zenmcp/zen/services/platform/origin"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
)

// Body is an error answer: google.rpc.Status in JSON.
type Body struct {
	// Code is the gRPC status code.
	Code codes.Code `json:"code"`
	// Message says what went wrong and, where it can, what to do.
	Message string `json:"message"`
	// Details are the status's details (google.protobuf.Any in JSON); an
	// empty list, never null, when there are none.
	Details []json.RawMessage `json:"details"`
}

// retryAfter is the Retry-After of a 429 or a 503 whose route does not
// know how long its client should wait, in seconds: the conditions behind
// them (room taken, a store reconnecting, a thread rewritten while read)
// last about that long.
const retryAfter = "1"

// Error answers code and msg with the HTTP status grpc-gateway gives code.
func Error(w http.ResponseWriter, code codes.Code, msg string) {
	Status(w, 0, status.New(code, msg))
}

// FromError answers err as its gRPC status (Unknown when it has none).
func FromError(w http.ResponseWriter, err error) {
	Status(w, 0, status.Convert(err))
}

// Status answers st with httpStatus, or with the status grpc-gateway gives
// st's code when httpStatus is 0 (a 415 or a 405 says more than the code's
// own 400 or 501).
func Status(w http.ResponseWriter, httpStatus int, st *status.Status) {
	switch reason, _ := origin.Of(st.Err()); {
	case httpStatus != 0:
	case reason == origin.StoreFull || reason == origin.ClientFull:
		// Not grpc-gateway's 429 for RESOURCE_EXHAUSTED: clients take that
		// for a rate limit and retry, which a full store, or a client's
		// threads at their bound, never answers.
		httpStatus = http.StatusInsufficientStorage
	case st.Code() == codes.DataLoss:
		// Not grpc-gateway's 500: memory says so of a thread gone with the
		// store's data (Redis restarted without persistence), no fault of
		// zen's and nothing to retry.
		httpStatus = http.StatusGone
	default:
		httpStatus = runtime.HTTPStatusFromCode(st.Code())
	}
	b := Body{Code: st.Code(), Message: st.Message(), Details: []json.RawMessage{}}
	for _, d := range st.Proto().GetDetails() {
		raw, err := protojson.Marshal(d)
		if err != nil { // a detail of a type this binary does not know
			raw, _ = json.Marshal(map[string]string{"@type": d.GetTypeUrl()})
		}
		b.Details = append(b.Details, raw) // encoding/json compacts it
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // "Bearer <token>" reads as written
	if err := enc.Encode(b); err != nil {
		buf.Reset()
		fmt.Fprintf(&buf, "{\"code\":%d,\"message\":\"zen could not encode an error\",\"details\":[]}\n", codes.Internal)
	}
	if (httpStatus == http.StatusTooManyRequests || httpStatus == http.StatusServiceUnavailable) &&
		w.Header().Get("Retry-After") == "" {
		// Both say "later": a client told when tries again then, not at
		// once nor never. A route that knows how long its client should
		// wait (a room's wait) has said so already.
		w.Header().Set("Retry-After", retryAfter)
	}
	w.Header().Set("Content-Type", "application/json")
	// The message may quote what the client sent (a path a page sent a
	// browser to); as http.Error does, no browser is to sniff it as HTML.
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Del("Content-Length")
	w.WriteHeader(httpStatus)
	_, _ = w.Write(buf.Bytes())
}

// NotFound answers every request it gets with 404, naming the method and
// path; hint says where the routes are. A ServeMux's catch-all ("/") with
// it answers unknown paths, and known paths asked with another method, in
// the one shape rather than the mux's plain text.
func NotFound(hint string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		Error(w, codes.NotFound, fmt.Sprintf("no route for %s %s: %s", r.Method, r.URL.Path, hint))
	})
}

// CodeOf is the gRPC code for an HTTP error status, for answers whose
// writer chose only the status: the inverse of grpc-gateway's mapping, with
// the statuses it has no code for mapped to the nearest.
func CodeOf(httpStatus int) codes.Code {
	switch httpStatus {
	case http.StatusBadRequest, http.StatusUnsupportedMediaType, http.StatusRequestEntityTooLarge,
		http.StatusNotAcceptable, http.StatusLengthRequired:
		return codes.InvalidArgument
	case http.StatusUnauthorized:
		return codes.Unauthenticated
	case http.StatusForbidden:
		return codes.PermissionDenied
	case http.StatusNotFound, http.StatusGone:
		return codes.NotFound
	case http.StatusMethodNotAllowed, http.StatusNotImplemented:
		return codes.Unimplemented
	case http.StatusConflict:
		return codes.Aborted
	case http.StatusPreconditionFailed:
		return codes.FailedPrecondition
	case http.StatusTooManyRequests:
		return codes.ResourceExhausted
	case 499:
		return codes.Canceled
	case http.StatusServiceUnavailable, http.StatusBadGateway:
		return codes.Unavailable
	case http.StatusGatewayTimeout:
		return codes.DeadlineExceeded
	case http.StatusInternalServerError:
		return codes.Internal
	}
	return codes.Unknown
}

// maxPlain bounds the plain-text message ReplacePlainText keeps.
const maxPlain = 4 << 10

// ReplacePlainText answers in the one shape whatever h answers with an
// error in plain text: net/http's http.Error, which ServeMux and the MCP
// SDK use for the requests they refuse ("Accept must contain both
// 'application/json' and 'text/event-stream'"). The status and the other
// headers (WWW-Authenticate, Allow) stay; the text becomes the message.
// Every other answer passes through untouched, streams and flushes
// included.
func ReplacePlainText(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		pw := &plainWriter{ResponseWriter: w}
		h.ServeHTTP(pw, r)
		if pw.status != 0 {
			msg := strings.TrimSpace(pw.text.String())
			if msg == "" {
				msg = http.StatusText(pw.status)
			}
			Status(w, pw.status, status.New(CodeOf(pw.status), msg))
		}
	})
}

// plainWriter holds back an error answered in plain text. Calls into it
// come from one goroutine at a time, as into any ResponseWriter.
type plainWriter struct {
	http.ResponseWriter
	status  int // of the held-back answer; 0 while nothing is held back
	text    bytes.Buffer
	written bool
}

func (p *plainWriter) WriteHeader(code int) {
	if p.written || p.status != 0 {
		return
	}
	if code >= 400 && isPlainText(p.Header().Get("Content-Type")) {
		p.status = code
		return
	}
	p.written = true
	p.ResponseWriter.WriteHeader(code)
}

func (p *plainWriter) Write(b []byte) (int, error) {
	if !p.written && p.status == 0 {
		p.WriteHeader(http.StatusOK)
	}
	if p.status != 0 {
		p.text.Write(b[:min(len(b), max(0, maxPlain-p.text.Len()))])
		return len(b), nil
	}
	return p.ResponseWriter.Write(b)
}

// Flush sends what was written so far (the status line at least), unless
// it is held back.
func (p *plainWriter) Flush() {
	if p.status != 0 {
		return
	}
	p.written = true
	_ = http.NewResponseController(p.ResponseWriter).Flush()
}

// Unwrap lets http.ResponseController reach the server's writer.
func (p *plainWriter) Unwrap() http.ResponseWriter { return p.ResponseWriter }

func isPlainText(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && mt == "text/plain"
}
