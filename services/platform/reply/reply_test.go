package reply

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/zenmcp/zen/services/platform/secrets"
)

// asJSON is what a client decodes from a reply.
func asJSON(t *testing.T, r *Reply) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.Encode(), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestShapes(t *testing.T) {
	t.Parallel()
	two := 2
	for _, tc := range []struct {
		name string
		r    *Reply
		want map[string]any
	}{
		{"error envelope", Error("chat", "no prompt").With(map[string]any{"error_type": "validation_error"}),
			map[string]any{"status": "error", "content": "no prompt", "content_type": "text",
				"metadata": map[string]any{"tool_name": "chat", "error_type": "validation_error"}}},
		{"workflow failure", WorkflowFailure("debug", 3, "bad step"),
			map[string]any{"status": "debug_failed", "content": "bad step", "content_type": "text", "error": "bad step",
				"step_number": 3.0, "metadata": map[string]any{"tool_name": "debug"}}},
		{"an error worded for a workflow keeps its metadata",
			Error("debug", "bad path").With(map[string]any{"error_type": "validation_error"}).ForWorkflow(2),
			map[string]any{"status": "debug_failed", "content": "bad path", "content_type": "text", "error": "bad path",
				"step_number": 2.0, "metadata": map[string]any{"tool_name": "debug", "error_type": "validation_error"}}},
		{"only errors become workflow failures", (&Reply{Status: "resend_prompt", Content: "too long",
			ContentType: Text, Metadata: Metadata{ToolName: "debug"}}).ForWorkflow(1),
			map[string]any{"status": "resend_prompt", "content": "too long", "content_type": "text",
				"metadata": map[string]any{"tool_name": "debug"}}},
		{"transport facts beside the tool's own keys", &Reply{
			Status: StatusContinuationAvailable, Content: "cut", ContentType: Text, StepNumber: &two,
			ContinuationID:    "t1",
			ContinuationOffer: &Offer{ContinuationID: "t1", Note: "go on", RemainingTurns: 3},
			Fields:            map[string]any{"status": "shadowed", "next_steps": "read"},
			Metadata: Metadata{ToolName: "chat", TraceID: "abc", ContinuationError: "lost", GeneratedCodeFile: "/w/f",
				OutputTruncated: true, FullContentChars: 9, FilesOmitted: &Omitted{Count: 1, Bytes: 5, Note: "left"},
				FilesSkipped: []SkippedFile{{Path: "/w/gone.go", Reason: "not found"}},
				ModelUsed:    "m", ProviderUsed: "p", RequestedModel: "alias",
				Fields: map[string]any{"usage": "u"}},
		}, map[string]any{"status": "continuation_available", "content": "cut", "content_type": "text",
			"step_number": 2.0, "continuation_id": "t1", "next_steps": "read",
			"continuation_offer": map[string]any{"continuation_id": "t1", "note": "go on", "remaining_turns": 3.0},
			"metadata": map[string]any{"tool_name": "chat", "trace_id": "abc", "continuation_error": "lost",
				"generated_code_file": "/w/f", "output_truncated": true, "full_content_chars": 9.0, "model_used": "m",
				"provider_used": "p", "requested_model": "alias", "usage": "u",
				"files_omitted": map[string]any{"count": 1.0, "bytes": 5.0, "note": "left"},
				"files_skipped": []any{map[string]any{"path": "/w/gone.go", "reason": "not found"}}}}},
		{"a simple tool's empty answer keeps its content", &Reply{Status: StatusSuccess, ContentType: Text,
			Metadata: Metadata{ToolName: "chat"}},
			map[string]any{"status": "success", "content": "", "content_type": "text",
				"metadata": map[string]any{"tool_name": "chat"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := asJSON(t, tc.r)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("JSON (-want +got):\n%s", diff)
			}
			back, err := Decode(tc.r.Encode())
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, asJSON(t, back)); diff != "" {
				t.Errorf("decoded and encoded again (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSetModel: model_used is always the name that answered, and the name
// the caller gave goes beside it only when it differs (not by case alone);
// decoded, the model's keys are typed again.
func TestSetModel(t *testing.T) {
	t.Parallel()
	type model struct{ Used, Provider, Requested string }
	got := map[string]model{}
	for name, requested := range map[string]string{"an alias": "pro", "auto": "auto", "the name": "Gemini-3-Pro",
		"none": ""} {
		var m Metadata
		m.SetModel("gemini-3-pro", "google", requested)
		back, err := Decode((&Reply{Metadata: m}).Encode())
		if err != nil {
			t.Fatal(err)
		}
		if back.Metadata.Fields != nil {
			t.Errorf("%s: decoded model keys left untyped: %v", name, back.Metadata.Fields)
		}
		got[name] = model{back.Metadata.ModelUsed, back.Metadata.ProviderUsed, back.Metadata.RequestedModel}
	}
	want := map[string]model{
		"an alias": {"gemini-3-pro", "google", "pro"},
		"auto":     {"gemini-3-pro", "google", "auto"},
		"the name": {"gemini-3-pro", "google", ""},
		"none":     {"gemini-3-pro", "google", ""},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("SetModel (-want +got):\n%s", diff)
	}
}

// TestTurnsLeftCountsTurns: the one wording of what is left of a thread
// counts turns and says a follow-up takes two.
func TestTurnsLeftCountsTurns(t *testing.T) {
	t.Parallel()
	if got, want := TurnsLeft(46), "46 more turns (each follow-up is two: "; !strings.HasPrefix(got, want) {
		t.Errorf("TurnsLeft(46) = %q, want it to begin %q", got, want)
	}
}

func TestScrubJSON(t *testing.T) {
	t.Parallel()
	const key = "sk-secret-0123456789"
	in := (&Reply{Status: StatusSuccess, Content: "the key is " + key, ContentType: Text,
		Fields:   map[string]any{"steps": []any{"used " + key}},
		Metadata: Metadata{ToolName: "chat", Fields: map[string]any{"note": key + "!"}}}).Encode()
	got, err := ScrubJSON(in, secrets.New(key))
	if err != nil {
		t.Fatal(err)
	}
	r, err := Decode(got)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"status": "success", "content": "the key is [redacted]", "content_type": "text",
		"steps": []any{"used [redacted]"}, "metadata": map[string]any{"tool_name": "chat", "note": "[redacted]!"}}
	if diff := cmp.Diff(want, asJSON(t, r)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if same, _ := ScrubJSON(in, nil); string(same) != string(in) {
		t.Error("no secrets changed the reply")
	}
}

// everyKey is a reply with every typed key set, the tool's own keys beside
// them (two shadowed by typed keys, one beside a typed key left empty), and
// text that JSON must escape.
func everyKey() *Reply {
	two := 2
	return &Reply{Status: StatusContinuationAvailable, Content: "<b>a & b</b>\u2028é \"q\"\n\t\x01", ContentType: Text,
		StepNumber: &two, ContinuationID: "t1",
		ContinuationOffer: &Offer{ContinuationID: "t1", Note: "go <on>", RemainingTurns: 3},
		Fields: map[string]any{"status": "shadowed", "error": "kept: the typed error is empty", "zeta": []any{1, "x<y"},
			"alpha": map[string]any{"b": 1.5, "a": true}, "next steps": "a spaced key", "count": 3, "ok": false,
			"é": nil},
		Metadata: Metadata{ToolName: "chat", TraceID: "abc", ContinuationError: "lost", GeneratedCodeFile: "/w/f&g",
			OutputTruncated: true, FullContentChars: 9, FilesOmitted: &Omitted{Count: 1, Bytes: 5, Note: "left"},
			FilesSkipped: []SkippedFile{{Path: "/w/<gone>.go", Reason: "not found"}},
			ModelUsed:    "m", ProviderUsed: "p", RequestedModel: "alias",
			Fields: map[string]any{"usage": map[string]any{"input_tokens": 3, "cost_usd": 0.25},
				"tool_name": "shadowed", "conversation_ready": true}},
	}
}

// TestEncodedBytes pins the bytes a client reads, as json.Marshal writes a
// map: keys sorted, HTML escaped, no spaces. Decoded and encoded again, a
// reply keeps them.
func TestEncodedBytes(t *testing.T) {
	t.Parallel()
	const want = `{"alpha":{"a":true,"b":1.5},` +
		`"content":"\u003cb\u003ea \u0026 b\u003c/b\u003e\u2028é \"q\"\n\t\u0001","content_type":"text",` +
		`"continuation_id":"t1","continuation_offer":{"continuation_id":"t1",` +
		`"note":"go \u003con\u003e","remaining_turns":3},"count":3,"error":"kept: the typed error is empty",` +
		`"metadata":{"continuation_error":"lost","conversation_ready":true,"files_omitted":{"count":1,"bytes":5,` +
		`"note":"left"},"files_skipped":[{"path":"/w/\u003cgone\u003e.go","reason":"not found"}],` +
		`"full_content_chars":9,"generated_code_file":"/w/f\u0026g","model_used":"m","output_truncated":true,` +
		`"provider_used":"p","requested_model":"alias","tool_name":"chat","trace_id":"abc",` +
		`"usage":{"cost_usd":0.25,"input_tokens":3}},"next steps":"a spaced key","ok":false,` +
		`"status":"continuation_available","step_number":2,"zeta":[1,"x\u003cy"],"é":null}`
	raw := everyKey().Encode()
	if diff := cmp.Diff(want, string(raw)); diff != "" {
		t.Errorf("encoded reply (-want +got):\n%s", diff)
	}
	if viaMarshal, err := json.Marshal(everyKey()); err != nil || string(viaMarshal) != want {
		t.Errorf("json.Marshal = %s, %v; want the bytes Encode writes", viaMarshal, err)
	}
	back, err := Decode(raw)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, string(back.Encode())); diff != "" {
		t.Errorf("decoded and encoded again (-want +got):\n%s", diff)
	}
}

// TestDecodeRefusesMistypedKeys: a typed key of the wrong type is an
// error, a null one is as if absent, as json.Unmarshal has them.
func TestDecodeRefusesMistypedKeys(t *testing.T) {
	t.Parallel()
	for _, bad := range []string{`{"status":5}`, `{"metadata":"chat"}`, `{"metadata":{"tool_name":["chat"]}}`,
		`{"step_number":"2"}`, `{"metadata":{"output_truncated":"yes"}}`, `[]`, `{"status":"ok"} x`} {
		if r, err := Decode([]byte(bad)); err == nil {
			t.Errorf("Decode(%s) = %+v, want an error", bad, r)
		}
	}
	r, err := Decode([]byte(`{"status":null,"step_number":null,"metadata":null,"own":null}`))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(&Reply{Fields: map[string]any{"own": nil}}, r); diff != "" {
		t.Errorf("nulls (-want +got):\n%s", diff)
	}
}
