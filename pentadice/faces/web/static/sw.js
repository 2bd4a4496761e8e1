/* pentadice's service worker: the app opens with no network after the first visit.
 *
 * - At install: the app's files (the shell) and the first rule set's tables are stored; the others' when first
 *   fetched. Caches are named by version ("pentadice-shell-VERSION"; `pentadice export-app` writes the hash of its
 *   files as VERSION); an old version's caches are removed when a new worker takes over.
 * - The API (/api/...): the network first; with no network, GET /api/rules and /api/messages from their last
 *   answer, anything else a 503 {"error": ...} marked x-pentadice-offline (offline.js then answers the page).
 *   A game's live stream (/api/games/ID/events) is left to the browser.
 * - The tables (app-tables/...): the description from the network first (then the stored copy), the values from
 *   the store (their address carries their SHA-256, so a new table is a new address).
 * - The page (a navigation): the network first, else the stored index.html, so that /games/ID opens offline.
 * - The other files: from the store at once, refreshed from the network behind (the next visit has them). */
"use strict";

const VERSION = "dev";
const SHELL_CACHE = "pentadice-shell-" + VERSION;
const TABLES_CACHE = "pentadice-tables-v1";
const API_CACHE = "pentadice-api-v1";
const SCOPE = self.registration.scope; // the app's folder, ending in "/"
const SHELL = [
  "",
  "index.html",
  "app.js",
  "style.css",
  "advisor.js",
  "offline.js",
  "favicon.svg",
  "manifest.webmanifest",
  "config.json",
];
const ICONS = ["icons/icon-192.png", "icons/icon-512.png", "icons/maskable-512.png"]; // stored if there
const EXPORTED_WORDS = ["messages/en.json", "messages/id.json"]; // the exported app's words (not on a server)
const KEPT_API = ["/api/rules", "/api/messages"];

