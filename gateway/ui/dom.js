// DOM building for the thread browser. Every piece of text reaches the page
// as a Text node or through textContent, never as markup: the page's CSP
// (Trusted Types) makes innerHTML and its kin throw anyway.

const SVG = "http://www.w3.org/2000/svg";

// h builds an element: attrs are attributes (on* keys become listeners,
// "class" the class name, "dataset" data-* attributes), children are
// nodes or text.
export function h(tag, attrs = {}, ...children) {
  return build(document.createElement(tag), attrs, children);
}

// s builds an SVG element the same way.
export function s(tag, attrs = {}, ...children) {
  return build(document.createElementNS(SVG, tag), attrs, children);
}

function build(el, attrs, children) {
  for (const [k, v] of Object.entries(attrs)) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else if (k === "class") el.setAttribute("class", v);
    else if (k === "dataset") Object.assign(el.dataset, v);
    else if (k === "href") el.setAttribute("href", safeHref(v));
    else el.setAttribute(k, v === true ? "" : String(v));
  }
  add(el, children);
  return el;
}

// add appends children: nodes as they are, anything else as text.
export function add(el, children) {
  for (const c of [children].flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

// replace empties an element and fills it with children.
export function replace(el, ...children) {
  el.replaceChildren();
  return add(el, children);
}

// safeHref lets through links within the page (#...) and absolute http
// and https URLs; anything else (javascript:, data:, ...) becomes "#".
export function safeHref(v) {
  const text = String(v);
  if (text.startsWith("#")) return text;
  try {
    const u = new URL(text);
    if (u.protocol === "http:" || u.protocol === "https:") return u.href;
  } catch {
    // not an absolute URL
  }
  return "#";
}
