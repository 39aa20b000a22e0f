// A small Markdown renderer for turn text, safe by construction: it builds
// DOM nodes and puts all text in Text nodes, so nothing in a turn is ever
// read as markup. It knows code fences, headings, lists, block quotes,
// rules, inline code, emphasis and links to http and https addresses;
// anything else shows as the text it is.
//
// Turn text comes from models and imports, so it may be built to be slow:
// every pattern here reads one line from its start, and the inline ones
// look a bounded distance ahead, so that rendering takes time in
// proportion to the text; block quotes nest at most MAX_QUOTE_DEPTH deep.

import { h } from "./dom.js";

const FENCE = /^\s*(`{3,}|~{3,})(.*)$/; // and an info string of LANGUAGE
const LANGUAGE = /^[\w+.#-]*$/;
const HEADING = /^(#{1,6})\s+(.*)$/;
const BULLET = /^\s*[-*+]\s+(.*)$/;
const NUMBERED = /^\s*(\d{1,9})[.)]\s+(.*)$/;
const QUOTE = /^\s*>\s?(.*)$/;
const RULE = /^\s*([-*_])(\s*\1){2,}\s*$/;

// MAX_QUOTE_DEPTH bounds nested block quotes; deeper lines show as text.
const MAX_QUOTE_DEPTH = 8;

// render turns Markdown text into a fragment of DOM nodes; depth is how
// many block quotes it sits in.
export function render(text, depth = 0) {
  const out = document.createDocumentFragment();
  const lines = String(text).replace(/\r\n?/g, "\n").split("\n");
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    const fence = codeFence(line);
    if (fence) {
      const body = [];
      const close = new RegExp("^\\s*" + fence[1][0] + "{" + fence[1].length + ",}\\s*$");
      for (i++; i < lines.length && !close.test(lines[i]); i++) body.push(lines[i]);
      i++; // the closing fence, or the end
      const code = h("code", fence[2] ? { class: "language-" + fence[2], "data-lang": fence[2] } : {});
      code.textContent = body.join("\n");
      out.append(h("pre", {}, code));
      continue;
    }
    const heading = line.match(HEADING);
    if (heading) {
      // Turn headings sit below the page's own (h1, h2).
      out.append(h("h" + Math.min(6, heading[1].length + 2), { class: "md-heading" },
        inline(withoutClosingHashes(heading[2]))));
      i++;
      continue;
    }
    if (RULE.test(line)) {
      out.append(h("hr"));
      i++;
      continue;
    }
    if (BULLET.test(line) || NUMBERED.test(line)) {
      const numbered = !BULLET.test(line);
      const pattern = numbered ? NUMBERED : BULLET;
      const list = h(numbered ? "ol" : "ul");
      if (numbered) list.setAttribute("start", String(Number(line.match(NUMBERED)[1])));
      for (; i < lines.length && pattern.test(lines[i]); i++) {
        const m = lines[i].match(pattern);
        list.append(h("li", {}, inline(numbered ? m[2] : m[1])));
      }
      out.append(list);
      continue;
    }
    if (QUOTE.test(line)) {
      const quoted = [];
      for (; i < lines.length && QUOTE.test(lines[i]); i++) quoted.push(lines[i].match(QUOTE)[1]);
      const inner = quoted.join("\n");
      out.append(h("blockquote", {}, depth + 1 < MAX_QUOTE_DEPTH ? render(inner, depth + 1) : h("p", {}, inner)));
      continue;
    }
    if (line.trim() === "") {
      i++;
      continue;
    }
    const para = [];
    for (; i < lines.length && lines[i].trim() !== "" && !startsBlock(lines[i]); i++) para.push(lines[i]);
    out.append(h("p", {}, inline(para.join("\n"))));
  }
  return out;
}

// codeFence reads a fence line: [the fence, its language], or null. The
// info string is trimmed apart from the pattern, whose two runs of spaces
// around it would otherwise try every split of a long run between them.
function codeFence(line) {
  const m = line.match(FENCE);
  if (!m) return null;
  const info = m[2].trim();
  return LANGUAGE.test(info) ? [m[0], m[1], info] : null;
}

function startsBlock(line) {
  return codeFence(line) !== null || HEADING.test(line) || BULLET.test(line) || NUMBERED.test(line) ||
    QUOTE.test(line) || RULE.test(line);
}

// withoutClosingHashes drops a heading's closing run of '#' ("## Title ##"),
// read from the end without a pattern that could backtrack.
function withoutClosingHashes(text) {
  const t = text.trimEnd();
  let i = t.length;
  while (i > 0 && t[i - 1] === "#") i--;
  if (i === t.length || (i > 0 && !/\s/.test(t[i - 1]))) return t;
  return t.slice(0, i).trimEnd();
}

// INLINE finds, left to right within one line: code spans, links, strong
// and emphasis. Each looks at most a bounded distance ahead (SPAN
// characters, a link's target LINK), so that a line of openers that close
// nothing ("[a](" over and over, runs of '*' or '`') takes time in
// proportion to its length.
const SPAN = 1000, LINK = 2048;
const INLINE = new RegExp([
  `(\`{1,16})([^\`]|[^\`].{0,${SPAN}}?[^\`])\\1(?!\`)`, // 1, 2: code
  `\\[([^\\]]{1,${SPAN}})\\]\\(([^)\\s]{1,${LINK}})\\)`, // 3, 4: link
  `\\*\\*(?=\\S)(.{0,${SPAN}}?\\S)\\*\\*`, // 5: strong
  `__(?=\\S)(.{0,${SPAN}}?\\S)__`, // 6: strong
  `\\*(?=[^\\s*])([^*]{0,${SPAN}}?[^\\s*])\\*`, // 7: emphasis
  `(?<![\\w])_(?=[^\\s_])([^_]{0,${SPAN}}?[^\\s_])_(?![\\w])`, // 8: emphasis
].join("|"), "g");

// inline turns one block's text into nodes, line by line: nothing inline
// spans two lines.
export function inline(text) {
  return String(text).split("\n").flatMap((line, i) => i ? ["\n", ...inlineLine(line)] : inlineLine(line));
}

function inlineLine(text) {
  const nodes = [];
  let last = 0;
  for (const m of text.matchAll(INLINE)) {
    if (m.index > last) nodes.push(text.slice(last, m.index));
    last = m.index + m[0].length;
    if (m[2] !== undefined) {
      const code = h("code");
      code.textContent = m[2];
      nodes.push(code);
    } else if (m[3] !== undefined) {
      nodes.push(link(m[3], m[4], m[0]));
    } else if (m[5] !== undefined || m[6] !== undefined) {
      nodes.push(h("strong", {}, inline(m[5] ?? m[6])));
    } else {
      nodes.push(h("em", {}, inline(m[7] ?? m[8])));
    }
  }
  if (last < text.length) nodes.push(text.slice(last));
  return nodes;
}

// link is an anchor for http and https addresses, and the text as written
// for any other (javascript:, data:, relative paths).
function link(label, target, whole) {
  let url;
  try {
    url = new URL(target);
  } catch {
    return whole;
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return whole;
  return h("a", { href: url.href, rel: "noopener noreferrer nofollow", target: "_blank" }, inline(label));
}
