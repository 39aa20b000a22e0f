// The thread view: the thread's facts and relatives, actions (branch,
// export, delete), pictures of its tokens, its workflow steps and files,
// and every turn, kept up to date while it is open.

import * as api from "./api.js";
import { h, replace } from "./dom.js";
import { ago, bytes, count, dollars, shortID, until, when } from "./format.js";
import { render } from "./markdown.js";
import { budget, turnChart } from "./usage.js";

const POLL_MS = 2000;
const FOLD_CHARS = 1800, FOLD_LINES = 30; // a longer turn starts folded
// PLAIN_CHARS: a longer turn shows as plain text; Markdown would take too
// long to lay out, and no one reads such a turn as prose.
const PLAIN_CHARS = 100_000;

// showThread draws thread id, then polls its summary (cheap: no text, no
// look for branches) and reads the whole view again only when it changed.
// live says whether the page still shows this thread: an answer that
// comes after the reader moved on draws nothing.
export async function showThread(ui, id, live) {
  const view = await api.get(api.thread(id, "/view"));
  if (!live()) return;
  if (ui.state.unfolded?.thread !== id) ui.state.unfolded = { thread: id, turns: new Set() };
  draw(ui, view);
  let seen = stamp(view.thread);
  ui.poll(async () => {
    const now = await api.get(api.thread(id, "/summary"));
    // While the delete dialog is open a redraw would close it: the change
    // stays unseen until a poll after it closes.
    if (!live() || stamp(now) === seen || deleting()) return;
    const next = await api.get(api.thread(id, "/view"));
    if (!live() || deleting()) return;
    seen = stamp(next.thread);
    draw(ui, next);
  }, POLL_MS, live);
}

// stamp is what changes when a thread does.
function stamp(t) {
  return t.last_updated_at + " " + t.turn_count;
}

function deleting() {
  return document.getElementById("confirm-delete")?.open === true;
}

function draw(ui, v) {
  const t = v.thread;
  const unfolded = ui.state.unfolded.turns;
  document.title = "zen thread " + shortID(t.thread_id);
  const scrolled = window.scrollY; // a redraw keeps the reader's place
  replace(ui.main,
    h("nav", { class: "crumbs" }, h("a", { href: "#/" }, "← Threads")),
    h("h2", { id: "thread-title" }, title(t)),
    facts(v),
    actions(ui, t),
    relatives(v),
    h("section", { id: "charts" }, h("h3", {}, "Tokens"), turnChart(v.turns), budget(v, ui)),
    steps(v.steps),
    files(v.files),
    h("section", { id: "turns" }, h("h3", {}, `Turns (${v.turns.length})`),
      v.turns.length ? v.turns.map((turnView) => turn(turnView, unfolded)) :
        h("p", { class: "muted" }, "No turns of its own yet: a continuation of this thread adds them.")));
  window.scrollTo(0, scrolled);
}

// title is the first line of the first prompt, or the thread's id.
function title(t) {
  const line = (t.first_prompt || "").split("\n")[0].trim();
  if (!line) return (t.parent_thread_id ? "Branch " : "Thread ") + shortID(t.thread_id);
  return line.length > 120 ? line.slice(0, 120) + "…" : line;
}

function facts(v) {
  const t = v.thread;
  const row = (k, ...val) => h("div", {}, h("dt", {}, k), h("dd", {}, ...val));
  return h("dl", { class: "facts" },
    row("Thread", h("code", { id: "thread-id" }, t.thread_id)),
    row("Tool", t.tool_name),
    row("Started", h("span", { title: when(t.created_at) }, ago(t.created_at))),
    row("Updated", h("span", { title: when(t.last_updated_at) }, ago(t.last_updated_at))),
    row("Expires", h("span", { title: when(t.expires_at) }, until(t.expires_at))),
    row("Turns", String(t.turn_count)),
    row("Models", t.models.join(", ") || "–"),
    row("Tokens", h("span", { id: "thread-tokens" },
      `${count(t.input_tokens)} in / ${count(t.output_tokens)} out`)),
    row("Cost", dollars(t.cost_usd)));
}

function actions(ui, t) {
  const dialog = h("dialog", { id: "confirm-delete" },
    h("p", {}, "Delete thread ", h("code", {}, t.thread_id), "? Its turns are gone for good; its branches keep " +
      "their own turns but lose this history."),
    h("form", { method: "dialog", class: "buttons" },
      h("button", { id: "delete-cancel", value: "cancel" }, "Cancel"),
      h("button", { id: "delete-confirm", value: "delete", class: "danger" }, "Delete")));
  dialog.addEventListener("close", async () => {
    if (dialog.returnValue !== "delete") return;
    try {
      await api.call(api.thread(t.thread_id), { method: "DELETE" });
      ui.flash(`Deleted thread ${t.thread_id}.`);
      location.hash = "#/";
    } catch (e) {
      ui.fail(e);
    }
  });
  return h("div", { class: "actions" },
    h("button", {
      id: "branch", type: "button", title: "a new thread that starts from this one's history",
      onclick: async () => {
        try {
          const got = await api.post(api.thread(t.thread_id, ":branch"), {});
          ui.flash(`Branched thread ${got.thread.thread_id} from ${t.thread_id}.`);
          location.hash = "#/threads/" + got.thread.thread_id;
        } catch (e) {
          ui.fail(e);
        }
      },
    }, "Branch"),
    h("button", {
      id: "export", type: "button",
      onclick: () => api.download("/v1/threads:export?thread_id=" + encodeURIComponent(t.thread_id),
        `zen-thread-${t.thread_id}.jsonl`).catch(ui.fail),
    }, "Export"),
    h("button", { id: "delete", type: "button", class: "danger", onclick: () => dialog.showModal() }, "Delete…"),
    dialog);
}

