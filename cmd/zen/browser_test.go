package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/zenmcp/zen/services/platform/fakemodel"
)

// markdownReply is what the fake model answers: Markdown the page renders.
const markdownReply = "## Adding numbers\n\nUse `a + b`:\n\n```python\ndef add(a, b):\n    return a + b\n```\n\n" +
	"- works for ints\n- and **floats**\n\nSee [the docs](https://docs.python.org/3/)."

// longReply is the answer to the chat's second prompt: long enough that
// the page folds it.
var longReply = strings.Repeat("A line of a long answer.\n", 39) + "The end."

// hostileText is a turn that would run script if the page took it as HTML
// or followed its link.
const hostileText = `<script>window.zenPwned = 1</script><img src=x onerror="window.zenPwned = 2"> ` +
	`and [a link](javascript:window.zenPwned=3)`

// browserThreads are the threads the test makes through MCP before the
// browser looks at them.
type browserThreads struct {
	chat, workflow, hostile, branch, bobs string
	file                                  string // the workflow's file, changed between its steps
	fake                                  *fakemodel.Server
}

func makeBrowserThreads(t *testing.T, fake *fakemodel.Server, alice, bob *mcp.ClientSession,
	gateway, dir string) browserThreads {
	t.Helper()
	th := browserThreads{fake: fake}
	// The chat embeds a file, which changes before the continuation sends
	// it again.
	th.file = filepath.Join(dir, "calc.py")
	if err := writeFile(th.file, "def add(a, b):\n    return a - b\n"); err != nil {
		t.Fatal(err)
	}
	chat := func(prompt, id string) string {
		t.Helper()
		args := map[string]any{"prompt": prompt, "model": "llama3.2", "working_directory_absolute_path": dir,
			"absolute_file_paths": []any{th.file}}
		if id != "" {
			args["continuation_id"] = id
		}
		res, got := callTool(t, alice, "chat", args)
		offer, _ := got["continuation_offer"].(map[string]any)
		if res.IsError || offer == nil {
			t.Fatalf("chat %q: %s", prompt, text(res))
		}
		return offer["continuation_id"].(string)
	}
	th.chat = chat("How do I add two numbers in Python?", "")
	if err := writeFile(th.file, "def add(a, b):\n    return a + b  # fixed\n"); err != nil {
		t.Fatal(err)
	}
	chat("And three numbers?", th.chat)

	files := map[string]any{"relevant_files": []any{th.file}, "files_checked": []any{th.file}}
	res, got := callTool(t, alice, "debug", step(1, 2, true, files))
	th.workflow, _ = got["continuation_id"].(string)
	if res.IsError || th.workflow == "" {
		t.Fatalf("debug step 1: %s", text(res))
	}
	if res, _ := callTool(t, alice, "debug", step(2, 2, false,
		mergeArgs(files, map[string]any{"continuation_id": th.workflow, "confidence": "high"}))); res.IsError {
		t.Fatalf("debug step 2: %s", text(res))
	}
	th.hostile = startChat(t, stack{session: alice}, hostileText)

	code, body := request(t, "POST", gateway+"/v1/threads/"+th.chat+":branch", aliceToken, "{}")
	var branched struct {
		Thread struct {
			ThreadID string `json:"thread_id"`
		}
	}
	if err := json.Unmarshal([]byte(body), &branched); code != http.StatusOK || err != nil {
		t.Fatalf("branch: %d %s", code, body)
	}
	th.branch = branched.Thread.ThreadID
	th.bobs = startChat(t, stack{session: bob}, "bob's own question")
	return th
}

