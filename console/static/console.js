// weft console: live updates and decisions. No inline script anywhere: the
// page's Content-Security-Policy allows only this file. Text from the
// server arrives escaped in HTML fragments, or is set with textContent.
"use strict";

(function () {
  const csrf = document.querySelector('meta[name="csrf-token"]').content;

  // parse turns a server-rendered fragment into nodes (not attached, so
  // nothing in it runs).
  function parse(html) {
    const t = document.createElement("template");
    t.innerHTML = html;
    return t.content;
  }

  async function fetchText(url) {
    const r = await fetch(url, { credentials: "same-origin", headers: { Accept: "text/html" } });
    if (r.status === 401) {
      window.location.assign(document.querySelector('meta[name="console-prefix"]').content + "/signin");
      return null;
    }
    if (!r.ok) throw new Error(url + ": " + r.status);
    return r.text();
  }

  // Decisions: each form posts with the CSRF token; the answer says ok,
  // or what to show next to the item.
  document.addEventListener("submit", async (e) => {
    const form = e.target;
    if (!form.classList.contains("decide")) return;
    e.preventDefault();
    const item = form.closest(".item");
    const out = item ? item.querySelector(".result") : null;
    for (const ta of form.querySelectorAll("textarea.json")) {
      if (ta.value.trim() === "") continue;
      try { JSON.parse(ta.value); } catch (err) {
        if (out) { out.textContent = ta.name + " is not JSON: " + err.message; out.className = "result error"; }
        return;
      }
    }
    const body = new URLSearchParams(new FormData(form));
    let answer;
    try {
      const r = await fetch(form.action, {
        method: "POST", credentials: "same-origin", body: body,
        headers: { "X-CSRF-Token": csrf, Accept: "application/json" },
      });
      answer = await r.json();
    } catch (err) {
      answer = { message: String(err) };
    }
    if (!out) return;
    if (answer.ok) {
      out.textContent = "sent";
      out.className = "result ok";
      item.classList.add("decided");
    } else if (answer.staged) {
      out.textContent = answer.staged;
      out.className = "result staged";
    } else if (answer.decided) {
      out.textContent = answer.decided;
      out.className = "result decided-elsewhere";
      item.classList.add("decided");
    } else {
      out.textContent = answer.message || "refused";
      out.className = "result error";
    }
  });

  // merge replaces the children of list with those of fresh, keeping the
  // nodes whose data-key is unchanged (a form being filled in stays). An
  // item that left the queue stays, dimmed, saying who decided it: this
  // browser ("sent"), or someone else (asked from the log).
  function merge(list, fresh) {
    const keep = new Map();
    for (const el of list.querySelectorAll(":scope > [data-key]")) keep.set(el.dataset.key, el);
    const next = [];
    for (const el of Array.from(fresh.childNodes)) {
      if (el.nodeType !== 1) continue;
      const key = el.dataset ? el.dataset.key : undefined;
      const old = key ? keep.get(key) : null;
      if (key) keep.delete(key);
      next.push(old && !old.classList.contains("decided") ? old : el);
    }
    for (const [key, old] of keep) {
      if (!old.classList.contains("decided")) {
        old.classList.add("decided");
        whoDecided(old, key);
      }
      next.push(old);
    }
    place(list, next);
  }

  // place makes nodes the children of list, in order, moving only the
  // nodes not already in place (a node kept in place keeps its focus).
  function place(list, nodes) {
    nodes.forEach((n, i) => {
      const at = list.children[i];
      if (at !== n) list.insertBefore(n, at || null);
    });
    while (list.children.length > nodes.length) list.lastElementChild.remove();
    for (const n of Array.from(list.childNodes)) if (n.nodeType !== 1) n.remove();
  }

  async function whoDecided(item, key) {
    const out = item.querySelector(".result");
    if (!out || out.textContent !== "") return;
    const [session, call] = key.split("/");
    const prefix = document.querySelector('meta[name="console-prefix"]').content;
    try {
      const r = await fetch(prefix + "/sessions/" + encodeURIComponent(session) + "/pending/" + encodeURIComponent(call) + "/decision",
        { credentials: "same-origin", headers: { Accept: "application/json" } });
      const d = await r.json();
      if (out.textContent === "") {
        out.textContent = d.decided || "no longer pending";
        out.className = "result decided-elsewhere";
      }
    } catch (err) { /* the item stays dimmed */ }
  }

  // live opens the event stream of el and calls refresh (debounced) on
  // each stored event; onDelta gets the model deltas.
  function live(el, refresh, onDelta) {
    let timer = null;
    const kick = () => { clearTimeout(timer); timer = setTimeout(refresh, 60); };
    const es = new EventSource(el.dataset.live);
    es.onmessage = kick;
    if (onDelta) es.addEventListener("model.delta", onDelta);
    es.onopen = () => { document.body.dataset.live = "open"; };
  }

  const queue = document.getElementById("queue");
  if (queue) {
    live(queue, async () => {
      const html = await fetchText(queue.dataset.items);
      if (html !== null) merge(queue, parse(html));
    });
  }

  const session = document.getElementById("session");
  if (session) {
    const deltas = document.getElementById("deltas");
    const box = document.getElementById("live-output");
    live(session, async () => {
      const html = await fetchText(session.dataset.fragment);
      if (html === null) return;
      const fresh = parse(html);
      const oldPending = session.querySelector(".pending");
      const newPending = fresh.querySelector(".pending");
      if (oldPending && newPending) {
        merge(oldPending, newPending);
        newPending.replaceWith(oldPending);
      }
      session.replaceChildren(fresh);
    }, (e) => {
      // The live copy of a model.delta: its data holds the text.
      let d;
      try { d = JSON.parse(e.data); } catch (err) { return; }
      const text = d && d.data && d.data.text;
      if (!text) return;
      box.hidden = false;
      deltas.textContent += text;
    });
    const toggle = document.getElementById("show-surfaces");
    toggle.addEventListener("change", () => { document.body.classList.toggle("surfaces", toggle.checked); });
  }
})();
