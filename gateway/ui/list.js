// The threads list: newest first, paged, filtered by tool and by a search
// in the first prompt, with export of every thread and import of a file.

import * as api from "./api.js";
import { h, replace } from "./dom.js";
import { ago, count, dollars, shortID, until, when } from "./format.js";

let toolNames = null; // the tool catalogue's names, asked once

async function tools() {
  if (!toolNames) toolNames = (await api.get("/v1/tools")).tools.map((t) => t.name);
  return toolNames;
}

// listHash is the address of a list page: the filters and a page token.
export function listHash({ tool = "", q = "", page = "" } = {}) {
  const p = new URLSearchParams();
  if (tool) p.set("tool", tool);
  if (q) p.set("q", q);
  if (page) p.set("page", page);
  const s = p.toString();
  return "#/" + (s ? "?" + s : "");
}

// showList draws a page of the threads list (the gateway's page size);
// live says whether the page still shows it once the answers are in.
export async function showList(ui, params, live) {
  const filter = { tool: params.get("tool") || "", q: params.get("q") || "" };
  const current = params.get("page") || "";
  const ask = new URLSearchParams();
  if (filter.tool) ask.set("tool_name", filter.tool);
  if (filter.q) ask.set("query", filter.q);
  if (current) ask.set("page_token", current);
  const [page, names] = await Promise.all([api.get("/v1/threads:browse?" + ask), tools()]);
  if (!live()) return;
  document.title = "zen threads";
  replace(ui.main,
    h("section", { class: "toolbar" }, filterForm(filter, names), transfer(ui)),
    table(page, filter, current),
    pager(page, filter, current));
}

function filterForm(filter, names) {
  const tool = h("select", { id: "tool-filter", "aria-label": "tool" },
    h("option", { value: "" }, "every tool"),
    names.map((n) => h("option", { value: n, selected: n === filter.tool }, n)));
  const search = h("input", {
    id: "search", type: "search", value: filter.q, placeholder: "search the first prompts", "aria-label": "search",
  });
  return h("form", {
    id: "filter", class: "filter",
    onsubmit: (e) => {
      e.preventDefault();
      location.hash = listHash({ tool: tool.value, q: search.value.trim() });
    },
  }, tool, search, h("button", { type: "submit" }, "Filter"));
}

// transfer is export of every thread and import of a JSON-lines file.
function transfer(ui) {
  const replaceBox = h("input", { id: "import-replace", type: "checkbox" });
  const file = h("input", {
    id: "import-file", type: "file", accept: ".jsonl,.ndjson,.json,application/x-ndjson,application/json",
    onchange: async () => {
      const f = file.files[0];
      if (!f) return;
      try {
        const body = await f.text();
        const q = "?replace=" + (replaceBox.checked ? "true" : "false");
        const got = await (await api.call("/v1/threads:import" + q,
          { method: "POST", body, type: "application/x-ndjson" })).json();
        ui.flash(`Imported ${got.imported} thread${got.imported === 1 ? "" : "s"} from ${f.name}.`);
        ui.reload();
      } catch (e) {
        ui.fail(e);
      } finally {
        file.value = "";
      }
    },
  });
  return h("div", { class: "transfer" },
    h("button", {
      id: "export-all", type: "button",
      onclick: () => api.download("/v1/threads:export", "zen-threads.jsonl").catch(ui.fail),
    }, "Export all"),
    h("label", { class: "file" }, "Import ", file),
    h("label", {}, replaceBox, " replace existing"));
}

const COLUMNS = ["Thread", "Tool", "Started", "Updated", "Expires", "Turns", "Models", "Tokens in / out", "Cost"];

function table(page, filter, current) {
  const head = h("tr", {}, COLUMNS.map((c) => h("th", { scope: "col" }, c)));
  const rows = page.threads.map((t) => h("tr", { dataset: { threadId: t.thread_id } },
    h("td", { class: "prompt" },
      h("a", { href: "#/threads/" + t.thread_id, class: "thread-link" }, t.first_prompt ||
        (t.parent_thread_id ? `(branch of ${shortID(t.parent_thread_id)})` : "(no prompt)")),
      h("div", { class: "id" }, t.thread_id)),
    h("td", {}, t.tool_name),
    h("td", { title: when(t.created_at) }, ago(t.created_at)),
    h("td", { title: when(t.last_updated_at) }, ago(t.last_updated_at)),
    h("td", { title: when(t.expires_at) }, until(t.expires_at)),
    h("td", { class: "num" }, t.turn_count),
    h("td", {}, t.models.join(", ") || "–"),
    h("td", { class: "num" }, `${count(t.input_tokens)} / ${count(t.output_tokens)}`),
    h("td", { class: "num" }, dollars(t.cost_usd))));
  if (rows.length === 0) {
    rows.push(h("tr", { class: "empty" }, h("td", { colspan: COLUMNS.length }, empty(page, filter, current))));
  }
  return h("table", { id: "threads", class: "threads" }, h("thead", {}, head), h("tbody", {}, rows));
}

// empty says why a page shows no thread. A search looks through a bounded
// number of threads per page, so a page without a match may have a next
// one that has.
function empty(page, filter, current) {
  if (filter.tool || filter.q) {
    return page.next_page_token ?
      "None of the threads looked at so far matches: Older → looks through older ones." : "No thread matches.";
  }
  if (current) return "No older threads.";
  return "No threads yet: a tool call through MCP that keeps a conversation starts one.";
}

function pager(page, filter, current) {
  return h("nav", { class: "pager" },
    current ? h("a", { href: listHash(filter), id: "first-page" }, "← Newest") : null,
    page.next_page_token ?
      h("a", { href: listHash({ ...filter, page: page.next_page_token }), id: "next-page" }, "Older →") : null);
}
