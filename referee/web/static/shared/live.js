// Live updates of a page: follow a game over the browser's one event stream (live-hub.js: GET
// /players/events, shared by every tab of the site), and poll only as a fallback.
//
// followGame(gameId, {root, refresh, pollMs, seqOf, covered, onEntry}) calls `refresh({via, notice})` (which
// reloads what the page shows; `notice` the stream's notice that caused it, if one did: {game, position, type,
// entry}) when a notice of a new log entry of the game arrives, once each time the stream (re)opens (to catch
// up on anything that happened before it was open), and every `pollMs` while the stream is down — or while
// the page is behind the stream: `seqOf()` (the log length the page shows) not past the last notice's
// position, e.g. because the reload after a notice failed or was answered from a stale cache. The server ends
// each stream after a few minutes; the stream is reopened with its last event id, so nothing is missed.
// `covered`: the game is one of this browser's keys' running games, which the stream follows anyway (the
// page then does not name it, and opening it changes nothing of the stream). `onEntry(position, entry)`: each
// notice's entry, before the refresh (the page keeps its copy of the log without asking for it).
//
// `root.dataset.live` tells which path is in use: "connecting", "sse" (the stream is open), "poll" (the
// stream failed: polling), "stopped"; `root.dataset.liveEvents` counts the notices received over the
// stream, `root.dataset.liveLast` is the path ("sse" or "poll") of the last refresh that found news.

import { subscribe } from "./live-hub.js";

export function followGame(gameId, { root, refresh, pollMs = 1500, seqOf = null, covered = false, onEntry = null }) {
  let timer = null;
  let stopped = false;
  let running = false;
  let again = null; // a refresh asked for while one runs: run once more afterwards
  let events = 0;
  let latest = -1; // position of the last entry announced by the stream
  let open = false;

  function behind() {
    return seqOf !== null && latest >= 0 && seqOf() <= latest;
  }

  // Poll while the stream is not open, or while the page has not caught up with it.
  function settle() {
    if (stopped) return;
    if (behind() || !open) startPolling();
    else stopPolling();
  }

  async function run(via, notice = null) {
    if (running) {
      again = { via, notice: again && again.notice && !notice ? again.notice : notice };
      return;
    }
    running = true;
    try {
      const changed = await refresh({ via, notice });
      if (changed !== false) {
        root.dataset.liveLast = via;
        root.dataset.liveAt = String(Date.now()); // when the page last showed news (the benchmark reads it)
      }
    } catch {
      // a failed update changes nothing on the page; the next notice or poll tries again
    } finally {
      running = false;
      if (again && !stopped) {
        const next = again;
        again = null;
        run(next.via, next.notice);
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

  root.dataset.live = "connecting";
  const subscription = subscribe({
    games: covered ? [] : [gameId],
    onNotice(notice) {
      if (stopped || notice.game !== gameId || typeof notice.position !== "number") return;
      latest = Math.max(latest, notice.position);
      events += 1;
      root.dataset.liveEvents = String(events);
      if (notice.entry && onEntry) onEntry(notice.position, notice.entry);
      run("sse", notice);
    },
    onState(state) {
      if (stopped) return;
      open = state === "open";
      // down: the leader's EventSource retries by itself (the server ended the stream, or a restart); poll
      // meanwhile
      root.dataset.live = open ? "sse" : "poll";
      if (open) run("sse");
      else startPolling();
    },
  });
  return {
    stop() {
      stopped = true;
      stopPolling();
      subscription.stop();
      root.dataset.live = "stopped";
    },
  };
}
