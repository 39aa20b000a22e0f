// Charts drawn as SVG elements built node by node: tokens per turn as
// stacked bars, and a token budget as one stacked horizontal bar.

import { h, s } from "./dom.js";
import { count } from "./format.js";

// bars draws one stacked bar per item: items are {label, title, segments:
// [{value, kind, title}]}; kind names the CSS class that colours it.
export function bars(items, { caption }) {
  const width = 1100, height = 180, left = 56, bottom = 24, top = 10;
  const plotH = height - top - bottom;
  const max = Math.max(1, ...items.map((it) => it.segments.reduce((a, g) => a + g.value, 0)));
  const step = (width - left - 8) / Math.max(1, items.length);
  const barW = Math.max(2, Math.min(48, step * 0.7));
  const svg = s("svg", {
    class: "chart bars", viewBox: `0 0 ${width} ${height}`, role: "img", "aria-label": caption,
  });
  svg.append(s("title", {}, caption));
  for (const frac of [0, 0.5, 1]) {
    const y = top + plotH * (1 - frac);
    svg.append(s("line", { class: "grid", x1: left, x2: width - 4, y1: y, y2: y }));
    svg.append(s("text", { class: "axis", x: left - 6, y: y + 4, "text-anchor": "end" },
      count(Math.round(max * frac))));
  }
  items.forEach((it, i) => {
    const x = left + step * i + (step - barW) / 2;
    let y = top + plotH;
    const g = s("g", { class: "bar", "data-label": it.label });
    for (const seg of it.segments) {
      if (seg.value <= 0) continue;
      const hgt = (seg.value / max) * plotH;
      y -= hgt;
      g.append(s("rect", { class: "seg " + seg.kind, x, y, width: barW, height: Math.max(1, hgt) },
        s("title", {}, seg.title)));
    }
    if (items.length <= 40 || i % Math.ceil(items.length / 40) === 0) {
      g.append(s("text", { class: "axis", x: x + barW / 2, y: height - 10, "text-anchor": "middle" }, it.label));
    }
    svg.append(g);
  });
  return svg;
}

// stack draws parts of a whole (total) as one horizontal bar with a
// legend: parts are {value, kind, label}.
export function stack(parts, total, { caption }) {
  const width = 720, height = 36;
  const svg = s("svg", {
    class: "chart stack", viewBox: `0 0 ${width} ${height}`, preserveAspectRatio: "none", role: "img",
    "aria-label": caption,
  });
  svg.append(s("title", {}, caption));
  svg.append(s("rect", { class: "seg whole", x: 0, y: 4, width, height: height - 8 }));
  let x = 0;
  for (const p of parts) {
    if (p.value <= 0 || total <= 0) continue;
    const w = Math.min(width - x, (p.value / total) * width);
    svg.append(s("rect", { class: "seg " + p.kind, x, y: 4, width: Math.max(1, w), height: height - 8 },
      s("title", {}, `${p.label}: ${count(p.value)} tokens`)));
    x += w;
  }
  const legend = h("ul", { class: "legend" },
    parts.map((p) => h("li", {}, h("span", { class: "swatch " + p.kind }), `${p.label}: ${count(p.value)}`)));
  return h("figure", { class: "budget" }, svg, legend, h("figcaption", {}, caption));
}
