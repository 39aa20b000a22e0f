package main

import (
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"
)

// TestThreadBrowserSearchGoesOn: a search looks through a bounded number
// of threads for each page (2,000). When none of those matches, the page
// said "No thread matches." beside an Older → link that finds the match;
// now it says the search looked at some threads only, and Older → goes
// on to the one that matches.
func TestThreadBrowserSearchGoesOn(t *testing.T) {
	chromiumPath(t)
	now := time.Now().UTC()
	var threads []map[string]any
	for i := range 2001 {
		prompt, at := fmt.Sprintf("question %d", i), now.Add(-time.Duration(i)*time.Second)
		if i == 2000 {
			prompt = "the needle"
		}
		threads = append(threads, map[string]any{
			"thread_id": fmt.Sprintf("00000000-0000-4000-8000-%012d", i), "tool_name": "chat",
			"created_at": at.Format(time.RFC3339Nano), "last_updated_at": at.Format(time.RFC3339Nano),
			"turns": []any{map[string]any{"role": "ROLE_USER", "content": prompt}},
		})
	}
	gw := importedGateway(t, threads...)
	b := openBrowser(t, t.TempDir())
	b.do("open the page", chromedp.Navigate(gw+"/"))
	b.useToken(aliceToken)
	b.waitJS("the list", `document.querySelector("#threads tbody tr") !== null`)
	b.do("search", chromedp.Navigate(gw+"/#/?q=needle"))
	b.waitJS("the first page of the search", `document.querySelector("#threads tr.empty") !== null`)
	got := evalJS[string](b, `document.querySelector("#threads tr.empty").textContent`)
	if want := "None of the threads looked at so far matches: Older → looks through older ones."; got != want {
		t.Errorf("the search's first page says %q, want %q", got, want)
	}
	b.do("look further", chromedp.Click(chromedp.CSS("#next-page")))
	b.waitRows("the needle", "00000000-0000-4000-8000-000000002000")
}

// TestThreadBrowserFormatsNumbers: how the page words sizes and costs,
// the odd ones included: a file reference without a size showed
// "undefined B", and a cost below $0.00005 "$0.0000".
func TestThreadBrowserFormatsNumbers(t *testing.T) {
	chromiumPath(t)
	gw := importedGateway(t, answeredThread("cccccccc-cccc-4ccc-8ccc-cccccccccccc", "short"))
	b := openBrowser(t, t.TempDir())
	b.do("open the page", chromedp.Navigate(gw+"/"))
	got := evalJS[[]string](b, `import("/ui/format.js").then(({ bytes, dollars }) => [
		bytes(undefined), bytes(41), bytes(2048), bytes(3 * 1024 * 1024),
		dollars(0), dollars(0.00001), dollars(0.0042), dollars(1.5),
	])`, chromedp.EvalAwaitPromise)
	want := []string{"–", "41 B", "2.0 KB", "3.0 MB", "–", "<$0.0001", "$0.0042", "$1.50"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("bytes and dollars (-want +got):\n%s", diff)
	}
}
