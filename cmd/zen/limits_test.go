package main

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/zenmcp/zen/services/platform/fakemodel"
)

// visionCatalogue replaces the Custom catalogue with one model that takes
// images, through CUSTOM_MODELS_CONFIG_PATH.
const visionCatalogue = `{"_README": {"description": "test"}, "models": [
  {"model_name": "llava", "aliases": ["vision"], "context_window": 32768, "max_output_tokens": 4096,
   "supports_images": true, "max_image_size_mb": 1}
]}`

func TestImagesReachTheModelAsDataURLs(t *testing.T) {
	dir := t.TempDir()
	catalogue := filepath.Join(dir, "custom.json")
	png := filepath.Join(dir, "shot.png")
	if err := os.WriteFile(catalogue, []byte(visionCatalogue), 0o644); err != nil {
		t.Fatal(err)
	}
	pngBytes := []byte("\x89PNG\r\n\x1a\nfake image body")
	if err := os.WriteFile(png, pngBytes, 0o644); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big.png")
	if err := os.WriteFile(big, make([]byte, 2<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	// Not the catalogue: zen never reads its own configuration for a client.
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("text"), 0o644); err != nil {
		t.Fatal(err)
	}
	fake := fakemodel.New(t)
	st := serveStack(t, mergeEnv(fakeEnv(fake), map[string]string{"CUSTOM_MODELS_CONFIG_PATH": catalogue}))

	res, got := callTool(t, st.session, "chat", map[string]any{
		"prompt": "what is in this picture?", "working_directory_absolute_path": dir, "model": "vision", "images": []any{png},
	})
	if res.IsError {
		t.Fatalf("chat with an image: %s", text(res))
	}
	body := string(fake.Requests()[0].Body)
	if !strings.Contains(body, "data:image/png;base64,"+base64.StdEncoding.EncodeToString(pngBytes)) {
		t.Errorf("the upstream request carries no data URL of the image: %s", body)
	}
	if fake.Requests()[0].Model != "llava" {
		t.Errorf("alias vision resolved to %q", fake.Requests()[0].Model)
	}
	id := got["continuation_offer"].(map[string]any)["continuation_id"].(string)
	_, thread := getJSON(t, st.gateway+"/v1/threads/"+id)
	turn := thread["thread"].(map[string]any)["turns"].([]any)[0].(map[string]any)
	if images := turn["images"].([]any); len(images) != 1 || images[0] != png {
		t.Errorf("stored images = %v, want the path, not the data", images)
	}

	for _, tc := range []struct {
		name   string
		images []any
		want   string
	}{
		{"too many", []any{png, png, png, png, png, png}, "Too many images: 6 given, at most 5"},
		{"too large", []any{big}, "Images too large"},
		{"not an image", []any{filepath.Join(dir, "notes.txt")}, "unsupported image"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, got := callTool(t, st.session, "chat", map[string]any{
				"prompt": "look", "working_directory_absolute_path": dir, "model": "llava", "images": tc.images,
			})
			if !res.IsError || !strings.Contains(got["content"].(string), tc.want) {
				t.Errorf("IsError %v, %v; want %q", res.IsError, got["content"], tc.want)
			}
		})
	}
	if n := len(fake.Requests()); n != 1 {
		t.Errorf("rejected images reached the model: %d requests", n)
	}
}

func TestImagesForAModelWithoutVision(t *testing.T) {
	fake := fakemodel.New(t)
	st := serveStack(t, fakeEnv(fake))
	dir := t.TempDir() // in the home: the image passes the file policy, and the model check refuses it
	res, got := callTool(t, st.session, "chat", map[string]any{
		"prompt": "look", "working_directory_absolute_path": dir, "model": "llama3.2",
		"images": []any{filepath.Join(dir, "x.png")},
	})
	if !res.IsError || !strings.Contains(got["content"].(string), "Image support not available: model 'llama3.2'") {
		t.Errorf("got %v", got)
	}
}

