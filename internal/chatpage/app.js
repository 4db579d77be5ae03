// tokenpulse's chat page: a conversation (each question above its answer,
// earlier turns kept as text in #log) with an optional API key (kept in
// sessionStorage, sent as Authorization: Bearer). Ask, watch the answer
// stream, ask again while it
// streams. It is also the instrument of `tokenpulse bench --browser`: every
// answer keeps, in the page's clock (performance.now(), ms), the click
// that started it (event.timeStamp, t0), each content event's arrival
// (the fetch reader's chunk), its insertion into the DOM and its paint
// (Element Timing's renderTime of the token's span; where the browser
// reports none, the end of the first frame after the insertion).
//
// A reasoning model's thinking (delta.reasoning_content, as llama-server
// and DeepSeek send it, or delta.reasoning, as vLLM and OpenRouter do)
// goes apart from the answer, into a collapsed <details> element: its
// events are recorded (arrival, and reasoning: "only" for an event that
// carried thinking and no answer text, "with-answer" for one with both)
// but its text is not painted, so the paint figures are the answer's.
//
// Query parameters: render=per-token|frame|debounce16 (the render
// strategy), max_tokens=N, model=NAME, busy=MS (a test knob: busy-wait MS
// after each DOM insertion, a stand-in for a costly relayout).
//
// Served by bench --browser's relay, the page finds the relay's per-run
// secret in its URL's fragment (#relay=SECRET), which the relay never
// serves, and sends it in X-Tokenpulse-Relay with every request: the
// relay relays nothing without it. The relay stops an answer past plain
// bench's limits with a last event {"tokenpulse_relay": {"error":
// "overflow", "message": ...}}, which fails the answer with that kind.

const params = new URLSearchParams(location.search);
const relaySecret = new URLSearchParams(location.hash.slice(1)).get("relay") || "";
if (relaySecret) history.replaceState(null, "", location.pathname + location.search);
const relayHeaders = relaySecret ? { "X-Tokenpulse-Relay": relaySecret } : {};
const $ = (id) => document.getElementById(id);
const answer = $("answer");
const promptBox = $("prompt");
const send = $("send");
const renderSel = $("render");
const statusLine = $("status");
const conversation = $("conversation");
const log = $("log");
const turn = $("turn");
const question = $("question");
const notice = $("notice");
const keyBox = $("apikey");
const thinking = $("thinking");
const thought = $("thought");

// The API key a person typed, kept for this tab only (sessionStorage) and
// sent as "Authorization: Bearer KEY", so that serve --api-key-env works
// from the page. Never in the URL, never in localStorage.
const keyName = "tokenpulse.apiKey";
try { keyBox.value = sessionStorage.getItem(keyName) || ""; } catch { /* storage off */ }
keyBox.addEventListener("input", () => {
  try { sessionStorage.setItem(keyName, keyBox.value); } catch { /* storage off */ }
});
function authHeaders() {
  const k = keyBox.value.trim();
  return k ? { Authorization: "Bearer " + k } : {};
}

// say shows a message for a person (an error put in words), or hides it.
function say(msg) {
  notice.textContent = msg || "";
  notice.hidden = !msg;
}

// humanError turns a failed answer's status and body into what a person
// can act on; the record keeps the raw text for the driver.
function humanError(status, body) {
  if (status === 401 || status === 403) {
    return keyBox.value.trim()
      ? "The server refused this API key (HTTP " + status + "). Check the key in the API key field."
      : "The server needs an API key (HTTP " + status + "). Enter it in the API key field.";
  }
  let msg = "";
  try { msg = (JSON.parse(body).error || {}).message || ""; } catch { /* not JSON */ }
  return "The server answered HTTP " + status + (msg ? ": " + msg : "") + ".";
}