// TestThreadBrowser drives the gateway's thread browser in headless
// Chromium as a person would: a token typed in, the list, a thread with
// its turns, tokens, charts, files and steps, a turn that arrives while
// it is open, branch, export, delete and import, a hostile turn that must
// stay text, a wrong token and another client's view. The screenshots it
// saves (go test -run TestThreadBrowser -artifacts -outputdir DIR keeps
// them) are where docs/thread-browser.png comes from.
func TestThreadBrowser(t *testing.T) {
	chromiumPath(t) // before zen starts: a missing browser says so first
	fake := fakemodel.New(t)
	fake.SetReply(func(req fakemodel.Request) fakemodel.Reply {
		if asked := req.AllText(); strings.Contains(asked, "And three numbers?") && !strings.Contains(asked, "And four?") {
			return fakemodel.Reply{Content: longReply}
		}
		return fakemodel.Reply{Content: markdownReply}
	})
	dir := t.TempDir()
	tokens := filepath.Join(dir, "tokens")
	catalogue := filepath.Join(dir, "custom.json")
	// Two models: the thread's, priced, and another whose budget the page
	// can be asked for.
	pricedModel, _ := json.Marshal(map[string]any{"models": []any{map[string]any{
		"model_name": "llama3.2", "aliases": []string{"local-llama"}, "intelligence_score": 6,
		"context_window": 128000, "max_output_tokens": 8000, "temperature_constraint": "range",
		"input_cost_per_million_tokens": 3, "output_cost_per_million_tokens": 15,
	}, map[string]any{
		"model_name": "mistral-small", "intelligence_score": 5, "context_window": 32000, "max_output_tokens": 4000,
		"temperature_constraint": "range",
	}}})
	for path, content := range map[string]string{tokens: "alice " + aliceToken + "\nbob " + bobToken + "\n",
		catalogue: string(pricedModel)} {
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	const traceViewer = "http://127.0.0.1:16686/trace/"
	project := t.TempDir() // a shared server reads files only under ZEN_FILE_ROOTS
	p := startZen(t, mergeEnv(fakeEnv(fake), map[string]string{"ZEN_AUTH_TOKENS_FILE": tokens,
		"CUSTOM_MODELS_CONFIG_PATH": catalogue, "ZEN_TRACE_URL": traceViewer + "{trace_id}", "ZEN_FILE_ROOTS": project}),
		[]string{"mcp", "gateway"}, serveArgs()...)
	mcpURL, gw := "http://"+p.addr("mcp")+"/mcp", "http://"+p.addr("gateway")
	alice, err := connectAs(t, mcpURL, aliceToken)
	if err != nil {
		t.Fatal(err)
	}
	bob, err := connectAs(t, mcpURL, bobToken)
	if err != nil {
		t.Fatal(err)
	}
	th := makeBrowserThreads(t, fake, alice, bob, gw, project)
	downloads := t.TempDir()
	b := openBrowser(t, downloads)

	// Without a token the page asks for one and shows nothing.
	b.do("open the page", chromedp.Navigate(gw+"/"))
	b.waitJS("the request for a token", `document.getElementById("message").textContent.includes("needs a bearer token")`)

	// Alice's threads, newest first; nothing of bob's.
	b.useToken(aliceToken)
	b.waitRows("alice's threads, newest first", th.branch, th.hostile, th.workflow, th.chat)
	// The token lives in this tab's session storage and goes out as a
	// header: no cookie a page of another site could ride on.
	if kept := evalJS[[]string](b, `[sessionStorage.getItem("zen.token"), document.cookie]`); !slices.Equal(kept,
		[]string{aliceToken, ""}) {
		t.Errorf("session storage and cookies hold %q, want the token and no cookie", kept)
	}
	if evalJS[bool](b, `document.body.textContent.includes(`+jsString(th.bobs)+`)`) {
		t.Error("alice's list shows bob's thread")
	}
	checkHostileTurnIsText(t, b, "the list")
	checkListRow(t, b, th.chat)
	b.screenshot("threads-list.png")

	checkSearchAndFilter(t, b, th)
	checkChatThread(t, b, th, alice, traceViewer)
	checkWorkflowThread(t, b, th)
	checkHostileThread(t, b, th)
	checkBranchDeleteExportImport(t, b, th, gw, downloads)
	b.noProblems()
	// Trusted Types: the page cannot hand a string to the browser as
	// markup, whatever its code tried (this makes the one CSP report).
	if got := evalJS[string](b, `(() => {
		try { document.createElement("div").innerHTML = "<img src=x>"; return "assigned"; } catch (e) { return e.name; }
	})()`); got != "TypeError" {
		t.Errorf("assigning a string to innerHTML: %s, want a TypeError from Trusted Types", got)
	}

	// A wrong token: a clear message, and none of alice's data left on show.
	b.do("forget the token", chromedp.Click(chromedp.CSS("#forget-token")))
	b.useToken("wrong-0123456789abcdef")
	b.waitJS("the refusal", `document.getElementById("message").textContent.includes("refused this token")`)
	if n := evalJS[int](b, `document.querySelectorAll("#main *").length`); n != 0 {
		t.Errorf("after a wrong token the page still shows %d elements of data", n)
	}
	// Bob sees his thread alone.
	b.useToken(bobToken)
	b.waitRows("bob's threads", th.bobs)
}

func checkSearchAndFilter(t *testing.T, b *browserPage, th browserThreads) {
	t.Helper()
	b.do("search the first prompts", chromedp.SendKeys(chromedp.CSS("#search"), "ADD TWO"),
		chromedp.Click(chromedp.CSS("#filter button")))
	b.waitRows("the search for ADD TWO", th.chat)
	// (chromedp's SetValue cannot set "": it sends no argument, and the
	// field would read "undefined".)
	evalJS[string](b, `document.getElementById("search").value = ""`)
	b.do("filter by tool", chromedp.SetValue(chromedp.CSS("#tool-filter"), "debug"),
		chromedp.Click(chromedp.CSS("#filter button")))
	b.waitRows("the threads of debug", th.workflow)
	b.do("back to every thread", chromedp.Navigate(strings.Split(evalJS[string](b, "location.href"), "#")[0]+"#/"))
	b.waitRows("every thread", th.branch, th.hostile, th.workflow, th.chat)
}

// checkChatThread opens the chat from the list: its turns, tokens, cost,
// charts and trace links, and a turn that arrives while it is open.
func checkChatThread(t *testing.T, b *browserPage, th browserThreads, alice *mcp.ClientSession, traceViewer string) {
	t.Helper()
	b.do("open the chat", chromedp.Click(chromedp.CSS(`tr[data-thread-id="`+th.chat+`"] a.thread-link`)))
	b.waitJS("the chat's turns and charts", `document.querySelectorAll("#turns article.turn").length === 4 &&
		document.querySelectorAll("#turn-chart svg rect.seg").length >= 4 &&
		document.querySelectorAll("#budget svg rect.seg").length >= 2`)
	got := evalJS[map[string]string](b, `({
		roles: [...document.querySelectorAll("#turns article .role")].map((r) => r.textContent).join(","),
		tokens: document.getElementById("thread-tokens").textContent,
		cost: document.querySelector(".facts").textContent.match(/\$\d+\.\d+/)?.[0] ?? "",
		heading: document.querySelector("#turn-2 .turn-body h4")?.textContent ?? "",
		code: document.querySelector("#turn-2 .turn-body pre code")?.textContent ?? "",
		link: document.querySelector("#turn-2 .turn-body a")?.href ?? "",
		trace: document.querySelector("#turn-2 a.trace")?.href ?? "",
	})`)
	if got["roles"] != "user,assistant,user,assistant" {
		t.Errorf("turn roles %q", got["roles"])
	}
	if !regexp.MustCompile(`^[1-9][\d,]* in / [1-9][\d,]* out$`).MatchString(got["tokens"]) || got["cost"] == "" {
		t.Errorf("thread tokens %q and cost %q: want both counted", got["tokens"], got["cost"])
	}
	if got["heading"] != "Adding numbers" || !strings.Contains(got["code"], "return a + b") ||
		got["link"] != "https://docs.python.org/3/" {
		t.Errorf("the answer's Markdown: heading %q, code %q, link %q", got["heading"], got["code"], got["link"])
	}
	if !regexp.MustCompile("^" + regexp.QuoteMeta(traceViewer) + "[0-9a-f]{32}$").MatchString(got["trace"]) {
		t.Errorf("trace link %q, want %s<trace id>", got["trace"], traceViewer)
	}
	checkTurnDetails(t, b)
	checkBudgetForAModel(t, b)
	if !evalJS[bool](b, `[...document.querySelectorAll("#branches a")].some((a) =>
		a.hash === "#/threads/`+th.branch+`")`) {
		t.Error("the chat does not list its branch")
	}
	files := evalJS[[]string](b, `[...document.querySelectorAll("#files tbody tr")].map((r) =>
		[...r.cells].map((c) => c.textContent).join("|"))`)
	if want := []string{th.file + "|41 B|" + sha256hex("def add(a, b):\n    return a + b  # fixed\n")[:12] +
		"|#1 #3|at #3"}; !slices.Equal(files, want) {
		t.Errorf("the chat's files %q, want %q: the file changed before turn 3", files, want)
	}
	// Live: a continuation made elsewhere shows up without a reload.
	// The long answer starts folded; unfolded, it stays so when new turns
	// come.
	if !evalJS[bool](b, `document.querySelector("#turn-4 .turn-body").classList.contains("folded")`) {
		t.Error("the 40-line answer (turn 4) is not folded")
	}
	b.do("unfold the long answer", chromedp.Click(chromedp.CSS("#turn-4 button.fold")))
	continueChat(t, stack{session: alice}, th.fake, th.chat, "And four?")
	b.waitJS("the new turns", `document.querySelectorAll("#turns article.turn").length === 6`)
	if got := evalJS[map[string]any](b, `({folded: document.querySelector("#turn-4 .turn-body").classList.contains(
		"folded"), button: document.querySelector("#turn-4 button.fold").textContent})`); !cmp.Equal(got,
		map[string]any{"folded": false, "button": "Fold"}) {
		t.Errorf("the unfolded answer after new turns came: %v, want it unfolded", got)
	}
	b.screenshot("thread-view.png")
}

// checkListRow: a row of the list shows its thread's age, expiry, model,
// tokens and cost.
func checkListRow(t *testing.T, b *browserPage, id string) {
	t.Helper()
	got := evalJS[[]string](b, `[...document.querySelector('tr[data-thread-id="`+id+`"]').cells].map((c) =>
		c.textContent)`)
	want := []*regexp.Regexp{
		regexp.MustCompile(`^How do I add two numbers in Python\?` + id + `$`), // the prompt, then the id
		regexp.MustCompile(`^chat$`),
		regexp.MustCompile(`^(< 1 min|\d+ min) ago$`),                // started
		regexp.MustCompile(`^(< 1 min|\d+ min) ago$`),                // updated
		regexp.MustCompile(`^in (2 h [1-5]\d|3 h 0) min$`),           // expires: 3 h after the last turn
		regexp.MustCompile(`^4$`),                                    // turns
		regexp.MustCompile(`^llama3\.2$`),                            // models
		regexp.MustCompile(`^[1-9][\d,]* / [1-9][\d,]*$`),            // tokens in / out
		regexp.MustCompile(`^(\$0\.\d{4}|\$\d+\.\d{2}|<\$0\.0001)$`), // cost
	}
	if len(got) != len(want) {
		t.Fatalf("the chat's row has cells %q, want %d", got, len(want))
	}
	for i, re := range want {
		if !re.MatchString(got[i]) {
			t.Errorf("the chat's row, cell %d: %q, want %s", i+1, got[i], re)
		}
	}
}

// checkTurnDetails: an answer shows the model and provider that wrote it
// and when, as a machine-readable time.
func checkTurnDetails(t *testing.T, b *browserPage) {
	t.Helper()
	got := evalJS[map[string]string](b, `({
		model: document.querySelector("#turn-2 .model")?.textContent ?? "",
		at: document.querySelector("#turn-2 time[datetime]")?.getAttribute("datetime") ?? "",
		shown: document.querySelector("#turn-2 time[datetime]")?.textContent ?? "",
	})`)
	at, err := time.Parse(time.RFC3339Nano, got["at"])
	if got["model"] != "llama3.2 (custom)" || err != nil || time.Since(at) > 10*time.Minute || got["shown"] == "" {
		t.Errorf("turn 2 shows model %q at %q (%q): want llama3.2 (custom) at a time of this test", got["model"],
			got["at"], got["shown"])
	}
}

// checkBudgetForAModel: the budget can be drawn for a model other than
// the thread's, and its caption names that model and its window.
func checkBudgetForAModel(t *testing.T, b *browserPage) {
	t.Helper()
	b.waitJS("the models to choose from", `[...document.querySelectorAll("#budget-model option")].some((o) =>
		o.value === "mistral-small")`)
	evalJS[bool](b, `(() => {
		const choose = document.getElementById("budget-model");
		choose.value = "mistral-small";
		return choose.dispatchEvent(new Event("change"));
	})()`)
	b.waitJS("the budget for mistral-small", `document.querySelector("#budget figcaption")?.textContent.startsWith(
		"mistral-small (32,000-token window) would see 4 of 4 turns")`)
}

// checkWorkflowThread opens the debug workflow: its steps, with their
// status, confidence and findings, and the file its last step embedded.
func checkWorkflowThread(t *testing.T, b *browserPage, th browserThreads) {
	t.Helper()
	b.do("open the workflow", chromedp.Navigate(strings.Split(evalJS[string](b, "location.href"), "#")[0]+
		"#/threads/"+th.workflow))
	b.waitJS("the workflow's steps", `document.querySelectorAll("#steps tbody tr").length === 2`)
	got := evalJS[[]string](b, `[...document.querySelectorAll("#steps tbody tr, #files tbody tr")].map((r) =>
		[...r.cells].map((c) => c.textContent).join("|"))`)
	want := []string{
		"1 of 2|pause_for_investigation|low|found something at step 1|#1",
		"2 of 2|calling_expert_analysis|high|found something at step 2|#2",
		th.file + "|41 B|" + sha256hex("def add(a, b):\n    return a + b  # fixed\n")[:12] + "|#2|no",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the workflow's steps and files (-want +got):\n%s", diff)
	}
}

// checkHostileThread opens the thread whose prompt is HTML and script.
func checkHostileThread(t *testing.T, b *browserPage, th browserThreads) {
	t.Helper()
	b.do("open the hostile thread", chromedp.Navigate(strings.Split(evalJS[string](b, "location.href"), "#")[0]+
		"#/threads/"+th.hostile))
	b.waitJS("its turns", `document.querySelectorAll("#turns article.turn").length === 2`)
	checkHostileTurnIsText(t, b, "the thread view")
	if !evalJS[bool](b, `document.querySelector("#turn-1 .turn-body").textContent.includes(`+
		jsString(hostileText[:40])+`)`) {
		t.Errorf("the hostile turn does not show as its text: %q",
			evalJS[string](b, `document.querySelector("#turn-1 .turn-body").textContent`))
	}
}

// checkHostileTurnIsText: the hostile text ran nothing and made no element.
func checkHostileTurnIsText(t *testing.T, b *browserPage, where string) {
	t.Helper()
	got := evalJS[map[string]any](b, `({
		pwned: window.zenPwned === undefined ? "no" : String(window.zenPwned),
		shown: document.getElementById("main").textContent.includes("<script>window.zenPwned = 1</script>"),
		elements: document.querySelectorAll(
			"#main script, #main img, #main [onerror], #main a[href^='javascript']").length,
	})`)
	want := map[string]any{"pwned": "no", "shown": true, "elements": 0.0}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("%s: the hostile turn (-want +got):\n%s", where, diff)
	}
}