func TestTurnLimitStopsOfferingContinuations(t *testing.T) {
	fake := fakemodel.New(t)
	st := serveStack(t, mergeEnv(fakeEnv(fake), map[string]string{"MAX_CONVERSATION_TURNS": "4"}))
	wd := t.TempDir()
	args := map[string]any{"prompt": "one", "working_directory_absolute_path": wd, "model": "llama3.2"}
	_, got := callTool(t, st.session, "chat", args)
	offer := got["continuation_offer"].(map[string]any)
	id := offer["continuation_id"].(string)
	if offer["remaining_turns"] != 2.0 {
		t.Errorf("first offer = %v, want 2 turns left of 4", offer)
	}
	args = map[string]any{"prompt": "two", "working_directory_absolute_path": wd, "continuation_id": id}
	_, got = callTool(t, st.session, "chat", args)
	if got["status"] != "success" || got["continuation_offer"] != nil {
		t.Errorf("the exchange that fills the thread: status %v, offer %v; want success and no offer", got["status"], got["continuation_offer"])
	}
	// A call on the full thread still runs and is answered, as the
	// reference's does; its exchange is not kept, and the answer says so
	// and how to go on (the reference said nothing).
	res, got := callTool(t, st.session, "chat", map[string]any{"prompt": "three", "working_directory_absolute_path": wd,
		"continuation_id": id})
	meta, _ := got["metadata"].(map[string]any)
	why, _ := meta["continuation_error"].(string)
	if res.IsError || got["status"] != "success" || got["continuation_offer"] != nil {
		t.Errorf("past the limit: IsError %v, status %v, offer %v; want success and no offer", res.IsError,
			got["status"], got["continuation_offer"])
	}
	if meta["conversation_ready"] != false {
		t.Errorf("past the limit: conversation_ready %v beside its continuation_error; want false",
			meta["conversation_ready"])
	}
	for _, want := range []string{"not saved", "limit of 4 turns", "MAX_CONVERSATION_TURNS", "without continuation_id"} {
		if !strings.Contains(why, want) {
			t.Errorf("past the limit: continuation_error %q does not say %q", why, want)
		}
	}
	_, thread := getJSON(t, st.gateway+"/v1/threads/"+id)
	if turns := thread["thread"].(map[string]any)["turns"].([]any); len(turns) != 4 {
		t.Errorf("thread has %d turns, want 4", len(turns))
	}
	if n := len(fake.Requests()); n != 3 {
		t.Errorf("%d model calls, want 3: the call past the limit runs too", n)
	}
}

// TestAWorkflowOnAFullThread: a step that pauses on a full thread calls no
// model, and its findings could not reach the next step: it is refused,
// saying how to go on (run and not kept, it told the agent both to start
// again and to carry on). A final step is run and answered, as a chat is,
// without a continuation_id: nothing of it is in the thread.
func TestAWorkflowOnAFullThread(t *testing.T) {
	t.Parallel()
	fake := fakemodel.New(t)
	st := serveStack(t, mergeEnv(fakeEnv(fake), map[string]string{"MAX_CONVERSATION_TURNS": "4"}))
	debug := func(n int, next bool, id string) (*mcp.CallToolResult, map[string]any) {
		args := map[string]any{"step": fmt.Sprintf("look, %d", n), "step_number": n, "total_steps": 6,
			"next_step_required": next, "findings": fmt.Sprintf("FINDING-%d", n), "model": "llama3.2"}
		if id != "" {
			args["continuation_id"] = id
		}
		return callTool(t, st.session, "debug", args)
	}
	_, got := debug(1, true, "")
	id, _ := got["continuation_id"].(string)
	for n := 2; n <= 4; n++ {
		if res, got := debug(n, true, id); res.IsError {
			t.Fatalf("step %d: %v", n, got)
		}
	}
	res, got := debug(5, true, id)
	content, _ := got["content"].(string)
	if !res.IsError || !strings.Contains(content, "MAX_CONVERSATION_TURNS") || !strings.Contains(content, "step_number 1") {
		t.Errorf("a pausing step on the full thread: IsError %v, %v; want it refused, saying how to go on",
			res.IsError, got)
	}
	res, got = debug(5, false, id)
	meta, _ := got["metadata"].(map[string]any)
	why, _ := meta["continuation_error"].(string)
	if res.IsError || got["continuation_id"] != nil || !strings.Contains(why, "not saved") {
		t.Errorf("a final step on the full thread: IsError %v, continuation_id %v, continuation_error %q; want "+
			"it answered without an id, saying it was not saved", res.IsError, got["continuation_id"], why)
	}
	if reqs := fake.Requests(); len(reqs) != 1 || !strings.Contains(reqs[0].AllText(), "FINDING-4") {
		t.Errorf("%d model calls; want one, the final step's expert, seeing every kept step's findings", len(reqs))
	}
}

