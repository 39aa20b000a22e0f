package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// importedGateway starts zen serve with alice's and bob's tokens and no
// model, imports threads as alice, and returns the gateway's address.
func importedGateway(t *testing.T, threads ...map[string]any) string {
	t.Helper()
	dir := t.TempDir()
	tokens := filepath.Join(dir, "tokens")
	if err := os.WriteFile(tokens, []byte("alice "+aliceToken+"\nbob "+bobToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := startZen(t, map[string]string{"CUSTOM_API_URL": "http://127.0.0.1:1/v1", "ZEN_AUTH_TOKENS_FILE": tokens},
		[]string{"mcp", "gateway"}, serveArgs()...)
	gw := "http://" + p.addr("gateway")
	var lines []string
	for _, th := range threads {
		b, err := json.Marshal(th)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, string(b))
	}
	// In imports of 1,000 threads at most, as the gateway takes them.
	for part := range slices.Chunk(lines, 1000) {
		if code, body := request(t, "POST", gw+"/v1/threads:import", aliceToken, strings.Join(part, "\n")); code != 200 {
			t.Fatalf("import: %d %s", code, body)
		}
	}
	return gw
}

// answeredThread is a thread of one prompt and one answer.
func answeredThread(id, answer string) map[string]any {
	return map[string]any{"thread_id": id, "tool_name": "chat", "turns": []any{
		map[string]any{"role": "ROLE_USER", "content": "a question"},
		map[string]any{"role": "ROLE_ASSISTANT", "content": answer, "model_name": "m"}}}
}

// openThreadAs opens the page at base, enters alice's token and opens the
// thread id, waiting up to the harness's limits for its turns.
func openThreadAs(t *testing.T, b *browserPage, base, id string) {
	t.Helper()
	b.do("open the page", chromedp.Navigate(base+"/"))
	b.useToken(aliceToken)
	b.waitJS("the list", `document.querySelector("#threads") !== null`)
	b.do("open the thread", chromedp.Navigate(base+"/#/threads/"+id))
	b.waitJS("the thread's turns", `document.getElementById("thread-id")?.textContent === "`+id+`" &&
		document.querySelectorAll("#turns article.turn").length === 2 ||
		document.getElementById("message").textContent !== ""`)
	if msg := b.message(); msg != "" {
		t.Errorf("the thread view says %q instead of showing the thread", msg)
	}
}

// TestThreadBrowserDeeplyQuotedAnswer: a model's answer (or an
// imported turn) of many '>' made markdown.js recurse once per level until
// the stack overflowed; the view showed "Maximum call stack size exceeded"
// and none of the thread, so its Delete button was out of reach too.
func TestThreadBrowserDeeplyQuotedAnswer(t *testing.T) {
	chromiumPath(t)
	const id = "55555555-5555-4555-8555-555555555555"
	gw := importedGateway(t, answeredThread(id, strings.Repeat(">", 20000)+" deep"))
	openThreadAs(t, openBrowser(t, t.TempDir()), gw, id)
}

// TestThreadBrowserHugeAnswer: the inline Markdown pattern
// rescans the rest of the text from every "[" that opens no link, so a
// turn at the 2 MB turn limit of "[a](" froze the tab for minutes (200 KB
// already takes seconds) and the thread could not be viewed or deleted in
// the page.
func TestThreadBrowserHugeAnswer(t *testing.T) {
	chromiumPath(t)
	const id = "66666666-6666-4666-8666-666666666666"
	gw := importedGateway(t, answeredThread(id, strings.Repeat("[a](", 500_000)))
	openThreadAs(t, openBrowser(t, t.TempDir()), gw, id)
}

// slowMarkdown are texts under the page's plain-text limit (100,000
// characters) built to make a backtracking Markdown renderer slow:
// openers that close nothing, and long runs a pattern can split in many
// ways. Each is a JavaScript expression.
var slowMarkdown = map[string]string{
	"links that never close":          `"[a](".repeat(24000)`,
	"brackets":                        `"[".repeat(99000)`,
	"backticks":                       `"` + "\\`" + `".repeat(99000)`,
	"code spans of unequal runs":      `"` + "\\`\\`a\\`" + `".repeat(24000)`,
	"strong that never closes":        `"**a ".repeat(24000)`,
	"underscores that never close":    `"__a ".repeat(24000)`,
	"a heading of spaces":             `"# a" + " ".repeat(99000) + "x"`,
	"a heading of closing hashes":     `"# " + "#".repeat(99000) + "x"`,
	"a fence line of spaces":          `"` + "\\`\\`\\`" + `" + " ".repeat(99000) + "x y"`,
	"a link label of spaces":          `"[" + " ".repeat(99000) + "](x"`,
	"twenty thousand nested quotes":   `">".repeat(20000) + " deep"`,
	"thirty thousand one-line quotes": `"> a\n".repeat(30000)`,
}

// TestThreadBrowserMarkdownInLinearTime: the Markdown renderer's patterns
// backtracked over whole lines, so that a turn under the plain-text limit
// could freeze the tab: 100 KB of '[' or '`' took seconds, a heading line
// of 100 KB of spaces hours. Each text must render in well under a second
// or two. A text over the limit is rendered again, up to renderTries times,
// and its fastest time counts: backtracking is as slow on every try, while
// a machine busy with the rest of the suite slowed one try of a 0.1 s text
// to 1.6 s.
func TestThreadBrowserMarkdownInLinearTime(t *testing.T) {
	chromiumPath(t)
	gw := importedGateway(t, answeredThread("bbbbbbbb-bbbb-4bbb-8bbb-bbbbbbbbbbbb", "short"))
	b := openBrowser(t, t.TempDir())
	b.do("open the page", chromedp.Navigate(gw+"/"))
	const limit, renderTries = 1500, 3
	for name, text := range slowMarkdown {
		var times []float64
		for len(times) < renderTries && (len(times) == 0 || slices.Min(times) > limit) {
			// Each try's text is another (n more line ends), so no cache
			// of a render could answer a try.
			times = append(times, evalJS[float64](b, `import("/ui/markdown.js").then(({ render }) => {
				const text = (`+text+`) + "\n".repeat(`+strconv.Itoa(len(times))+`);
				const start = performance.now();
				render(text);
				return performance.now() - start;
			})`, chromedp.EvalAwaitPromise))
		}
		t.Logf("%s: %.0f ms", name, times)
		if ms := slices.Min(times); ms > limit {
			t.Errorf("rendering %s took %.0f ms at best of %d; want it in proportion to the text (well under a second)",
				name, ms, len(times))
		}
	}
	b.noProblems()
}
