package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/zenmcp/zen/services/platform/fakemodel"
)

// TestSecurityImportedFilesShowNoOnesContents: file contents are stored
// once by their sha256, for every client. An import names files by that
// hash without their contents, so an import naming the hashes of guesses
// would read back the contents another client's call stored: a guessing
// oracle for a short secret. Imported turns keep their files' paths and
// sizes, not their hashes, and the history shows no contents for them.
func TestSecurityImportedFilesShowNoOnesContents(t *testing.T) {
	t.Parallel()
	roots := t.TempDir()
	tokens := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(tokens, []byte("alice "+aliceToken+"\nbob "+bobToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := mergeEnv(fakeEnv(fakemodel.New(t)), map[string]string{"ZEN_AUTH_TOKENS_FILE": tokens,
		"ZEN_FILE_ROOTS": roots})
	p := startZen(t, env, []string{"mcp", "gateway", "grpc"}, serveArgs()...)
	gateway := "http://" + p.addr("gateway")
	bob, err := connectAs(t, "http://"+p.addr("mcp")+"/mcp", bobToken)
	if err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(roots, "settings.conf")
	if err := os.WriteFile(secret, []byte("DB_PASSWORD=4711\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	callTool(t, bob, "chat", map[string]any{"prompt": "look at my config", "working_directory_absolute_path": roots,
		"model": "llama3.2", "absolute_file_paths": []string{secret}})

	var files []string
	for pin := 4700; pin < 4720; pin++ {
		guess := fmt.Sprintf("DB_PASSWORD=%04d\n", pin)
		sum := sha256.Sum256([]byte(guess))
		files = append(files, fmt.Sprintf(`{"path":"/guess/%04d","sha256":"%s","size_bytes":%d}`, pin,
			hex.EncodeToString(sum[:]), len(guess)))
	}
	const id = "5b7a9c1e-2f3d-4e5a-8b6c-7d8e9f0a1b2c"
	line := `{"thread_id":"` + id + `","tool_name":"chat","turns":[{"role":"ROLE_USER","content":"guess","files":[` +
		strings.Join(files, ",") + `]}]}` + "\n"
	if code, body := request(t, "POST", gateway+"/v1/threads:import", aliceToken, line); code != http.StatusOK {
		t.Fatalf("import: %d %s", code, body)
	}
	code, history := request(t, "GET", gateway+"/v1/threads/"+id+"/history?model=llama3.2", aliceToken, "")
	if code != http.StatusOK {
		t.Fatalf("history: %d %s", code, history)
	}
	if strings.Contains(history, "DB_PASSWORD=4711") {
		t.Errorf("alice's imported thread shows bob's file:\n%s", history)
	}
	_, thread := request(t, "GET", gateway+"/v1/threads/"+id, aliceToken, "")
	if !strings.Contains(thread, "/guess/4711") || regexp.MustCompile(`[0-9a-f]{64}`).MatchString(thread) {
		t.Errorf("the imported thread should keep its files' paths and no hashes:\n%.600s", thread)
	}
}

// TestSecurityTheHistoryShowsNoneOfZensSecrets: a file a client's call
// read is shown by the history route as the model would see it, and zen's
// own secrets (a provider key, a client's token) in it are redacted there
// as in every other answer; the history showed them.
func TestSecurityTheHistoryShowsNoneOfZensSecrets(t *testing.T) {
	t.Parallel()
	roots := t.TempDir()
	tokens := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(tokens, []byte("alice "+aliceToken+"\nbob "+bobToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	const key = "sk-custom-SECRET-4242"
	env := mergeEnv(fakeEnv(fakemodel.New(t)), map[string]string{"ZEN_AUTH_TOKENS_FILE": tokens,
		"ZEN_FILE_ROOTS": roots, "CUSTOM_API_KEY": key})
	p := startZen(t, env, []string{"mcp", "gateway", "grpc"}, serveArgs()...)
	bob, err := connectAs(t, "http://"+p.addr("mcp")+"/mcp", bobToken)
	if err != nil {
		t.Fatal(err)
	}
	config := filepath.Join(roots, "config.py")
	if err := os.WriteFile(config, []byte("KEY = '"+key+"'\nTOKEN = '"+aliceToken+"'\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, got := callTool(t, bob, "chat", map[string]any{"prompt": "look at my config", "model": "llama3.2",
		"working_directory_absolute_path": roots, "absolute_file_paths": []string{config}})
	offer, _ := got["continuation_offer"].(map[string]any)
	id, _ := offer["continuation_id"].(string)
	if id == "" {
		t.Fatalf("no thread: %.600v", got)
	}
	code, history := request(t, "GET", "http://"+p.addr("gateway")+"/v1/threads/"+id+"/history", bobToken, "")
	if code != http.StatusOK || !strings.Contains(history, "config.py") {
		t.Fatalf("history: %d %.600s", code, history)
	}
	if strings.Contains(history, key) || strings.Contains(history, aliceToken) ||
		!strings.Contains(history, "KEY = '[redacted]'") {
		t.Errorf("the history shows zen's secrets, or not the file:\n%.1000s", history)
	}
}