// TestAWorkflowsExpertSeesEveryStepsImages: the reference collects a
// workflow's images across its steps and sends them all to the expert;
// zen's expert saw the final step's alone, so a screenshot given at step 1
// of a debug never reached it. An earlier step's image that can no longer
// be read is left out, saying so, rather than failing the step.
func TestAWorkflowsExpertSeesEveryStepsImages(t *testing.T) {
	t.Parallel()
	dir, fake, st := visionStack(t)
	image := func(name, body string) string { return writeTestFile(t, dir, name, "\x89PNG\r\n\x1a\n"+body) }
	first, second, gone := image("first.png", "FIRST"), image("second.png", "SECOND"), image("gone.png", "GONE")
	code := writeTestFile(t, dir, "lock.go", "package lock\n")
	step := func(n int, next bool, id string, images ...string) map[string]any {
		args := map[string]any{"step": fmt.Sprintf("look, %d", n), "step_number": n, "total_steps": 3,
			"next_step_required": next, "findings": fmt.Sprintf("finding %d", n), "model": "llava",
			"relevant_files": []any{code}}
		if len(images) > 0 {
			args["images"] = images
		}
		if id != "" {
			args["continuation_id"] = id
		}
		res, got := callTool(t, st.session, "debug", args)
		if res.IsError {
			t.Fatalf("step %d: %s", n, text(res))
		}
		return got
	}
	id, _ := step(1, true, "", first, gone)["continuation_id"].(string)
	step(2, true, id, second)
	if err := os.Remove(gone); err != nil {
		t.Fatal(err)
	}
	step(3, false, id)
	reqs := fake.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d model calls, want the expert's alone", len(reqs))
	}
	body := string(reqs[0].Body)
	for name, b := range map[string]string{"first": "FIRST", "second": "SECOND"} {
		if !strings.Contains(body, base64.StdEncoding.EncodeToString([]byte("\x89PNG\r\n\x1a\n"+b))) {
			t.Errorf("the expert was not sent the %s step's image", name)
		}
	}
	if !strings.Contains(body, "FILE SKIPPED: "+gone) {
		t.Errorf("the expert was not told of the image it could not be sent")
	}
}

// TestAMissingImageIsLeftOut: the reference's providers skip an image
// they cannot read, with a warning, and the call goes on; zen failed the
// whole call over a stale screenshot's path. The image is left out now,
// saying so to the model and the agent.
func TestAMissingImageIsLeftOut(t *testing.T) {
	t.Parallel()
	dir, fake, st := visionStack(t)
	png := writeTestFile(t, dir, "shot.png", "\x89PNG\r\n\x1a\nHERE")
	missing := filepath.Join(dir, "stale.png")
	res, got := callTool(t, st.session, "chat", map[string]any{"prompt": "what changed?",
		"working_directory_absolute_path": dir, "model": "vision", "images": []any{png, missing}})
	if res.IsError {
		t.Fatalf("chat with a missing image: %s", text(res))
	}
	body := string(fake.Requests()[0].Body)
	if !strings.Contains(body, base64.StdEncoding.EncodeToString([]byte("\x89PNG\r\n\x1a\nHERE"))) ||
		!strings.Contains(body, "FILE SKIPPED: "+missing) {
		t.Errorf("the model was not sent the image that is there and told of the one that is not: %.600s", body)
	}
	meta, _ := got["metadata"].(map[string]any)
	if skipped, _ := json.Marshal(meta["files_skipped"]); !strings.Contains(string(skipped), missing) {
		t.Errorf("the agent was not told the image was left out: %v", meta)
	}
}

