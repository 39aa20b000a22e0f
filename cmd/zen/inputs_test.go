package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zenmcp/zen/services/platform/fakemodel"
)

func TestLargePromptsTravelAsPromptTxt(t *testing.T) {
	fake := fakemodel.New(t)
	// MAX_MCP_OUTPUT_TOKENS=1000 allows 2,400 characters of prompt.
	st := serveStack(t, mergeEnv(fakeEnv(fake), map[string]string{"MAX_MCP_OUTPUT_TOKENS": "1000"}))
	wd := t.TempDir()
	big := "Please review this design. " + strings.Repeat("It has many details. ", 150)

	res, got := callTool(t, st.session, "chat", map[string]any{"prompt": big, "working_directory_absolute_path": wd, "model": "llama3.2"})
	meta, _ := got["metadata"].(map[string]any)
	if !res.IsError || got["status"] != "resend_prompt" || meta["limit"] != 2400.0 || !strings.Contains(got["content"].(string), "prompt.txt") {
		t.Fatalf("oversize prompt: IsError %v, %v", res.IsError, got)
	}
	if n := len(fake.Requests()); n != 0 {
		t.Fatalf("the oversize prompt reached the model %d times", n)
	}

	promptFile, other := filepath.Join(wd, "prompt.txt"), filepath.Join(wd, "design.go")
	if err := os.WriteFile(promptFile, []byte(big), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(other, []byte("package design // the code\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res, _ = callTool(t, st.session, "chat", map[string]any{"prompt": "", "working_directory_absolute_path": wd, "model": "llama3.2",
		"absolute_file_paths": []any{promptFile, other}})
	if res.IsError {
		t.Fatalf("resent with prompt.txt: %s", text(res))
	}
	sent := fake.Requests()[0].AllText()
	if strings.Count(sent, "Please review this design.") != 1 || strings.Contains(sent, "BEGIN FILE: "+promptFile) || !strings.Contains(sent, "the code") {
		t.Errorf("prompt.txt must be the prompt, once, and never a context file; other files stay:\n%.600s", sent)
	}
}

func TestCodeTooLargeIsRefusedWhole(t *testing.T) {
	dir := t.TempDir()
	catalogue := filepath.Join(dir, "custom.json")
	if err := os.WriteFile(catalogue, []byte(`{"models":[{"model_name":"tiny","context_window":10000,"max_output_tokens":2000}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	small, large := filepath.Join(dir, "small.go"), filepath.Join(dir, "large.go")
	if err := os.WriteFile(small, []byte("package small\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(large, []byte(strings.Repeat("var x = 1 // padding\n", 400)), 0o644); err != nil {
		t.Fatal(err)
	}
	fake := fakemodel.New(t)
	st := serveStack(t, mergeEnv(fakeEnv(fake), map[string]string{"CUSTOM_MODELS_CONFIG_PATH": catalogue}))
	res, got := callTool(t, st.session, "chat", map[string]any{"prompt": "p", "working_directory_absolute_path": dir, "model": "tiny",
		"absolute_file_paths": []any{small, large}})
	meta, _ := got["metadata"].(map[string]any)
	// A 10K context: content 6,000 tokens, files 30% of it (1,800), 60% of that allowed.
	if !res.IsError || got["status"] != "code_too_large" || meta["limit"] != 1080.0 || meta["file_count"] != 2.0 || meta["threshold_percent"] != 60.0 {
		t.Fatalf("IsError %v, %v", res.IsError, got)
	}
	if n := len(fake.Requests()); n != 0 {
		t.Errorf("oversize files reached the model %d times", n)
	}
	if res, _ := callTool(t, st.session, "chat", map[string]any{"prompt": "p", "working_directory_absolute_path": dir, "model": "tiny",
		"absolute_file_paths": []any{small}}); res.IsError {
		t.Errorf("a small file alone: %s", text(res))
	}
}

func TestLongAnswersAreCutButKept(t *testing.T) {
	fake := fakemodel.New(t)
	answer := strings.Repeat("a very long and detailed answer ", 700) // ~22 KB
	fake.SetReply(func(fakemodel.Request) fakemodel.Reply { return fakemodel.Reply{Content: answer} })
	st := serveStack(t, mergeEnv(fakeEnv(fake), map[string]string{"MAX_MCP_OUTPUT_TOKENS": "2000"}))
	res, got := callTool(t, st.session, "chat", map[string]any{"prompt": "tell me everything", "working_directory_absolute_path": t.TempDir(), "model": "llama3.2"})
	if res.IsError {
		t.Fatal(text(res))
	}
	id := got["continuation_offer"].(map[string]any)["continuation_id"].(string)
	if len(text(res)) > 2000*4 || got["metadata"].(map[string]any)["output_truncated"] != true || !strings.Contains(got["content"].(string), "zen://threads/"+id) {
		t.Errorf("result of %d chars: %.300s", len(text(res)), text(res))
	}
	_, thread := getJSON(t, st.gateway+"/v1/threads/"+id)
	if turns := thread["thread"].(map[string]any)["turns"].([]any); turns[1].(map[string]any)["content"] != answer {
		t.Error("the thread does not keep the whole answer")
	}
}

// A call whose arguments a new thread could not keep (memory's bounds on an
// initial context: values, nesting, bytes) is refused before its model
// runs: it ran, was billed, and then its exchange was not stored, an
// ERROR in the log and a reply that offered no continuation.
func TestArgumentsNoThreadCouldKeepAreRefusedBeforeTheModel(t *testing.T) {
	t.Parallel()
	fake := fakemodel.New(t)
	st := serveStack(t, fakeEnv(fake))
	wd := t.TempDir()
	paths := make([]any, 20_001)
	for i := range paths {
		paths[i] = filepath.Join(wd, "missing.go")
	}
	res, got := callTool(t, st.session, "chat", map[string]any{"prompt": "review", "working_directory_absolute_path": wd,
		"model": "llama3.2", "absolute_file_paths": paths})
	if content, _ := got["content"].(string); !res.IsError || !strings.Contains(content, "20000 values") {
		t.Errorf("chat naming 20,001 paths: IsError %v, %.300s; want it refused, saying why", res.IsError, text(res))
	}
	if n := len(fake.Requests()); n != 0 {
		t.Errorf("the call reached the model %d times", n)
	}
}

// A workflow step whose state (every step's findings so far) memory could
// not keep is refused before its expert runs: the expert ran, was billed,
// and then the step was refused with memory's error, its answer lost.
func TestAWorkflowStateNoThreadCouldKeepIsRefusedBeforeTheExpert(t *testing.T) {
	t.Parallel()
	fake := fakemodel.New(t)
	st := serveStack(t, fakeEnv(fake))
	step := func(n int, next bool, cont string) (map[string]any, bool) {
		args := map[string]any{"step": fmt.Sprintf("look again, %d", n), "step_number": n, "total_steps": 2,
			"next_step_required": next, "findings": strings.Repeat("the lock is taken twice. ", 24_000),
			"hypothesis": "a double lock", "confidence": "high", "model": "llama3.2"}
		if cont != "" {
			args["continuation_id"] = cont
		}
		res, got := callTool(t, st.session, "debug", args)
		return got, res.IsError
	}
	first, failed := step(1, true, "")
	cont, _ := first["continuation_id"].(string)
	if failed || cont == "" {
		t.Fatalf("step 1 (576 KB of findings): %.300v", first)
	}
	got, failed := step(2, false, cont)
	if text, _ := json.Marshal(got); !failed || !strings.Contains(string(text), "findings") ||
		!strings.Contains(string(text), "new thread") {
		t.Errorf("step 2, its state past 1 MiB: IsError %v, %.400s; want it refused, saying why and what to do",
			failed, text)
	}
	if n := len(fake.Requests()); n != 0 {
		t.Errorf("the step reached the expert %d times", n)
	}
}

// TestAnAnswerLongerThanATurnIsKeptByItsStart: a model allowed more output
// than a conversation keeps of one turn (2 MiB) answered, was billed, and
// its exchange was refused whole: the answer went without a continuation,
// and the rest of it, past the client's cut, existed nowhere. The thread
// keeps its start now, saying so.
func TestAnAnswerLongerThanATurnIsKeptByItsStart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	catalogue := filepath.Join(dir, "custom.json")
	if err := os.WriteFile(catalogue, []byte(`{"models":[{"model_name":"verbose","context_window":1000000,`+
		`"max_output_tokens":300000}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	fake := fakemodel.New(t)
	long := strings.Repeat("a long answer. ", (2<<20)/15+1000) // past 2 MiB
	fake.SetReply(func(fakemodel.Request) fakemodel.Reply { return fakemodel.Reply{Content: long} })
	st := serveStack(t, mergeEnv(fakeEnv(fake), map[string]string{"CUSTOM_MODELS_CONFIG_PATH": catalogue}))
	_, got := callTool(t, st.session, "chat", map[string]any{"prompt": "say a lot", "model": "verbose",
		"working_directory_absolute_path": dir})
	offer, _ := got["continuation_offer"].(map[string]any)
	id, _ := offer["continuation_id"].(string)
	if id == "" {
		t.Fatalf("no continuation: %.600v", got["metadata"])
	}
	if content, _ := got["content"].(string); !strings.Contains(content, "first 2 MiB are in the conversation") {
		t.Errorf("the answer's cut says %q; want it to say the conversation keeps its first 2 MiB",
			content[max(0, len(content)-300):])
	}
	code, thread := request(t, "GET", st.gateway+"/v1/threads/"+id, "", "")
	if code != http.StatusOK || !strings.Contains(thread, "not kept") {
		t.Errorf("thread: %d, %d bytes; want the answer's start, saying the rest was not kept", code, len(thread))
	}
}

// TestAStepHeavierThanWhatItsThreadHasLeftIsAnsweredUnkept: a thread near
// its bound (32 MiB) with room for an exchange, but not for the step's
// findings: as at the turn limit, the step runs and is answered, and the
// answer says it was not kept and how to go on.
func TestAStepHeavierThanWhatItsThreadHasLeftIsAnsweredUnkept(t *testing.T) {
	t.Parallel()
	fake := fakemodel.New(t)
	st := serveStack(t, fakeEnv(fake))
	const room = 300 << 10 // past the least an exchange needs (32 KiB), short of the step's findings
	id := "6f9e3c1a-7b2d-4e8f-9a0b-1c2d3e4f5a6b"
	var line strings.Builder
	fmt.Fprintf(&line, `{"thread_id":%q,"tool_name":"chat","turns":[`, id)
	for left, i := int64(32<<20-room), 0; left > 0; i++ {
		n := min(left-200, 2_000_000) // each turn's names and value weigh a little more than its text
		if i > 0 {
			line.WriteString(",")
		}
		fmt.Fprintf(&line, `{"role":"ROLE_USER","content":%q}`, strings.Repeat("x", int(n)))
		left -= n + 200
	}
	line.WriteString("]}\n")
	if code, body := request(t, "POST", st.gateway+"/v1/threads:import", "", line.String()); code != 200 {
		t.Fatalf("import: %d %.300s", code, body)
	}
	res, got := callTool(t, st.session, "thinkdeep", map[string]any{"step": "think", "step_number": 1,
		"total_steps": 1, "next_step_required": false, "findings": strings.Repeat("the lock is taken twice. ", 24_000),
		"confidence": "high", "model": "llama3.2", "continuation_id": id})
	meta, _ := got["metadata"].(map[string]any)
	if why, _ := meta["continuation_error"].(string); res.IsError || !strings.Contains(why, "could not be saved") ||
		!strings.Contains(why, "new conversation") {
		t.Errorf("a step of 576 KB on a thread with %d KiB left: IsError %v, continuation_error %q; want it "+
			"answered, saying it was not saved and how to go on", room>>10, res.IsError, why)
	}
	if n := len(fake.Requests()); n != 1 {
		t.Errorf("the step reached the expert %d times, want once", n)
	}
}

// TestAnAnswerCutAtTheModelsOutputLimitSaysSo: a model that stopped at its
// output limit (finish reason "length") answered half, and zen passed the
// half on as the whole answer. It says so now, and how to have the rest.
func TestAnAnswerCutAtTheModelsOutputLimitSaysSo(t *testing.T) {
	t.Parallel()
	fake := fakemodel.New(t)
	fake.SetReply(func(r fakemodel.Request) fakemodel.Reply {
		if strings.Contains(r.AllText(), "at length") {
			return fakemodel.Reply{Content: "The first half of an answer", FinishReason: "length"}
		}
		return fakemodel.Reply{Content: "A whole answer."}
	})
	st := serveStack(t, fakeEnv(fake))
	for prompt, cut := range map[string]bool{"answer at length": true, "answer briefly": false} {
		_, got := callTool(t, st.session, "chat", map[string]any{"prompt": prompt, "model": "llama3.2",
			"working_directory_absolute_path": t.TempDir()})
		content, _ := got["content"].(string)
		if says := strings.Contains(content, "output limit"); says != cut {
			t.Errorf("%q: the answer says it was cut: %v, want %v: %q", prompt, says, cut, content)
		}
	}
}

// TestChallengeAndAPILookupTakeAnyPrompt: the reference holds to MCP's
// prompt limit the prompts a model reads after a file could carry them
// (chat's, clink's, a workflow's step). challenge and apilookup call no
// model and take no files: zen refused their long prompts, telling the
// agent to send prompt.txt in absolute_file_paths, which both refuse.
func TestChallengeAndAPILookupTakeAnyPrompt(t *testing.T) {
	t.Parallel()
	st := serveStack(t, fakeEnv(fakemodel.New(t)))
	long := strings.Repeat("you are wrong about this. ", 2_500) // 65,000 characters, past 60,000
	for _, tool := range []string{"challenge", "apilookup"} {
		res, got := callTool(t, st.session, tool, map[string]any{"prompt": long})
		if res.IsError || got["status"] == "resend_prompt" {
			t.Errorf("%s with a prompt of %d characters: %.300s", tool, len(long), text(res))
		}
	}
}
