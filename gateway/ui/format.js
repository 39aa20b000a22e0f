// How numbers, sizes and times read on the page.

export function count(n) {
  return Number(n || 0).toLocaleString("en-US");
}

// dollars shows a cost: four places below a cent, and costs too small
// for four places as less than the smallest.
export function dollars(v) {
  if (!v) return "–";
  if (v < 0.0001) return "<$0.0001";
  return v < 0.01 ? "$" + v.toFixed(4) : "$" + v.toFixed(2);
}

// bytes shows a size; "–" when there is none (a file reference without
// its size).
export function bytes(n) {
  if (typeof n !== "number" || !Number.isFinite(n)) return "–";
  if (n < 1024) return n + " B";
  if (n < 1024 * 1024) return (n / 1024).toFixed(1) + " KB";
  return (n / 1024 / 1024).toFixed(1) + " MB";
}

// ago says how long before now t was ("5 min ago"); until how long after
// ("in 2 h 55 min").
export function ago(t) {
  return span(Date.now() - Date.parse(t)) + " ago";
}

export function until(t) {
  const ms = Date.parse(t) - Date.now();
  return ms <= 0 ? "expired" : "in " + span(ms);
}

function span(ms) {
  const min = Math.floor(Math.max(0, ms) / 60000);
  if (min < 1) return "< 1 min";
  if (min < 60) return min + " min";
  const hours = Math.floor(min / 60);
  if (hours < 48) return hours + " h " + (min % 60) + " min";
  return Math.floor(hours / 24) + " days";
}

export function when(t) {
  const d = new Date(t);
  return isNaN(d) ? "" : d.toLocaleString();
}

export function shortID(id) {
  return String(id).slice(0, 8);
}