// archive moves the finished turn (question and answer) into the log as
// plain text, so that the history stays while #answer starts empty.
function archive() {
  if (turn.hidden) return;
  const q = document.createElement("div");
  q.className = "question";
  q.textContent = question.textContent;
  const a = document.createElement("div");
  a.className = answer.className;
  a.textContent = answer.textContent;
  if (!a.textContent && !notice.hidden) {
    a.className = "answer failed";
    a.textContent = notice.textContent;
  }
  log.append(q);
  if (!thinking.hidden) {
    const d = thinking.cloneNode(true);
    d.removeAttribute("id");
    d.open = false;
    d.querySelector(".thought").removeAttribute("id");
    log.append(d);
  }
  log.append(a);
}

const config = {
  render: params.get("render") || "frame",
  busyMs: Number(params.get("busy") || 0),
  maxTokens: Number(params.get("max_tokens") || 0),
  model: params.get("model") || "",
};
renderSel.value = config.render;
renderSel.addEventListener("change", () => { config.render = renderSel.value; });

// Long animation frames and long tasks, for the whole page's life; the
// driver takes those that overlap each answer.
const longFrames = [];
const longTasks = [];
function observe(type, fn) {
  try {
    new PerformanceObserver((list) => list.getEntries().forEach(fn)).observe({ type, buffered: true });
    return true;
  } catch {
    return false;
  }
}
const hasLoAF = observe("long-animation-frame", (e) =>
  longFrames.push({ start: e.startTime, duration: e.duration, blocking: e.blockingDuration || 0 }));
observe("longtask", (e) => longTasks.push({ start: e.startTime, duration: e.duration }));

// spans maps an Element Timing identifier to its answer and token index.
const spans = new Map();
const hasElementTiming = observe("element", (e) => {
  const s = spans.get(e.identifier);
  if (!s) return;
  spans.delete(e.identifier);
  const t = e.renderTime || e.loadTime;
  if (t > 0) {
    s.rec.paint[s.i] = t;
    s.rec.paintSource[s.i] = "element";
  }
});

let current = null; // the answer now streaming, or null
let next = null; // what the driver asked the next click to send
const records = new Map(); // id -> record
const waiters = new Map(); // id -> resolve functions
let pending = []; // tokens held by the frame or debounce strategy
let rafQueued = false;
let debounceTimer = 0;

function newID() {
  return "tp-" + Math.random().toString(36).slice(2, 10) + Date.now().toString(36);
}

function busy(ms) {
  const end = performance.now() + ms;
  while (performance.now() < end) { /* a costly relayout */ }
}

// afterFrame calls fn with the time just after the next frame's
// rendering work (a message posted from requestAnimationFrame runs after
// that frame's style, layout and paint).
function afterFrame(fn) {
  requestAnimationFrame(() => {
    const ch = new MessageChannel();
    ch.port1.onmessage = () => fn(performance.now());
    ch.port2.postMessage(0);
  });
}

// shown is a token's text as the page shows it: the answer's leading
// spaces and those that open a line are dropped (tokenizers put a space
// before a word, which would indent the answer and each line). The record
// keeps the text as it came.
let lastShown = ""; // the last character the answer shows, "" while empty
function shown(text) {
  if (lastShown === "") text = text.replace(/^\s+/, "");
  else if (lastShown === "\n") text = text.replace(/^ +/, "");
  if (text) lastShown = text[text.length - 1];
  return text;
}

// word is the answer's last word (span.word), while a token may still
// continue it; null after whitespace or when the answer starts.
let word = null;

// place puts one token's shown text into the answer as text flows: each
// run of non-whitespace goes into a word (an inline-block span.word, so
// that a line breaks only between words) as an inline-block span marked
// for Element Timing (Chromium reports a text paint only for a block or
// inline-block container), and whitespace, newlines included, goes
// between the words as text (the answer is pre-wrap). A token that
// continues a word ("ca", "ke") joins its span.word. It returns the
// token's first node, or null when it shows nothing.
function place(it, text) {
  const ident = it.rec.id + "/" + it.i;
  let first = null;
  let marked = false;
  for (const part of text.match(/\s+|\S+/g) || []) {
    let node;
    if (/^\s/.test(part)) {
      node = document.createTextNode(part);
      answer.append(node);
      word = null;
    } else {
      if (!word) {
        word = document.createElement("span");
        word.className = "word";
        answer.append(word);
      }
      node = document.createElement("span");
      node.textContent = part;
      node.setAttribute("elementtiming", ident);
      word.append(node);
      marked = true;
    }
    first = first || node;
  }
  if (marked) spans.set(ident, it);
  return first;
}