// TestAnEarlierImageIsSentOnce: an earlier step's image named under
// several spellings was read, and sent, once for each.
func TestAnEarlierImageIsSentOnce(t *testing.T) {
	t.Parallel()
	dir, fake, st := visionStack(t)
	small := writeTestFile(t, dir, "small.png", "\x89PNG\r\n\x1a\nSMALL")
	code := writeTestFile(t, dir, "lock.go", "package lock\n")
	args := func(n int, next bool) map[string]any {
		return map[string]any{"step": "look", "step_number": n, "total_steps": 3, "next_step_required": next,
			"findings": "something", "model": "llava", "relevant_files": []any{code}}
	}
	first := args(1, true)
	first["images"] = []any{small}
	_, got := callTool(t, st.session, "debug", first)
	id, _ := got["continuation_id"].(string)
	second := args(2, true)
	second["images"], second["continuation_id"] = []any{dir + "/./small.png"}, id // another spelling
	callTool(t, st.session, "debug", second)
	final := args(3, false)
	final["continuation_id"] = id
	if res, _ := callTool(t, st.session, "debug", final); res.IsError {
		t.Fatalf("final step: %s", text(res))
	}
	body := string(fake.Requests()[0].Body)
	if n := strings.Count(body, base64.StdEncoding.EncodeToString([]byte("\x89PNG\r\n\x1a\nSMALL"))); n != 1 {
		t.Errorf("the image named under two spellings was sent %d times, want once", n)
	}
}

// visionStack is zen serve with visionCatalogue's model, its fake, and a
// directory in the roots for a test's files.
func visionStack(t *testing.T) (string, *fakemodel.Server, stack) {
	t.Helper()
	dir := t.TempDir()
	catalogue := writeTestFile(t, dir, "custom.json", visionCatalogue)
	fake := fakemodel.New(t)
	return dir, fake, serveStack(t, mergeEnv(fakeEnv(fake), map[string]string{"CUSTOM_MODELS_CONFIG_PATH": catalogue}))
}

// refusedPlaces are two directories the file policy refuses whatever the
// roots: a system directory (never a root) and a credential store
// (wherever it sits).
func refusedPlaces(t *testing.T) (system, keys string) {
	t.Helper()
	system, err := os.MkdirTemp("/var/tmp", "zen-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(system) })
	keys = filepath.Join(t.TempDir(), ".ssh")
	if err := os.MkdirAll(keys, 0o700); err != nil {
		t.Fatal(err)
	}
	return system, keys
}

// writeTestFile writes content to name in dir and returns its path.
func writeTestFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := writeFile(p, content); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestAnEarlierImageIsCheckedAsANamedOneIs: the paths a final step's
// earlier images come from are the thread's, which a client can write
// with an import: one the file policy refuses (a system directory, a
// credential store) is never read, and the expert is told it was left out.
func TestAnEarlierImageIsCheckedAsANamedOneIs(t *testing.T) {
	t.Parallel()
	dir, fake, st := visionStack(t)
	system, keys := refusedPlaces(t)
	outside := writeTestFile(t, system, "secret.png", "\x89PNG\r\n\x1a\nOUTSIDE")
	key := writeTestFile(t, keys, "id.png", "\x89PNG\r\n\x1a\nKEY")
	code := writeTestFile(t, dir, "lock.go", "package lock\n")
	id := uuid.NewString()
	step1, _ := json.Marshal(map[string]any{"thread_id": id, "tool_name": "debug", "turns": []any{map[string]any{
		"role": "ROLE_USER", "content": "look", "tool_name": "debug", "images": []any{outside, key},
		"model_metadata": map[string]any{"step": map[string]any{"step_number": 1}}}}})
	if code, body := request(t, "POST", st.gateway+"/v1/threads:import", "", string(step1)+"\n"); code != 200 {
		t.Fatalf("import: %d %s", code, body)
	}
	res, _ := callTool(t, st.session, "debug", map[string]any{"step": "found it", "step_number": 2, "total_steps": 2,
		"next_step_required": false, "findings": "done", "model": "llava", "relevant_files": []any{code},
		"continuation_id": id})
	if res.IsError {
		t.Fatalf("final step: %s", text(res))
	}
	body := string(fake.Requests()[0].Body)
	for name, b := range map[string]string{"in a system directory": "OUTSIDE", "in .ssh": "KEY"} {
		if strings.Contains(body, base64.StdEncoding.EncodeToString([]byte("\x89PNG\r\n\x1a\n"+b))) {
			t.Errorf("the expert was sent an image %s", name)
		}
	}
	if !strings.Contains(body, "FILE SKIPPED: "+outside) || !strings.Contains(body, "FILE SKIPPED: "+key) {
		t.Errorf("the expert was not told the refused images were left out")
	}
}
