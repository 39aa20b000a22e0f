package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/zenmcp/zen/services/platform/fakemodel"
)

// TestAClientsThreadsHaveABound: one client filled the store every client
// shares (imports of 64 MiB, back to back), and then no other client's
// answer was saved. Past ZEN_CLIENT_STORE_MB, a client's import answers
// 507 saying what it holds and what to do, and its answer is delivered
// unsaved, saying why, while another client stores on.
func TestAClientsThreadsHaveABound(t *testing.T) {
	t.Parallel()
	fake := fakemodel.New(t)
	mcpURL, gateway := aliceAndBob(t, mergeEnv(fakeEnv(fake), map[string]string{"ZEN_CLIENT_STORE_MB": "32"}))
	// A thread of 16 turns of almost 2 MB: 31 MiB, within the bound.
	thread := func(turns, size int) string {
		var list []any
		for i := range turns {
			role := []string{"ROLE_USER", "ROLE_ASSISTANT"}[i%2]
			list = append(list, map[string]any{"role": role, "content": strings.Repeat("x", size)})
		}
		line, _ := json.Marshal(map[string]any{"thread_id": uuid.NewString(), "tool_name": "chat", "turns": list})
		return string(line) + "\n"
	}
	if code, body := request(t, "POST", gateway+"/v1/threads:import", aliceToken, thread(16, 2_000_000)); code != 200 {
		t.Fatalf("an import within the bound: %d %s", code, body)
	}
	code, body := request(t, "POST", gateway+"/v1/threads:import", aliceToken, thread(2, 2_000_000))
	if code != http.StatusInsufficientStorage || !strings.Contains(body, "ZEN_CLIENT_STORE_MB") {
		t.Errorf("an import past the bound: %d %.300s; want 507 naming ZEN_CLIENT_STORE_MB", code, body)
	}
	// Alice fills what is left, with smaller and smaller threads, until
	// one of 64 bytes is refused: less room is left than a chat's save. A
	// bound that is not kept would take no end of them.
	for size, imports := 1<<20, 0; size >= 64; imports++ {
		if imports == 100 {
			t.Fatal("a hundred imports and none refused: the bound is not kept")
		}
		switch code, body := request(t, "POST", gateway+"/v1/threads:import", aliceToken, thread(1, size)); code {
		case http.StatusOK:
		case http.StatusInsufficientStorage:
			size /= 2
		default:
			t.Fatalf("an import of %d bytes: %d %s", size, code, body)
		}
	}
	session := func(token string) map[string]any {
		t.Helper()
		s, err := connectAs(t, mcpURL, token)
		if err != nil {
			t.Fatal(err)
		}
		res, got := callTool(t, s, "chat", map[string]any{"prompt": "hello", "model": "llama3.2",
			"working_directory_absolute_path": t.TempDir()})
		if res.IsError {
			t.Fatalf("chat: %s", text(res))
		}
		return got
	}
	got := session(aliceToken)
	meta, _ := got["metadata"].(map[string]any)
	if why := fmt.Sprint(meta["continuation_error"]); got["continuation_offer"] != nil ||
		!strings.Contains(why, "ZEN_CLIENT_STORE_MB") {
		t.Errorf("alice's answer past her bound: offer %v, continuation_error %q; want none, and why",
			got["continuation_offer"], why)
	}
	if got := session(bobToken); got["continuation_offer"] == nil {
		t.Errorf("bob's answer was not kept: %v", got)
	}
}
