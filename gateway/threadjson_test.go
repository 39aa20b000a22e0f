package gateway

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	memoryv1 "github.com/zenmcp/zen/proto/gen/zen/memory/v1"
	"google.golang.org/protobuf/encoding/protojson"
)

// generatedJSON is the mux's marshaler: what the generated route wrote.
var generatedJSON = protojson.MarshalOptions{UseProtoNames: true, EmitUnpopulated: true}

// GET /v1/threads/{thread_id} answers what the generated route did,
// though it writes the turns one at a time.
func TestAThreadIsWrittenAsTheGeneratedRouteWroteIt(t *testing.T) {
	t.Parallel()
	tricky := thread("tricky", "p", "chat", 2,
		&memoryv1.Turn{Role: memoryv1.Role_ROLE_USER, Content: "<b>\"quoted\"</b> & \u2028 caf\u00e9 \U0001F600"},
		&memoryv1.Turn{Role: memoryv1.Role_ROLE_ASSISTANT, Content: "a", ModelName: "m",
			Files: []*memoryv1.FileRef{{Path: "/a.go", Sha256: "ab", SizeBytes: 3}}, Images: []string{"x.png"}},
		&memoryv1.Turn{Role: memoryv1.Role_ROLE_USER, Content: ""})
	tricky.InitialContext = meta(t, map[string]any{"turns": []any{}, "prompt": "\"turns\":[]", "n": 1.5})
	empty := thread("empty", "", "debug", 1)
	mem := &fakeMemory{threads: []*memoryv1.Thread{tricky, empty}}
	h := browseGateway(t, mem, "")
	for _, th := range []*memoryv1.Thread{tricky, empty} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "http://localhost/v1/threads/"+th.GetThreadId(), nil))
		if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "application/json" {
			t.Fatalf("%s: %d %q %s", th.GetThreadId(), rec.Code, rec.Header().Get("Content-Type"), rec.Body)
		}
		want, err := generatedJSON.Marshal(&memoryv1.GetThreadResponse{Thread: th, LastModel: "model-b",
			TurnCount: int32(len(th.GetTurns()))})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(decoded(t, want), decoded(t, rec.Body.Bytes())); diff != "" {
			t.Errorf("%s (-generated +written):\n%s", th.GetThreadId(), diff)
		}
	}
	// What the generated route reads beyond the path is still its: a
	// deadline of a nanosecond runs out.
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("GET", "http://localhost/v1/threads/tricky", nil)
	req.Header.Set("Grpc-Timeout", "1n")
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusGatewayTimeout {
		t.Errorf("with Grpc-Timeout: 1n: %d %s, want the generated route's 504", rec.Code, rec.Body)
	}
	for path, want := range map[string]int{
		"/v1/threads/tricky?view=THREAD_VIEW_BASIC": http.StatusOK, // the generated route's
		"/v1/threads/gone":                          http.StatusNotFound,
	} {
		var got map[string]any
		code := getInto(t, h, path, &got)
		if code != want {
			t.Errorf("GET %s: %d %v, want %d", path, code, got, want)
		}
		if strings.Contains(path, "BASIC") && (got["thread"].(map[string]any)["turns"] == nil ||
			len(got["thread"].(map[string]any)["turns"].([]any)) != 0 || got["turn_count"] != 3.0) {
			t.Errorf("the basic view: %v", got)
		}
	}
}

func decoded(t *testing.T, b []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%v in %s", err, b)
	}
	return v
}
