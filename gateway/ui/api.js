// The gateway's JSON API as the page calls it: the bearer token from this
// tab's session storage goes in the Authorization header (never a cookie,
// so no other site's page can act with it), and changes send JSON.

const KEY = "zen.token";

export const token = {
  get: () => sessionStorage.getItem(KEY) || "",
  set: (v) => sessionStorage.setItem(KEY, v.trim()),
  clear: () => sessionStorage.removeItem(KEY),
};

// APIError is a refused or failed request, with the gateway's message.
export class APIError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

// call sends one request and returns the response, or throws APIError.
export async function call(path, { method = "GET", body, type = "application/json" } = {}) {
  const headers = {};
  const t = token.get();
  if (t) headers.Authorization = "Bearer " + t;
  if (body !== undefined) headers["Content-Type"] = type;
  let resp;
  try {
    resp = await fetch(path, { method, headers, body, credentials: "omit", cache: "no-store" });
  } catch (e) {
    throw new APIError(0, "zen's gateway did not answer (" + e.message + "): is zen still running?");
  }
  if (!resp.ok) {
    let msg = resp.status + " " + resp.statusText;
    try {
      const j = await resp.json();
      if (j && j.message) msg = j.message;
    } catch {
      // not JSON: keep the status line
    }
    throw new APIError(resp.status, msg);
  }
  return resp;
}

// get fetches JSON.
export async function get(path) {
  return (await call(path)).json();
}

// post sends a JSON body and returns the JSON answer.
export async function post(path, value) {
  return (await call(path, { method: "POST", body: JSON.stringify(value) })).json();
}

// thread is a path under /v1/threads/ for one thread.
export function thread(id, rest = "") {
  return "/v1/threads/" + encodeURIComponent(id) + rest;
}

// download saves what a GET answers as a file, through the browser.
export async function download(path, name) {
  const blob = await (await call(path)).blob();
  const url = URL.createObjectURL(blob);
  const a = document.createElement("a");
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
}