// insert puts tokens (each {rec, i, text}) into the answer in one task,
// then stamps their insertion.
function insert(items) {
  const live = items.filter((it) => it.rec === current && it.rec.abortedAt < 0);
  for (const it of items) if (!live.includes(it)) it.rec.dropped++;
  if (live.length === 0) return;
  const made = live.map((it) => place(it, shown(it.text)));
  conversation.scrollTop = conversation.scrollHeight;
  const t = performance.now();
  for (const it of live) it.rec.insert[it.i] = t;
  if (config.busyMs > 0) busy(config.busyMs);
  afterFrame((ft) => {
    live.forEach((it, k) => {
      if ((!made[k] || made[k].isConnected) && it.rec.frame[it.i] < 0) it.rec.frame[it.i] = ft;
    });
  });
}

function flush() {
  rafQueued = false;
  debounceTimer = 0;
  const items = pending;
  pending = [];
  insert(items);
}

// render hands a token to the strategy.
function render(it) {
  switch (it.rec.render) {
    case "per-token":
      insert([it]);
      break;
    case "debounce16":
      pending.push(it);
      clearTimeout(debounceTimer);
      debounceTimer = setTimeout(flush, 16);
      break;
    default: // frame
      pending.push(it);
      if (!rafQueued) {
        rafQueued = true;
        requestAnimationFrame(flush);
      }
  }
}

function newRecord(id, t0, trusted) {
  return {
    id, t0, trusted, render: config.render, prompt: "",
    fetchAt: -1, headersAt: -1, firstByteAt: -1, endAt: -1, abortedAt: -1,
    status: 0, error: "", errorKind: "", finish: "", chunkID: "", foreign: 0, dropped: 0,
    usage: null, timings: null,
    arrival: [], serverNS: [], tokens: [], text: [], insert: [], paint: [], paintSource: [], frame: [], reasoning: [],
    settled: false,
  };
}

// stop aborts the answer now streaming: its fetch (AbortController) and
// its generation (/v1/abort).
function stop(rec, at) {
  if (!rec || rec.endAt >= 0 || rec.abortedAt >= 0) return;
  rec.abortedAt = at;
  rec.controller.abort();
  fetch("/v1/abort?request_id=" + encodeURIComponent(rec.id), { method: "POST", headers: { ...authHeaders(), ...relayHeaders } }).catch(() => {});
}

// pastTurns is the conversation a person has had on the page: each
// finished question and its answer's text (not its thinking), sent before
// the next question so that the model answers in context. A driver's
// request (tokenpulse.prepare) sends what it prepared alone, so that a
// measured prompt is the suite's, and leaves pastTurns as they are.
const pastTurns = [];
const maxHistory = 40; // messages: the last 20 turns

function answerText(rec) {
  return rec.text.filter((_, i) => rec.reasoning[i] !== "only").join("");
}

