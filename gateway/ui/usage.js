// The thread view's pictures: tokens per turn, and the token budget a
// model would spend on the thread's history (GET .../history?model=).

import * as api from "./api.js";
import { bars, stack } from "./chart.js";
import { h, replace } from "./dom.js";
import { count } from "./format.js";

// turnChart draws each turn's tokens: what its model call read and wrote
// for an answer, the size of its own text for a request.
export function turnChart(turns) {
  const items = turns.map((t) => {
    const used = t.input_tokens || t.output_tokens;
    const segments = used ? [
      { value: t.input_tokens, kind: "in", title: `turn ${t.index}: ${count(t.input_tokens)} tokens in` },
      { value: t.output_tokens, kind: "out", title: `turn ${t.index}: ${count(t.output_tokens)} tokens out` },
    ] : [
      { value: t.text_tokens, kind: "text", title: `turn ${t.index}: about ${count(t.text_tokens)} tokens of text` },
    ];
    return { label: "#" + t.index, segments };
  });
  const legend = h("ul", { class: "legend" },
    h("li", {}, h("span", { class: "swatch in" }), "tokens in (the whole prompt of the call)"),
    h("li", {}, h("span", { class: "swatch out" }), "tokens out"),
    h("li", {}, h("span", { class: "swatch text" }), "the turn's own text (estimate)"));
  return h("figure", { id: "turn-chart" }, bars(items, { caption: "Tokens per turn" }), legend);
}

let models = null; // configured models, asked once

// budget is the model chooser and the stacked bar of what that model
// would see of the thread.
export function budget(view, ui) {
  const out = h("div", { id: "budget" }, h("p", { class: "muted" }, "Loading the history…"));
  const choose = h("select", { id: "budget-model", "aria-label": "model" },
    h("option", { value: "" }, view.last_model ? `the thread's model (${view.last_model})` : "the default model"));
  choose.addEventListener("change", () => {
    ui.state.budgetModel = choose.value; // kept while the page polls
    draw(view, choose.value, out).catch(ui.fail);
  });
  const chosen = ui.state.budgetModel || "";
  loadModels().then((list) => {
    for (const m of list) choose.append(h("option", { value: m, selected: m === chosen }, m));
    choose.value = list.includes(chosen) ? chosen : "";
    return draw(view, choose.value, out);
  }).catch((e) => replace(out, h("p", { class: "muted" }, "No budget to show: " + e.message)));
  return h("div", {}, h("label", {}, "Token budget for ", choose), out);
}

async function loadModels() {
  if (!models) {
    const got = await api.get("/v1/models?configured_only=true");
    models = (got.models || []).map((m) => m.name);
  }
  return models;
}

function plural(n, word) {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

async function draw(view, model, out) {
  const q = model ? "?model=" + encodeURIComponent(model) : "";
  const got = await api.get(api.thread(view.thread.thread_id, "/history" + q));
  const sel = got.selection || {};
  const n = (k) => Number(sel[k] || 0);
  const ctxWindow = Number(got.context_window || 0);
  const historyFree = Math.max(0, n("history_budget") - n("tokens_used"));
  const filesFree = Math.max(0, n("file_budget") - n("file_tokens_used"));
  const rest = Math.max(0, ctxWindow - n("history_budget") - n("file_budget"));
  const parts = [
    { value: n("tokens_used"), kind: "history", label: "history used" },
    { value: historyFree, kind: "history-free", label: "history room left" },
    { value: n("file_tokens_used"), kind: "files", label: "files used" },
    { value: filesFree, kind: "files-free", label: "file room left" },
    { value: rest, kind: "rest", label: "the new request and the reply" },
  ];
  const turns = n("total_turns");
  const kept = turns - n("omitted_turns");
  const caption = `${got.model} (${count(ctxWindow)}-token window) would see ${kept} of ${turns} turns` +
    ` and ${plural((sel.files || []).length, "file")}` +
    (n("omitted_files") ? `, leaving out ${plural(n("omitted_files"), "file")}` : "") +
    (sel.tokenizer ? `; tokens counted with ${sel.tokenizer}` : "") + ".";
  replace(out, stack(parts, ctxWindow, { caption }));
}
