// tokenpulse's watcher for a team's own page (bench --browser --page): it
// runs before the page's scripts, in the page's clock (performance.now(),
// ms), and records for each answer
//   - the click on the send button (a capturing listener: event.timeStamp),
//   - every chunk of every streamed fetch response (a wrapped fetch whose
//     body is read through a tee), as the network's arrivals in the page,
//   - every growth of the output element's text (a MutationObserver), as
//     the DOM insertions, each with the end of the first frame after it
//     as its paint,
//   - long animation frames.
// The driver configures it with __tokenpulseWatch.arm(send, output).
(() => {
  const w = {
    sendSel: "", outputSel: "", t0: -1, trusted: false,
    chunks: [], inserts: [], paints: [], lengths: [], longFrames: [],
    lastMutation: -1, baseLength: 0, observer: null,
  };
  window.__tokenpulseWatch = w;

  const afterFrame = (fn) => requestAnimationFrame(() => {
    const ch = new MessageChannel();
    ch.port1.onmessage = () => fn(performance.now());
    ch.port2.postMessage(0);
  });

  try {
    new PerformanceObserver((l) => l.getEntries().forEach((e) =>
      w.longFrames.push({ start: e.startTime, duration: e.duration, blocking: e.blockingDuration || 0 })))
      .observe({ type: "long-animation-frame", buffered: true });
  } catch { /* not supported */ }

  const realFetch = window.fetch;
  window.fetch = async function (...args) {
    const resp = await realFetch.apply(this, args);
    if (!resp.body || w.t0 < 0) return resp;
    const [mine, theirs] = resp.body.tee();
    (async () => {
      const r = mine.getReader();
      for (;;) {
        const { done } = await r.read();
        if (done) break;
        w.chunks.push(performance.now());
      }
    })().catch(() => {});
    return new Response(theirs, { status: resp.status, statusText: resp.statusText, headers: resp.headers });
  };

  document.addEventListener("click", (ev) => {
    if (w.sendSel && ev.target instanceof Element && ev.target.closest(w.sendSel)) {
      w.t0 = ev.timeStamp;
      w.trusted = ev.isTrusted;
    }
  }, true);

  const textLength = () => {
    const el = document.querySelector(w.outputSel);
    return el ? el.textContent.length : 0;
  };

  w.arm = (sendSel, outputSel) => {
    w.sendSel = sendSel;
    w.outputSel = outputSel;
    w.t0 = -1;
    w.chunks = []; w.inserts = []; w.paints = []; w.lengths = [];
    w.lastMutation = -1;
    w.baseLength = textLength();
    if (w.observer) w.observer.disconnect();
    const target = document.querySelector(outputSel);
    if (!target) return false;
    w.observer = new MutationObserver(() => {
      if (w.t0 < 0) return;
      const n = textLength();
      const prev = w.lengths.length ? w.lengths[w.lengths.length - 1] : w.baseLength;
      w.lastMutation = performance.now();
      if (n <= prev) {
        // The answer was replaced (cleared): count from here.
        if (n < prev) w.baseLength = n;
        return;
      }
      const i = w.inserts.length;
      w.inserts.push(performance.now());
      w.lengths.push(n);
      w.paints.push(-1);
      afterFrame((t) => { w.paints[i] = t; });
    });
    w.observer.observe(target, { childList: true, subtree: true, characterData: true });
    return true;
  };

  // state reports whether the answer has settled: text grew, and neither
  // the output nor the network moved for quietMs, and every paint is in.
  w.state = (quietMs) => {
    const now = performance.now();
    const last = Math.max(w.lastMutation, w.chunks.length ? w.chunks[w.chunks.length - 1] : -1);
    const settled = w.inserts.length > 0 && now - last >= quietMs && !w.paints.includes(-1);
    return { settled, clicked: w.t0 >= 0, inserts: w.inserts.length };
  };

  w.record = () => ({
    t0: w.t0, trusted: w.trusted, chunks: w.chunks, inserts: w.inserts, paints: w.paints,
    longFrames: w.longFrames.filter((e) => e.start + e.duration >= w.t0),
  });
})();