async function ask(t0, trusted) {
  const driven = next !== null;
  const opts = next || {};
  next = null;
  const id = opts.id || newID();
  if (current) stop(current, t0);
  pending = [];
  archive();
  answer.textContent = "";
  thought.textContent = "";
  thinking.hidden = true;
  thinking.open = false;
  word = null;
  lastShown = "";
  answer.className = "answer";
  say("");
  const rec = newRecord(id, t0, trusted);
  if (opts.render) rec.render = opts.render;
  rec.prompt = promptBox.value;
  if (!driven) promptBox.value = ""; // a person's question moves into the conversation
  question.textContent = rec.prompt;
  turn.hidden = false;
  conversation.scrollTop = conversation.scrollHeight;
  rec.controller = new AbortController();
  records.set(id, rec);
  current = rec;
  statusLine.textContent = "streaming";
  const messages = [];
  if (opts.system) messages.push({ role: "system", content: opts.system });
  if (!driven) messages.push(...pastTurns.slice(-maxHistory));
  messages.push({ role: "user", content: rec.prompt });
  const body = { messages, stream: true, stream_options: { include_usage: true } };
  const model = opts.model || config.model;
  if (model) body.model = model;
  const maxTokens = opts.maxTokens || config.maxTokens;
  if (maxTokens > 0) body.max_tokens = maxTokens;
  try {
    rec.fetchAt = performance.now();
    const resp = await fetch("/v1/chat/completions", {
      method: "POST",
      headers: { "Content-Type": "application/json", "X-Request-ID": id, ...authHeaders(), ...relayHeaders },
      body: JSON.stringify(body),
      signal: rec.controller.signal,
    });
    rec.headersAt = performance.now();
    rec.status = resp.status;
    if (!resp.ok) {
      const body = await resp.text();
      rec.error = "HTTP " + resp.status + ": " + body.slice(0, 300);
      if (current === rec) {
        answer.className = "answer failed";
        say(humanError(resp.status, body));
      }
    } else {
      await read(rec, resp.body.getReader());
    }
  } catch (err) {
    if (rec.abortedAt < 0) rec.error = String(err);
  }
  rec.endAt = performance.now();
  if (!driven && !rec.error && rec.abortedAt < 0) {
    pastTurns.push({ role: "user", content: rec.prompt }, { role: "assistant", content: answerText(rec) });
  }
  // The status line says "done" once the answer's last tokens are on the
  // page: the frame and debounce strategies may still hold some.
  whenShown(rec, () => {
    if (current !== rec) return;
    statusLine.textContent = rec.error ? (rec.status >= 400 ? "error: HTTP " + rec.status : "error: " + rec.error) : "done";
    // An answer the server cut at the token limit says so.
    if (!rec.error && rec.finish === "length") say("The answer was cut at the token limit (max_tokens).");
  });
  settle(rec);
}

// whenShown calls fn once no token of rec waits in the render strategy.
function whenShown(rec, fn) {
  if (pending.some((it) => it.rec === rec)) setTimeout(() => whenShown(rec, fn), 4);
  else fn();
}

// read consumes the SSE stream: each content event is a token, timed at
// the arrival of the chunk that completed it.
async function read(rec, reader) {
  const dec = new TextDecoder();
  let buf = "";
  for (;;) {
    const { value, done } = await reader.read();
    const at = performance.now();
    if (done) break;
    if (rec.firstByteAt < 0) rec.firstByteAt = at;
    buf += dec.decode(value, { stream: true });
    let nl;
    while ((nl = buf.indexOf("\n")) >= 0) {
      const line = buf.slice(0, nl).replace(/\r$/, "");
      buf = buf.slice(nl + 1);
      if (!line.startsWith("data:")) continue;
      const data = line.slice(5).trim();
      if (data === "[DONE]") return;
      let chunk;
      try { chunk = JSON.parse(data); } catch { continue; }
      const relay = chunk && chunk.tokenpulse_relay;
      if (relay) {
        // The relay stopped the answer at a limit.
        rec.error = String(relay.message || relay.error);
        rec.errorKind = String(relay.error || "");
        return;
      }
      event(rec, chunk, at);
    }
  }
}