function relatives(v) {
  const link = (l) => h("a", { href: "#/threads/" + l.thread_id }, l.first_prompt || shortID(l.thread_id));
  const parent = v.parent ?
    h("p", { id: "parent" }, "Continues from ", v.parent.missing ?
      h("span", { class: "muted" }, `${v.parent.thread_id} (gone: expired, deleted, or not yours)`) :
      link(v.parent)) : null;
  const branches = v.branches.length || !v.branches_complete ?
    h("div", { id: "branches" }, h("h3", {}, `Branches (${v.branches.length})`),
      h("ul", {}, v.branches.map((b) =>
        h("li", {}, link(b), h("span", { class: "muted" }, " · " + ago(b.created_at))))),
      v.branches_complete ? null : h("p", { class: "muted" }, "You have many threads: some branches may be missing.")) :
    null;
  return h("section", { class: "relatives" }, parent, branches);
}

function steps(list) {
  if (!list.length) return null;
  return h("section", { id: "steps" }, h("h3", {}, "Workflow steps"),
    h("table", {}, h("thead", {}, h("tr", {}, ["Step", "Status", "Confidence", "Findings", "Turn"].map((c) =>
      h("th", { scope: "col" }, c)))),
    h("tbody", {}, list.map((s) => h("tr", {},
      h("td", { class: "num" }, `${s.step_number} of ${s.total_steps}`),
      h("td", {}, h("span", { class: "status" }, s.status || "–")),
      h("td", {}, s.confidence || "–"),
      h("td", { class: "findings" }, s.findings || "–"),
      h("td", {}, h("a", { href: "#turn-" + s.turn, "data-turn-link": s.turn }, "#" + s.turn)))))));
}

function files(list) {
  if (!list.length) return null;
  return h("section", { id: "files" }, h("h3", {}, "Files"),
    h("table", {}, h("thead", {}, h("tr", {}, ["Path", "Size", "SHA-256", "Turns", "Changed"].map((c) =>
      h("th", { scope: "col" }, c)))),
    h("tbody", {}, list.map((f) => h("tr", { class: f.changed_at.length ? "changed" : "" },
      h("td", {}, h("code", {}, f.path)),
      h("td", { class: "num" }, bytes(f.size_bytes)),
      h("td", { title: f.sha256 }, h("code", {}, f.sha256.slice(0, 12))),
      h("td", {}, f.turns.map((n) => "#" + n).join(" ")),
      h("td", {}, f.changed_at.length ? "at " + f.changed_at.map((n) => "#" + n).join(" ") : "no"))))));
}

// turn draws one turn; unfolded holds the turns the reader unfolded,
// which stay so when the view is drawn again.
function turn(t, unfolded) {
  const head = h("header", { class: "turn-head" },
    h("span", { class: "role " + t.role }, t.role), h("span", { class: "index" }, "#" + t.index),
    t.tool_name ? h("span", {}, t.tool_name) : null,
    t.model_name ?
      h("span", { class: "model" }, t.model_name + (t.model_provider ? ` (${t.model_provider})` : "")) : null,
    t.timestamp ? h("time", { datetime: t.timestamp, title: when(t.timestamp) }, when(t.timestamp)) : null,
    t.input_tokens || t.output_tokens ?
      h("span", { class: "tokens" }, `${count(t.input_tokens)} in / ${count(t.output_tokens)} out`) :
      h("span", { class: "tokens muted" }, `~${count(t.text_tokens)} tokens`),
    t.cost_usd ? h("span", { class: "cost" }, dollars(t.cost_usd)) : null,
    trace(t));
  const body = h("div", { class: "turn-body" }, text(t.content));
  const lines = t.content.split("\n").length;
  let fold = null;
  if (t.content.length > FOLD_CHARS || lines > FOLD_LINES) {
    const label = (folded) => folded ? `Show all ${lines} lines` : "Fold";
    body.classList.toggle("folded", !unfolded.has(t.index));
    fold = h("button", {
      type: "button", class: "fold",
      onclick: () => {
        const folded = body.classList.toggle("folded");
        if (folded) unfolded.delete(t.index);
        else unfolded.add(t.index);
        fold.textContent = label(folded);
      },
    }, label(!unfolded.has(t.index)));
  }
  const chips = t.files.length ? h("ul", { class: "turn-files" }, t.files.map((f) =>
    h("li", { class: f.changed ? "changed" : "", title: f.sha256 },
      h("code", {}, f.path), ` ${bytes(f.size_bytes)}`, f.changed ? h("strong", {}, " changed") : null))) : null;
  return h("article", { class: "turn " + t.role, id: "turn-" + t.index, dataset: { index: t.index } },
    head, chips, body, fold, t.images ? h("p", { class: "muted" }, `${t.images} image(s)`) : null);
}

// text is a turn's text as Markdown, or as plain text when it is too long
// for that or the renderer fails on it: one odd turn must not hide the
// thread (or its Delete button).
function text(content) {
  const plain = (why) => [h("p", { class: "muted" }, why), h("pre", { class: "plain" }, content)];
  if (content.length > PLAIN_CHARS) {
    return plain(`Shown as plain text: ${count(content.length)} characters is too long to lay out as Markdown.`);
  }
  try {
    return render(content);
  } catch (e) {
    return plain(`Shown as plain text: it could not be laid out as Markdown (${e.message}).`);
  }
}

function trace(t) {
  if (!t.trace_id) return null;
  const label = "trace " + t.trace_id.slice(0, 8);
  return t.trace_url ?
    h("a", { class: "trace", href: t.trace_url, target: "_blank", rel: "noopener noreferrer", title: t.trace_id },
      label) :
    h("span", { class: "trace", title: t.trace_id + " (set ZEN_TRACE_URL to link traces)" }, label);
}
