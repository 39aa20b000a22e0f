package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"
)

// The thread view keeps an open thread up to date by polling. These tests
// put a proxy between the page and the gateway that sees each poll and
// can hold it or fail it, as a slow or failing gateway would.

// proxyAction is what the proxy does with a request.
type proxyAction int

const (
	proxyPass proxyAction = iota
	proxyHold             // until release
	proxyFail             // 502, as a proxy in front of a gateway that is down answers
	proxyBusy             // 429, as the gateway answers once the client's share has waited its time
)

// pollProxy forwards the page's requests to a gateway. rule decides, for
// the n-th request (from 1) to a thread's /view or /summary, what to do.
type pollProxy struct {
	URL     string
	release func() // lets every held request through, now and later

	mu         sync.Mutex
	count      map[string]int // requests for /view and /summary so far
	inFlight   int
	mostAtOnce int
}

func newPollProxy(t *testing.T, gateway string, rule func(kind string, n int) proxyAction) *pollProxy {
	t.Helper()
	target, err := url.Parse(gateway)
	if err != nil {
		t.Fatal(err)
	}
	forward := httputil.NewSingleHostReverseProxy(target)
	released := make(chan struct{})
	var once sync.Once
	p := &pollProxy{count: map[string]int{}, release: func() { once.Do(func() { close(released) }) }}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		kind := r.URL.Path[strings.LastIndex(r.URL.Path, "/")+1:]
		if !strings.HasPrefix(r.URL.Path, "/v1/threads/") || kind != "view" && kind != "summary" {
			forward.ServeHTTP(w, r)
			return
		}
		p.mu.Lock()
		p.count[kind]++
		n := p.count[kind]
		p.inFlight++
		p.mostAtOnce = max(p.mostAtOnce, p.inFlight)
		p.mu.Unlock()
		defer func() {
			p.mu.Lock()
			p.inFlight--
			p.mu.Unlock()
		}()
		switch rule(kind, n) {
		case proxyHold:
			select {
			case <-released:
			case <-r.Context().Done():
				return
			}
		case proxyFail:
			http.Error(w, "bad gateway", http.StatusBadGateway)
			return
		case proxyBusy:
			w.Header().Set("Retry-After", "10")
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusTooManyRequests)
			_, _ = io.WriteString(w, `{"code":8,"message":"8 of your requests are running on the gateway","details":[]}`)
			return
		}
		forward.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(p.release) // before the server closes: Close waits for held requests
	p.URL = srv.URL
	return p
}

// seen is how many requests of kind came so far.
func (p *pollProxy) seen(kind string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.count[kind]
}

// changeThread gives thread id, as alice's, a second exchange: what a
// continuation made elsewhere would do.
func changeThread(t *testing.T, gateway, id string) {
	t.Helper()
	th := answeredThread(id, "short")
	th["turns"] = append(th["turns"].([]any),
		map[string]any{"role": "ROLE_USER", "content": "and then?"},
		map[string]any{"role": "ROLE_ASSISTANT", "content": "more", "model_name": "m"})
	line, err := json.Marshal(th)
	if err != nil {
		t.Fatal(err)
	}
	if code, body := request(t, "POST", gateway+"/v1/threads:import?replace=true", aliceToken,
		string(line)); code != http.StatusOK {
		t.Fatalf("change the thread: %d %s", code, body)
	}
}

// turnsShown is how many turns the page shows, as JavaScript.
const turnsShown = `document.querySelectorAll("#turns article.turn").length`

// TestThreadBrowserPollsOneAtATime: the thread view polled with
// setInterval every 2 s whatever became of the last poll, and each poll
// cost the gateway the whole thread and 20 pages of the client's list.
// When a view takes longer than 2 s (a large thread: a 60 MB one answered
// 377 MB of JSON), one open tab kept several at once in flight (6 of them
// took the gateway to 4 GB). The proxy holds every poll: no second one
// may start while one is unanswered.
func TestThreadBrowserPollsOneAtATime(t *testing.T) {
	chromiumPath(t)
	const id = "77777777-7777-4777-8777-777777777777"
	gw := importedGateway(t, answeredThread(id, "short"))
	proxy := newPollProxy(t, gw, func(kind string, n int) proxyAction {
		if kind == "view" && n == 1 {
			return proxyPass // the view itself answers; its polls hang, as a slow gateway's would
		}
		return proxyHold
	})
	b := openBrowser(t, t.TempDir())
	openThreadAs(t, b, proxy.URL, id)
	// Three poll periods: a page that waits for its poll asks once.
	deadline := time.After(6500 * time.Millisecond)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for done := false; !done; {
		select {
		case <-deadline:
			done = true
		case <-tick.C:
			proxy.mu.Lock()
			done = proxy.mostAtOnce > 1
			proxy.mu.Unlock()
		}
	}
	proxy.release()
	proxy.mu.Lock()
	defer proxy.mu.Unlock()
	if proxy.mostAtOnce > 1 {
		t.Errorf("the thread view had %d polls in flight at once; want 1 (the next poll after the last one answers)",
			proxy.mostAtOnce)
	}
	if proxy.count["summary"] == 0 {
		t.Error("the thread view polled its whole view; want the summary first (no text, no look for branches)")
	}
}

