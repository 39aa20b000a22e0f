package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/zenmcp/zen/services/platform/fakemodel"
)

// rawPost sends one JSON-RPC body to the MCP endpoint as a 2025-era client
// would, without an SDK in between.
func rawPost(t *testing.T, url, body string) *http.Response {
	t.Helper()
	res, err := postJSONRPC(url, body)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { res.Body.Close() })
	return res
}

func postJSONRPC(url, body string) (*http.Response, error) {
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	return http.DefaultClient.Do(req)
}

// TestLongStreamsCarryKeepAlives: a call without a progress token still
// shows life on its SSE stream, as comment lines between events.
func TestLongStreamsCarryKeepAlives(t *testing.T) {
	fake := fakemodel.New(t)
	fake.SetReply(func(fakemodel.Request) fakemodel.Reply {
		return fakemodel.Reply{Content: "slowly", Delay: 1200 * time.Millisecond}
	})
	p := startZen(t, mergeEnv(fakeEnv(fake), map[string]string{"ZEN_PROGRESS_INTERVAL": "200ms"}), []string{"mcp"}, serveArgs()...)
	call := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"chat","arguments":{"prompt":"hi","model":"llama3.2","working_directory_absolute_path":%q}}}`, t.TempDir())
	res := rawPost(t, "http://"+p.addr("mcp")+"/mcp", call)
	if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("Content-Type %q, want an SSE stream", ct)
	}
	comments, sawResult := 0, false
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, ":"):
			comments++
		case strings.HasPrefix(line, "data: "):
			var msg struct {
				ID     int
				Result struct{ IsError bool }
			}
			if err := json.Unmarshal([]byte(line[len("data: "):]), &msg); err != nil {
				t.Fatalf("event data %q: %v", line, err)
			}
			sawResult = sawResult || msg.ID == 1
		}
	}
	if !sawResult {
		t.Fatal("no result on the stream")
	}
	if comments < 3 {
		t.Errorf("%d keep-alive comments during a silent 1.2 s call at a 200 ms interval, want at least 3", comments)
	}
}

// TestMalformedRequestsAreRefusedCleanly: protocol garbage gets a JSON-RPC
// or HTTP error, never a crash or a model call, and zen keeps serving.
func TestMalformedRequestsAreRefusedCleanly(t *testing.T) {
	fake := fakemodel.New(t)
	p := startZen(t, fakeEnv(fake), []string{"mcp"}, serveArgs()...)
	url := "http://" + p.addr("mcp") + "/mcp"
	wd := t.TempDir()
	huge := strings.Repeat("x", 9<<20)
	cases := []struct {
		name, body string
		want       string // in the status line or body
	}{
		{"not JSON", `{"jsonrpc":"2.0","id":1,"method":`, "400"},
		{"not JSON-RPC", `{"hello":"world"}`, "400"},
		{"unknown method", `{"jsonrpc":"2.0","id":1,"method":"tools/explode"}`, "tools/explode"},
		{"params of the wrong type", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":"chat"}`, "-32602"},
		{"unknown tool", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nope","arguments":{}}}`, "-32602"},
		{"argument of the wrong type", fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"chat","arguments":{"prompt":42,"working_directory_absolute_path":%q}}}`, wd), "prompt"},
		{"unknown argument", fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"chat","arguments":{"prompt":"p","bogus":1,"working_directory_absolute_path":%q}}}`, wd), "bogus"},
		{"huge arguments", fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"chat","arguments":{"prompt":%q,"working_directory_absolute_path":%q}}}`, huge, wd), "413"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := rawPost(t, url, c.body)
			b, _ := io.ReadAll(io.LimitReader(res.Body, 1<<16))
			got := res.Status + " " + string(b)
			if !strings.Contains(got, c.want) {
				t.Errorf("got %.600s\nwant it to mention %q", got, c.want)
			}
			if strings.Contains(got, "xxxxxxxxxx") {
				t.Error("the answer echoes the huge argument back")
			}
		})
	}
	if n := len(fake.Requests()); n != 0 {
		t.Errorf("bad requests reached the model %d times", n)
	}
	if strings.Contains(p.logText(), "xxxxxxxxxx") || strings.Contains(p.logText(), "panic") {
		t.Errorf("the log holds argument text or a panic:\n%.2000s", p.logText())
	}
	// Still serving.
	cs := connectHTTP(t, url)
	if _, got := callTool(t, cs, "version", map[string]any{}); got == nil {
		t.Error("zen stopped answering after the bad requests")
	}
}

// TestConcurrentPostStreams: several requests in flight at once each get
// their own answer stream, as SEP-1699 asks, with no session at all (the
// conformance scenario for it runs in a session).
func TestConcurrentPostStreams(t *testing.T) {
	p := startZen(t, fakeEnv(fakemodel.New(t)), []string{"mcp"}, serveArgs()...)
	url := "http://" + p.addr("mcp") + "/mcp"
	type answer struct {
		status int
		ct     string
		body   string
	}
	answers := make(chan answer, 3)
	for i := range 3 {
		go func() {
			res, err := postJSONRPC(url, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/list","params":{}}`, 1000+i))
			if err != nil {
				answers <- answer{body: err.Error()}
				return
			}
			defer res.Body.Close()
			b, _ := io.ReadAll(res.Body)
			answers <- answer{res.StatusCode, res.Header.Get("Content-Type"), string(b)}
		}()
	}
	for i := range 3 {
		a := <-answers
		if a.status != http.StatusOK || !strings.Contains(a.ct, "text/event-stream") || !strings.Contains(a.body, `"name":"chat"`) {
			t.Errorf("stream %d: %d %q %.200q", i, a.status, a.ct, a.body)
		}
	}
}