async function sha256Hex(buffer) {
  const digest = await crypto.subtle.digest("SHA-256", buffer);
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

/** A values file checked against the SHA-256 its address names: the same answer, or a 502 if it differs. */
async function checked(res, sha) {
  if (!res.ok) return res;
  const buffer = await res.arrayBuffer();
  if ((await sha256Hex(buffer)) !== sha) {
    const body = JSON.stringify({ error: "the tables arrived damaged (their SHA-256 differs): try again" });
    return new Response(body, { status: 502, headers: { "content-type": "application/json" } });
  }
  return new Response(buffer, { status: res.status, headers: res.headers });
}

/** Put a values file in the cache, removing the same file of other SHA-256s (a table built again). */
async function putValues(cache, url, res) {
  const file = url.split("?")[0];
  for (const old of await cache.keys()) if (old.url.split("?")[0] === file && old.url !== url) await cache.delete(old);
  await cache.put(url, res);
}

async function storeTables(name) {
  const cache = await caches.open(TABLES_CACHE);
  const res = await fetch(SCOPE + "app-tables/" + name + ".json", { cache: "no-cache" });
  if (!res.ok) return false;
  const meta = await res.clone().json();
  await cache.put(SCOPE + "app-tables/" + name + ".json", res);
  const values = SCOPE + "app-tables/" + meta.values.file + "?sha256=" + meta.values.sha256;
  if (!(await cache.match(values))) {
    const got = await checked(await fetch(values), meta.values.sha256);
    if (!got.ok) return false;
    await putValues(cache, values, got);
  }
  return true;
}

/** The rule set whose tables are stored at install, so that a first game offline needs nothing more: the first
 * the app offers (an exported app's config.json lists them; a server answers /api/rules), or none. */
async function firstRuleSet() {
  try {
    const config = await (await fetch(SCOPE + "config.json", { cache: "no-cache" })).json();
    if (Array.isArray(config.rules) && config.rules.length) return config.rules[0].name;
    const served = await (await fetch("/api/rules", { cache: "no-cache" })).json();
    return served.rules[0].name;
  } catch (e) {
    return null;
  }
}

self.addEventListener("install", (event) => {
  event.waitUntil(
    (async () => {
      const shell = await caches.open(SHELL_CACHE);
      await shell.addAll(SHELL.map((path) => new Request(SCOPE + path, { cache: "reload" })));
      const first = await firstRuleSet();
      if (first) await storeTables(first).catch(() => false); // tables not exported: stored when a game asks
      for (const path of [...ICONS, ...EXPORTED_WORDS]) {
        const res = await fetch(SCOPE + path).catch(() => null);
        if (res && res.ok) await shell.put(SCOPE + path, res);
      }
      await self.skipWaiting();
    })()
  );
});

self.addEventListener("activate", (event) => {
  event.waitUntil(
    (async () => {
      const keep = [SHELL_CACHE, TABLES_CACHE, API_CACHE];
      for (const name of await caches.keys()) if (name.startsWith("pentadice-") && !keep.includes(name)) await caches.delete(name);
      await self.clients.claim();
    })()
  );
});

function offlineAnswer() {
  const body = JSON.stringify({ error: "The server cannot be reached" });
  return new Response(body, { status: 503, headers: { "content-type": "application/json", "x-pentadice-offline": "1" } });
}

async function api(request, url) {
  const kept = request.method === "GET" && KEPT_API.includes(url.pathname);
  try {
    const res = await fetch(request);
    if (kept && res.ok) (await caches.open(API_CACHE)).put(request, res.clone());
    return res;
  } catch (e) {
    const stored = kept ? await (await caches.open(API_CACHE)).match(request) : null;
    return stored || offlineAnswer();
  }
}

async function tables(request, url) {
  const cache = await caches.open(TABLES_CACHE);
  if (url.pathname.endsWith(".json")) {
    try {
      const res = await fetch(request, { cache: "no-cache" });
      if (res.ok) await cache.put(request, res.clone());
      return res;
    } catch (e) {
      return (await cache.match(request)) || offlineAnswer();
    }
  }
  const stored = await cache.match(request);
  if (stored) return stored;
  const sha = url.searchParams.get("sha256");
  if (!sha) return fetch(request);
  const res = await checked(await fetch(request), sha);
  if (res.ok) await putValues(cache, request.url, res.clone());
  return res;
}

async function page(request) {
  const shell = await caches.open(SHELL_CACHE);
  try {
    const res = await fetch(request);
    if (res.status !== 404) return res;
    return (await shell.match(SCOPE + "index.html")) || res; // a static host: /games/ID is the page's own
  } catch (e) {
    return (await shell.match(SCOPE + "index.html")) || (await shell.match(SCOPE)) || offlineAnswer();
  }
}

async function file(request, event) {
  const shell = await caches.open(SHELL_CACHE);
  const stored = await shell.match(request, { ignoreSearch: true });
  const fresh = fetch(request).then(
    (res) => {
      if (res.ok && res.type === "basic") shell.put(request, res.clone());
      return res;
    },
    () => null
  );
  if (stored) {
    event.waitUntil(fresh);
    return stored;
  }
  return (await fresh) || offlineAnswer();
}

self.addEventListener("fetch", (event) => {
  const request = event.request;
  const url = new URL(request.url);
  if (url.origin !== self.location.origin) return;
  // A shared game's live stream goes straight to the network: an EventSource reconnects by itself after a
  // network error, but stops for good on an answer that is not a stream (the worker's 503 would be one).
  if (/^\/api\/games\/[^/]+\/events$/.test(url.pathname)) return;
  if (url.pathname.startsWith("/api/")) event.respondWith(api(request, url));
  else if (request.method !== "GET") return;
  else if (url.href.startsWith(SCOPE + "app-tables/")) event.respondWith(tables(request, url));
  else if (request.mode === "navigate") event.respondWith(page(request));
  else if (url.href.startsWith(SCOPE)) event.respondWith(file(request, event));
});

