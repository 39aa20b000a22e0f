// The thread browser's entry: the token form, the message line, and the
// two views, chosen by the address's fragment (#/ and #/threads/<id>).

import { APIError, token } from "./api.js";
import { replace } from "./dom.js";
import { showList } from "./list.js";
import { showThread } from "./thread.js";

const main = document.getElementById("main");
const message = document.getElementById("message");
const MAX_RETRY_MS = 30000; // the longest wait between polls that fail
let shown = 0; // counts the views shown: a view's answers draw only while it is the last
let timer = null;
let flashed = "";

// ui is what the views use of the page around them.
const ui = {
  main,
  state: {}, // what views keep across redraws (the budget's model, the turns unfolded)
  say(kind, text) {
    message.className = "message " + kind;
    message.textContent = text;
    message.hidden = !text;
  },
  // flash is said once, after the next view is shown.
  flash(text) {
    flashed = text;
  },
  // poll calls check every ms while live() holds: each call after the
  // last one answered, none while the tab is hidden. A network failure, a
  // 429 (the client's share of the gateway is taken: its turn comes) or a
  // 5xx waits longer each time (up to MAX_RETRY_MS) and tries again; any
  // other refusal (401, 404) ends the polling with its message.
  poll(check, ms, live) {
    let wait = ms, failing = false;
    const next = () => {
      if (live()) timer = setTimeout(tick, wait);
    };
    const tick = async () => {
      timer = null;
      if (!live()) return;
      if (document.hidden) {
        document.addEventListener("visibilitychange", () => live() && !timer && tick(), { once: true });
        return;
      }
      try {
        await check();
        wait = ms;
        if (failing && live()) ui.say("info", "");
        failing = false;
      } catch (e) {
        if (!live()) return;
        if (!(e instanceof APIError) || (e.status !== 0 && e.status !== 429 && e.status < 500)) {
          ui.fail(e);
          return;
        }
        failing = true;
        wait = Math.min(wait * 2, MAX_RETRY_MS);
        ui.say("error", `${e.message} Trying again in ${Math.round(wait / 1000)} s.`);
      }
      next();
    };
    next();
  },
  reload: () => route(),
  fail(e) {
    if (e instanceof APIError && e.status === 401) {
      stopPolling();
      replace(main); // nothing of the last answer stays on show
      ui.say("error", token.get() ?
        "The gateway refused this token (401): it is none of zen's client tokens (ZEN_AUTH_TOKEN or " +
        "ZEN_AUTH_TOKENS_FILE). Enter the right one above." :
        "This gateway needs a bearer token (401): enter it above. It is kept in this browser tab only.");
      document.getElementById("token").focus();
      return;
    }
    if (e instanceof APIError && e.status === 404 && location.hash.startsWith("#/threads/")) {
      replace(main);
      ui.say("error", "No such thread: it expired, was deleted, or belongs to another client. (" + e.message + ")");
      return;
    }
    ui.say("error", e.message || String(e));
  },
};

// stopPolling ends the polls of the view shown, and makes answers it is
// still waiting for draw nothing.
function stopPolling() {
  shown++;
  clearTimeout(timer);
  timer = null;
}

async function route() {
  stopPolling();
  const mine = shown;
  const live = () => mine === shown;
  ui.say("info", flashed);
  flashed = "";
  const [path, query = ""] = (location.hash.slice(1) || "/").split("?");
  try {
    if (path.startsWith("/threads/")) {
      await showThread(ui, decodeURIComponent(path.slice("/threads/".length)), live);
    } else {
      await showList(ui, new URLSearchParams(query), live);
    }
  } catch (e) {
    if (live()) ui.fail(e);
  }
}

function showTokenState() {
  document.getElementById("token-state").textContent = token.get() ? "token set for this tab" : "no token";
}

document.getElementById("auth").addEventListener("submit", (e) => {
  e.preventDefault();
  const field = document.getElementById("token");
  if (field.value.trim()) token.set(field.value);
  field.value = "";
  showTokenState();
  route();
});
document.getElementById("forget-token").addEventListener("click", () => {
  token.clear();
  showTokenState();
  route();
});
// A link to a turn (#turn-3) scrolls to it instead of changing the view.
document.addEventListener("click", (e) => {
  const a = e.target.closest("a[data-turn-link]");
  if (!a) return;
  e.preventDefault();
  document.getElementById("turn-" + a.dataset.turnLink)?.scrollIntoView({ behavior: "smooth" });
});
window.addEventListener("hashchange", route);
showTokenState();
route();