// TestThreadBrowserDrawsNoLeftThread: a poll still out when the reader
// opens another page drew the thread it was for over that page, once it
// came back.
func TestThreadBrowserDrawsNoLeftThread(t *testing.T) {
	chromiumPath(t)
	const id = "88888888-8888-4888-8888-888888888888"
	gw := importedGateway(t, answeredThread(id, "short"))
	proxy := newPollProxy(t, gw, func(kind string, n int) proxyAction {
		if kind == "view" && n > 1 {
			return proxyHold // the view of the changed thread comes back late
		}
		return proxyPass
	})
	b := openBrowser(t, t.TempDir())
	openThreadAs(t, b, proxy.URL, id)
	changeThread(t, gw, id)
	waitFor(t, 20*time.Second, "the poll that reads the changed thread", func() bool { return proxy.seen("view") > 1 })
	b.do("go to the list", chromedp.Navigate(proxy.URL+"/#/"))
	b.waitJS("the list", `document.querySelector("#threads tbody tr") !== null`)
	proxy.release()
	// The late view has arrived once the browser lists it among its
	// resources; two frames later anything it would draw is drawn.
	b.waitJS("the late view's arrival", `performance.getEntriesByType("resource").filter((e) =>
		e.name.endsWith("/view") && e.responseEnd > 0).length >= 2`)
	evalJS[bool](b, `new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(() => done(true))))`,
		chromedp.EvalAwaitPromise)
	got := evalJS[map[string]any](b, `({list: document.querySelector("#threads") !== null,
		thread: document.getElementById("thread-id") !== null, hash: location.hash})`)
	if diff := cmp.Diff(map[string]any{"list": true, "thread": false, "hash": "#/"}, got); diff != "" {
		t.Errorf("after the late poll the page shows (-want +got):\n%s", diff)
	}
}

// TestThreadBrowserPollsOnThroughFailures: one failed poll (the gateway
// restarting, a proxy's 502, the client's share of the gateway taken by
// its other requests: 429) ended the polling for good; now the page says
// so, waits longer, and tries again.
func TestThreadBrowserPollsOnThroughFailures(t *testing.T) {
	chromiumPath(t)
	for _, tc := range []struct {
		name    string
		failure proxyAction
		id      string
	}{
		{"502", proxyFail, "99999999-9999-4999-8999-999999999999"},
		{"429", proxyBusy, "99999999-9999-4999-8999-999999999998"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gw := importedGateway(t, answeredThread(tc.id, "short"))
			proxy := newPollProxy(t, gw, func(kind string, n int) proxyAction {
				if kind == "view" && n == 2 || kind == "summary" && n == 1 {
					return tc.failure
				}
				return proxyPass
			})
			b := openBrowser(t, t.TempDir())
			openThreadAs(t, b, proxy.URL, tc.id)
			b.waitJS("the failure said", `document.getElementById("message").textContent.includes("Trying again in")`)
			changeThread(t, gw, tc.id)
			b.waitJS("the changed thread", turnsShown+` === 4 && document.getElementById("message").hidden`)
		})
	}
}

// TestThreadBrowserKeepsTheDeleteDialog: a poll that found the thread
// changed drew it again, which closed the delete dialog under the
// reader's hand. Now no redraw comes while it is open, and the change
// shows once it closes.
func TestThreadBrowserKeepsTheDeleteDialog(t *testing.T) {
	chromiumPath(t)
	const id = "aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa"
	gw := importedGateway(t, answeredThread(id, "short"))
	proxy := newPollProxy(t, gw, func(string, int) proxyAction { return proxyPass })
	b := openBrowser(t, t.TempDir())
	openThreadAs(t, b, proxy.URL, id)
	b.do("open the delete dialog", chromedp.Click(chromedp.CSS("#delete")),
		chromedp.WaitVisible(chromedp.CSS("#confirm-delete")))
	changeThread(t, gw, id)
	polled := proxy.seen("summary") + proxy.seen("view")
	waitFor(t, 20*time.Second, "two polls after the change", func() bool {
		return proxy.seen("summary")+proxy.seen("view") >= polled+2
	})
	got := evalJS[map[string]any](b, `({open: document.getElementById("confirm-delete")?.open === true, turns: `+
		turnsShown+`})`)
	if diff := cmp.Diff(map[string]any{"open": true, "turns": 2.0}, got); diff != "" {
		t.Errorf("the thread changed while the delete dialog was open (-want +got):\n%s", diff)
	}
	b.do("cancel", chromedp.Click(chromedp.CSS("#delete-cancel")))
	b.waitJS("the changed thread", turnsShown+` === 4`)
}
