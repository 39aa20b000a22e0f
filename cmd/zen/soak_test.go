package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/zenmcp/zen/services/platform/fakemodel"
)

// peakRSSBound is the most resident memory `zen serve` may reach while the
// soak runs. An idle zen holds about 40 MiB; before bodies and directory
// walks were bounded, this soak took it past 1 GiB.
const peakRSSBound = 200 << 20

// TestMemoryStaysBoundedUnderLargeRequests: thirty 8 MiB requests are
// refused (with a JSON-RPC error), four calls at once name a directory of
// 400 files of nearly 1 MB each, and a model floods a reply with 10 MB, and
// zen's peak resident memory (VmHWM) stays under peakRSSBound. Each
// directory call is answered, with a note of the files left out; the flood
// is cut off with an error. Run with -v for the figures docs/RELIABILITY.md
// quotes.
func TestMemoryStaysBoundedUnderLargeRequests(t *testing.T) {
	if testing.Short() {
		t.Skip("a soak: skipped with -short")
	}
	t.Parallel()
	fake := fakemodel.New(t)
	p := startZen(t, fakeEnv(fake), []string{"mcp"}, serveArgs()...)
	status := filepath.Join("/proc", strconv.Itoa(p.cmd.Process.Pid), "status")
	if _, err := os.Stat(status); err != nil {
		t.Skipf("no %s to read resident memory from: %v", status, err)
	}
	url := "http://" + p.addr("mcp") + "/mcp"
	cs := connectHTTP(t, url)
	if res, _ := callTool(t, cs, "version", map[string]any{}); res.IsError {
		t.Fatal("version failed")
	}
	before := memoryFigure(t, status, "VmRSS")

	big := bigDirectory(t, 400, 999_000)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			res, got := callTool(t, cs, "chat", map[string]any{"prompt": "review this", "model": "llama3.2",
				"working_directory_absolute_path": big, "absolute_file_paths": []any{big}})
			omitted, _ := got["metadata"].(map[string]any)["files_omitted"].(map[string]any)
			if res.IsError || omitted["count"] != 400.0 {
				t.Errorf("naming a large directory: IsError %v, files_omitted %v\n%.400s", res.IsError, omitted, text(res))
			}
		})
	}
	huge := fmt.Sprintf(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"chat","arguments":{`+
		`"prompt":%q,"model":"llama3.2"}}}`, strings.Repeat("x", 8<<20))
	refusedWell := 0
	for i := range 30 {
		body := io.Reader(strings.NewReader(huge))
		if i%3 == 0 {
			body = struct{ io.Reader }{body} // no length known: sent chunked
		}
		status, reply := postBody(t, url, body)
		if status == http.StatusRequestEntityTooLarge && strings.Contains(reply, `"id":7,"error":{"code":-32600`) {
			refusedWell++
		} else if refusedWell == i {
			t.Errorf("an 8 MiB request, want a 413 with a JSON-RPC error: %d %.300s", status, reply)
		}
	}
	wg.Wait()
	flood := strings.Repeat("ten megabytes of reply ", 10<<20/23)
	fake.SetReply(func(fakemodel.Request) fakemodel.Reply { return fakemodel.Reply{Content: flood} })
	res, got := callTool(t, cs, "chat", map[string]any{"prompt": "say a lot", "model": "llama3.2",
		"working_directory_absolute_path": big})
	if content, _ := got["content"].(string); !res.IsError || !strings.Contains(content, "the reply was cut off") {
		t.Errorf("a 10 MB reply: IsError %v, %.300s", res.IsError, text(res))
	}
	peak, after := memoryFigure(t, status, "VmHWM"), memoryFigure(t, status, "VmRSS")
	t.Logf("zen serve resident memory: %d MiB before, peak %d MiB, %d MiB after (bound %d MiB)",
		before>>20, peak>>20, after>>20, peakRSSBound>>20)
	if peak > peakRSSBound {
		t.Errorf("peak resident memory %d MiB, over the %d MiB bound", peak>>20, peakRSSBound>>20)
	}
}

// bigDirectory makes a directory of n source files of size bytes each,
// sparse, so the disk holds none of them.
func bigDirectory(t *testing.T, n int, size int64) string {
	t.Helper()
	dir := t.TempDir()
	for i := range n {
		f, err := os.Create(filepath.Join(dir, fmt.Sprintf("part%03d.go", i)))
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Truncate(size); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// postBody sends one JSON-RPC body as a 2025-11-25 client would.
func postBody(t *testing.T, url string, body io.Reader) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(res.Body, 1<<16))
	return res.StatusCode, string(b)
}

// memoryFigure reads one of /proc/<pid>/status's memory lines, in bytes.
func memoryFigure(t *testing.T, status, field string) int64 {
	t.Helper()
	b, err := os.ReadFile(status)
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				t.Fatalf("%s: %q: %v", status, line, err)
			}
			return kb << 10
		}
	}
	t.Fatalf("%s has no %s", status, field)
	return 0
}