// checkBranchDeleteExportImport uses the page's buttons: branch the chat;
// export the workflow, delete it (confirming), and import it back.
func checkBranchDeleteExportImport(t *testing.T, b *browserPage, th browserThreads, gateway, downloads string) {
	t.Helper()
	base := strings.Split(evalJS[string](b, "location.href"), "#")[0]
	b.do("branch the chat", chromedp.Navigate(base+"#/threads/"+th.chat))
	b.waitJS("the chat", `document.querySelectorAll("#turns article.turn").length === 6`)
	b.do("click Branch", chromedp.Click(chromedp.CSS("#branch")))
	b.waitJS("the new branch", `document.querySelector("#parent a")?.hash === "#/threads/`+th.chat+`" &&
		document.getElementById("message").textContent.startsWith("Branched thread")`)
	branch := strings.TrimPrefix(evalJS[string](b, "location.hash"), "#/threads/")
	if branch == th.chat || branch == th.branch || len(branch) != 36 {
		t.Errorf("Branch went to %q, want a new thread", branch)
	}

	b.do("open the workflow", chromedp.Navigate(base+"#/threads/"+th.workflow))
	b.waitJS("the workflow", `document.querySelectorAll("#steps tbody tr").length === 2`)
	b.do("click Export", chromedp.Click(chromedp.CSS("#export")))
	export := filepath.Join(downloads, "zen-thread-"+th.workflow+".jsonl")
	var exported []byte
	waitFor(t, 20*time.Second, "the export's download", func() bool {
		var err error
		exported, err = os.ReadFile(export)
		return err == nil && strings.HasSuffix(string(exported), "\n")
	})
	if !strings.Contains(string(exported), `"thread_id":"`+th.workflow+`"`) {
		t.Errorf("the export holds %.200s, want the workflow's thread", exported)
	}

	b.do("delete the workflow", chromedp.Click(chromedp.CSS("#delete")),
		chromedp.WaitVisible(chromedp.CSS("#confirm-delete")), chromedp.Click(chromedp.CSS("#delete-confirm")))
	b.waitJS("the list without it", `location.hash === "#/" && document.querySelector("#threads") !== null &&
		!document.querySelector('tr[data-thread-id="`+th.workflow+`"]') &&
		document.getElementById("message").textContent === "Deleted thread `+th.workflow+`."`)
	if code, body := request(t, "GET", gateway+"/v1/threads/"+th.workflow, aliceToken, ""); code != http.StatusNotFound {
		t.Errorf("after Delete, GET the thread: %d %s, want 404", code, body)
	}

	b.do("import the export", chromedp.SetUploadFiles(chromedp.CSS("#import-file"), []string{export}))
	b.waitJS("the workflow back", `document.querySelector('tr[data-thread-id="`+th.workflow+`"]') !== null &&
		document.getElementById("message").textContent.startsWith("Imported 1 thread from")`)
}

func sha256hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}
