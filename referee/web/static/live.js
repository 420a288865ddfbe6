// Live updates of a page: follow a game's log over Server-Sent Events (GET /games/<id>/events, fed by
// XREAD BLOCK on the server), and poll only as a fallback.
//
// followGame(gameId, {root, refresh, pollMs, seqOf}) calls `refresh()` (which reloads what the page shows)
// when a new log entry arrives, once each time the stream (re)opens (to catch up on anything that
// happened before it was open), and every `pollMs` while the stream is down — or while the page is
// behind the stream: `seqOf()` (the log length the page shows) not past the last event's position, e.g.
// because the reload after an event failed or was answered from a stale cache. The server ends each stream after a
// few minutes; EventSource reconnects by itself with Last-Event-ID, so nothing is missed.
//
// `root.dataset.live` tells which path is in use: "connecting", "sse" (the stream is open), "poll" (the
// stream failed: polling), "stopped"; `root.dataset.liveEvents` counts the entries received over the
// stream, `root.dataset.liveLast` is the path ("sse" or "poll") of the last refresh that found news.

const ROOT = (document.body && document.body.dataset.api) || "";

export function followGame(gameId, { root, refresh, pollMs = 1500, seqOf = null }) {
  let source = null;
  let timer = null;
  let stopped = false;
  let running = false;
  let again = null; // a refresh asked for while one runs: run once more afterwards
  let events = 0;
  let latest = -1; // position of the last entry announced by the stream

  function behind() {
    return seqOf !== null && latest >= 0 && seqOf() <= latest;
  }

  // Poll while the stream is not open, or while the page has not caught up with it.
  function settle() {
    if (stopped) return;
    if (behind() || !source || source.readyState !== 1) startPolling();
    else stopPolling();
  }

  async function run(via) {
    if (running) {
      again = via;
      return;
    }
    running = true;
    try {
      const changed = await refresh();
      if (changed !== false) root.dataset.liveLast = via;
    } catch {
      // a failed update changes nothing on the page; the next event or poll tries again
    } finally {
      running = false;
      if (again && !stopped) {
        const next = again;
        again = null;
        run(next);
      } else {
        settle();
      }
    }
  }

  function startPolling() {
    if (timer || stopped) return;
    timer = setInterval(() => run("poll"), pollMs);
  }

  function stopPolling() {
    clearInterval(timer);
    timer = null;
  }

  function connect() {
    if (typeof EventSource === "undefined") {
      root.dataset.live = "poll";
      startPolling();
      return;
    }
    root.dataset.live = "connecting";
    source = new EventSource(`${ROOT}/games/${encodeURIComponent(gameId)}/events`);
    source.addEventListener("open", () => {
      root.dataset.live = "sse";
      run("sse");
    });
    source.addEventListener("message", (event) => {
      latest = Math.max(latest, Number(event.lastEventId));
      events += 1;
      root.dataset.liveEvents = String(events);
      run("sse");
    });
    source.addEventListener("error", () => {
      if (stopped) return;
      // CONNECTING: the browser retries by itself (the server ended the stream, or a restart); poll
      // meanwhile. CLOSED: the server refused the stream (e.g. an old server without it): poll for good.
      root.dataset.live = "poll";
      startPolling();
    });
  }

  connect();
  return {
    stop() {
      stopped = true;
      stopPolling();
      if (source) source.close();
      root.dataset.live = "stopped";
    },
  };
}