function event(rec, chunk, at) {
  if (chunk.id) {
    if (!rec.chunkID) rec.chunkID = chunk.id;
    if (chunk.id !== rec.chunkID) { rec.foreign++; return; }
  }
  if (chunk.usage) rec.usage = chunk.usage;
  const ext = chunk.tokenpulse;
  if (ext && ext.timings) rec.timings = ext.timings;
  const ch = (chunk.choices || [])[0];
  if (!ch) return;
  if (ch.finish_reason) rec.finish = ch.finish_reason;
  const d = ch.delta || {};
  const text = d.content || ch.text || "";
  const thinks = d.reasoning_content || d.reasoning || "";
  if (!text && !thinks) return;
  const i = rec.arrival.length;
  rec.arrival.push(at);
  rec.serverNS.push(ext && ext.server_ns ? ext.server_ns : 0);
  rec.tokens.push(ext && ext.tokens ? ext.tokens : 1);
  rec.text.push(text || thinks);
  rec.reasoning.push(thinks ? (text ? "with-answer" : "only") : "");
  rec.insert.push(-1);
  rec.paint.push(-1);
  rec.paintSource.push("");
  rec.frame.push(-1);
  if (current !== rec || rec.abortedAt >= 0) { rec.dropped++; return; }
  if (thinks) {
    thinking.hidden = false;
    thought.append(thinks);
  }
  if (text) render({ rec, i, text });
}

// settle waits until every inserted token has a paint time (or a second
// has passed since the stream ended), fills the paints Element Timing did
// not report with the frame after insertion, and wakes the driver.
function settle(rec) {
  const deadline = performance.now() + 1000;
  const check = () => {
    const waiting = pending.some((it) => it.rec === rec) ||
      rec.insert.some((t, i) => t >= 0 && (rec.frame[i] < 0 || rec.paint[i] < 0));
    if (waiting && performance.now() < deadline) {
      setTimeout(check, 20);
      return;
    }
    for (let i = 0; i < rec.paint.length; i++) {
      if (rec.paint[i] < 0 && rec.frame[i] >= 0) {
        rec.paint[i] = rec.frame[i];
        rec.paintSource[i] = "frame";
      }
    }
    for (let i = 0; i < rec.paint.length; i++) spans.delete(rec.id + "/" + i);
    rec.settled = true;
    (waiters.get(rec.id) || []).forEach((fn) => fn());
    waiters.delete(rec.id);
  };
  afterFrame(() => afterFrame(check));
}

function snapshot(rec) {
  const out = Object.assign({}, rec);
  delete out.controller;
  const end = rec.endAt >= 0 ? rec.endAt : performance.now();
  const last = Math.max(end, ...rec.paint);
  const overlaps = (e) => e.start + e.duration >= rec.t0 && e.start <= last;
  out.longFrames = longFrames.filter(overlaps);
  out.longTasks = longTasks.filter(overlaps);
  return out;
}

send.addEventListener("click", (ev) => { ask(ev.timeStamp, ev.isTrusted); });
promptBox.addEventListener("keydown", (ev) => {
  if (ev.key === "Enter" && !ev.shiftKey) {
    ev.preventDefault();
    ask(ev.timeStamp, ev.isTrusted);
  }
});

// The driver's handle. prepare says what the next click sends; result
// resolves with an answer's record once its paints are settled.
window.tokenpulse = {
  hasElementTiming, hasLoAF,
  prepare(opts) {
    next = opts;
    if (opts.prompt !== undefined) promptBox.value = opts.prompt;
    return true;
  },
  now: () => performance.now(),
  painted(id) {
    const rec = records.get(id);
    return rec ? rec.insert.filter((t) => t >= 0).length : 0;
  },
  // ended says whether answer id is over (its stream ended, failed or was
  // aborted), or unknown: a driver waiting for its tokens stops waiting.
  ended(id) {
    const rec = records.get(id);
    return !rec || rec.endAt >= 0;
  },
  result(id) {
    const rec = records.get(id);
    if (!rec) return Promise.resolve(null);
    if (rec.settled) return Promise.resolve(snapshot(rec));
    return new Promise((resolve) => {
      const list = waiters.get(id) || [];
      list.push(() => resolve(snapshot(rec)));
      waiters.set(id, list);
    });
  },
  forget(id) { records.delete(id); },
};
