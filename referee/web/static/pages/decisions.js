// The players' own decisions on the game page (CONTRACT section 12; docs/web.md "Resign and offers"):
// Resign, Offer draw / to end / to abort, Ask to take back, and the pending offer with Accept, Decline or
// Withdraw. Each goes through an in-page confirmation (never window.confirm), is signed in the browser like
// a move (bound to the log position the page shows) and posted to the API; a refusal is shown in words.
// Also: the words for the decision entries of a log (the replay), and the result's `resigned` and `basis`.

import { api } from "../shared/api.js";
import { seatName } from "../games/model.js";
import { el, showError } from "../shared/ui.js";
import { _ } from "../shared/i18n.js";

const MOVE_TYPES = new Set(["move", "auto_move"]);

const OFFER_WORDS = {
  draw: _("a draw"),
  end: _("to end the game now, scored as it stands"),
  abort: _("to abort the game (no result, not rated)"),
  takeback: _("to take back their last move"),
};

const OUTCOME_WORDS = {
  agreed: _("was agreed"),
  declined: _("was declined"),
  withdrawn: _("was withdrawn"),
  lapsed: _("lapsed"),
};

function nowIso() {
  return new Date().toISOString().replace(/\.\d{3}Z$/, "Z");
}

/** The words of an offer: "a draw", "to end the game now, …". */
export function offerWords(kind) {
  return OFFER_WORDS[kind] || `"${kind}"`;
}

/** Whether a log entry applied a move of its seat (a move, a default move, a timeout's default move). */
function isMoveEntry(entry) {
  return MOVE_TYPES.has(entry.type) || (entry.type === "timeout" && entry.move !== null && entry.move !== undefined);
}

/**
 * The log, read once and then only its new entries (GET /games/<id>/log?from=n), for what GET /games does
 * not say: whether every seat has moved (an abort is allowed before), whose move is the last applied one
 * (the take-back), and whether the game belongs to a tournament (never aborted).
 */
export function logReader(gameId) {
  const entries = [];
  let primed = null;
  return {
    entries,
    /** An entry the event stream brought (live.js): kept when it is the next one, so update() need not ask. */
    offer(position, entry) {
      if (position === entries.length && entry && typeof entry === "object") entries.push(entry);
    },
    /** A first page of the log from position 0, already asked for (the game page's first reads). */
    prime(page) {
      primed = page;
    },
    async update(length) {
      if (primed) {
        const page = await primed.catch(() => null);
        primed = null;
        const got = (page && page.entries) || [];
        entries.push(...got.slice(entries.length));
      }
      while (entries.length < length) {
        const page = await api.log(gameId, `?from=${entries.length}&limit=1000`);
        const got = (page && page.entries) || [];
        if (!got.length) break;
        entries.push(...got);
      }
      return entries;
    },
  };
}

/** What the log says about who may offer what (the fold's own rules are in referee/rulings/decisions.py). */
export function logFacts(entries, voided = []) {
  const gone = new Set(voided);
  const moved = new Set();
  let last = null;
  for (const entry of entries) {
    if (!entry || !isMoveEntry(entry)) continue;
    moved.add(entry.seat);
    if (!gone.has(entry.seq)) last = entry;
  }
  const created = entries[0] && entries[0].type === "created" ? entries[0] : null;
  return { moved, lastMove: last, tournament: Boolean(created && typeof created.tournament === "string") };
}

/** The words of a decision entry of the log (resigned, offer, answered, agreed), else null. */
export function describeDecisionEntry(entry, seats, entries = []) {
  const who = seatName(seats, entry.seat);
  switch (entry.type) {
    case "resigned":
      return _("{name} resigned", { name: who });
    case "offer":
      return _("{name} offered {offer}", { name: who, offer: offerWords(entry.offer) });
    case "answered": {
      const offer = entries[entry.offer];
      const what = offer && offer.type === "offer" ? _("{name}'s offer of {offer}", { name: seatName(seats, offer.seat), offer: offerWords(offer.offer) })
        : _("the offer #{n}", { n: entry.offer });
      if (entry.accept) return _("{name} accepted {what}", { name: who, what });
      return offer && offer.seat === entry.seat ? _("{name} withdrew their offer", { name: who }) : _("{name} declined {what}", { name: who, what });
    }
    case "agreed": {
      const offer = entries[entry.offer];
      return offer && offer.type === "offer" ? _("Agreed: {name}'s offer of {offer} (#{n})", { name: seatName(seats, offer.seat),
        offer: offerWords(offer.offer), n: entry.offer })
        : _("Agreed: the offer #{n}", { n: entry.offer });
    }
    default:
      return null;
  }
}

/**
 * Say in a score table (rows `tr[data-seat]` in `box`) which seats resigned, and why each seat ranks where
 * it does (the result's per-seat `basis`, DC-R3).
 */
export function markDecisions(box, result, seats) {
  const rows = result.seats || [];
  for (const r of rows.filter((x) => x.resigned)) {
    const row = box.querySelector(`tr[data-seat='${r.seat}']`);
    if (!row) continue;
    row.classList.add("resigned");
    row.dataset.resigned = "true";
    const cell = row.querySelector("th") || row.cells[1] || row.cells[0];
    if (cell) cell.append(" ", el("span", { class: "badge badge-resigned" }, _("resigned")));
  }
  if (!rows.some((r) => r.basis || typeof r.resigned === "boolean")) return;
  const ordered = [...rows].sort((a, b) => (a.rank ?? 0) - (b.rank ?? 0) || a.seat - b.seat);
  box.append(el("div", { class: "basis-note" }, el("h3", {}, _("Why each player ranks where they do")),
    el("ol", { class: "basis-list" }, ordered.map((r) => el("li", {
      dataset: { seat: String(r.seat), resigned: r.resigned ? "true" : "false", rule: (r.basis && r.basis.rule) || "" },
    }, el("strong", {}, `${_("Rank {n}", { n: r.rank ?? "?" })}: `), el("span", { class: "name", title: seatName(seats, r.seat) }, seatName(seats, r.seat)),
    ` — ${_("resigned")}: ${r.resigned ? _("yes") : _("no")}`,
    r.forfeited ? ` — ${_("forfeited")}` : "",
    r.basis ? ` — [${r.basis.rule || ""}] ${r.basis.reason || ""}` : "")))));
}

/**
 * The decisions panel of the game page. `section` holds `#pending-offer`, `#decision-buttons`,
 * `#decision-confirm`, `#decision-status`; `sign(envelope)` returns `{envelope, sig}`; `reload()` redraws
 * the page after a submission.
 */
export function decisionsPanel({ section, gameId, sign, reload }) {
  const pendingBox = section.querySelector("#pending-offer");
  const buttonsBox = section.querySelector("#decision-buttons");
  const confirmBox = section.querySelector("#decision-confirm");
  const statusBox = section.querySelector("#decision-status");
  let game = null;
  let shownKey = null;
  let confirming = null; // {id, opener}
  let busy = false;

  function standing() {
    const resigned = new Set((game.raw.decisions && game.raw.decisions.resigned) || []);
    return game.seats.map((s, i) => i).filter((i) => !resigned.has(i) && !(game.seats[i].clock && game.seats[i].clock.forfeited));
  }

  /** Every action this browser may take now: [{id, seat, label, aria, confirm: {title, text, yes}, run}]. */
  function actions(mine, facts) {
    const decisions = game.raw.decisions;
    if (!decisions || game.status !== "active") return [];
    const left = standing();
    const pending = decisions.pending;
    const out = [];
    const many = mine.length > 1;
    for (const seat of mine.filter((i) => left.includes(i))) {
      const name = seatName(game.seats, seat);
      const others = left.length - 1;
      out.push({ id: `resign:${seat}`, seat, label: _("Resign"), aria: many ? _("Resign as {name}", { name }) : null, danger: true,
        confirm: { title: many ? _("Resign as {name}?", { name }) : _("Resign?"), yes: _("Yes, resign"),
          text: others <= 1 ? _("The other player wins and the game ends at once. This cannot be undone.")
            : _("You rank below every player still in the game, and the referee plays your turns by default moves. This cannot be undone.") } });
      if (!pending) {
        const offer = (kind, label, aria, title, yes, text, extra = "") => ({ id: `offer:${kind}:${seat}`, seat, label,
          aria: many ? aria : null, confirm: { title, yes, text: text + extra }, kind });
        out.push(offer("draw", _("Offer draw"), _("Offer draw as {name}", { name }),
          many ? _("Offer draw as {name}?", { name }) : _("Offer draw?"), _("Yes, offer draw"),
          _("If every other player still in the game accepts, the game ends and every player still in it shares first place.")));
        out.push(offer("end", _("Offer to end"), _("Offer to end as {name}", { name }),
          many ? _("Offer to end as {name}?", { name }) : _("Offer to end?"), _("Yes, offer to end"),
          _("If every other player still in the game accepts, the game ends now and is scored as it stands (the provisional score).")));
        if (!facts.tournament && facts.moved.size < game.seats.length) {
          out.push(offer("abort", _("Offer to abort"), _("Offer to abort as {name}", { name }),
            many ? _("Offer to abort as {name}?", { name }) : _("Offer to abort?"), _("Yes, offer to abort"),
            _("If every other player accepts, the game ends with no result and is not rated. Only possible before every player has made a move.")));
        }
        const last = facts.lastMove;
        if (last && last.type === "move" && last.seat === seat) {
          out.push(offer("takeback", _("Ask to take back"), _("Ask to take back as {name}", { name }),
            many ? _("Ask to take back as {name}?", { name }) : _("Ask to take back?"), _("Yes, ask to take back"),
            _("If every other player still in the game accepts, your move #{n} is void and you move again.", { n: last.seq }),
            ` ${_("A move that revealed something hidden (a card drawn, a reshuffle) cannot be taken back: the referee refuses it.")}`));
        }
      } else if (pending.seat === seat) {
        out.push({ id: `withdraw:${seat}:${pending.offer}`, seat, label: _("Withdraw"), aria: many ? _("Withdraw as {name}", { name }) : null,
          confirm: { title: _("Withdraw your offer of {offer}?", { offer: offerWords(pending.kind) }), yes: _("Yes, withdraw"),
            text: _("The offer lapses; you may make another one later.") }, answer: { position: pending.offer, accept: false } });
      } else if (!(pending.accepted || []).includes(seat)) {
        const by = seatName(game.seats, pending.seat);
        const waiting = left.filter((i) => i !== pending.seat && !(pending.accepted || []).includes(i));
        const lastNeeded = waiting.length === 1;
        const consequence = {
          draw: _("every player still in the game shares first place and the game ends"),
          end: _("the game ends now, scored as it stands"),
          abort: _("the game ends with no result and is not rated"),
          takeback: pending.move !== undefined ? _("{name}'s move #{n} is void and {name} moves again", { name: by, n: pending.move })
            : _("{name}'s move is void and {name} moves again", { name: by }),
        }[pending.kind] || _("the offer passes");
        const vars = { by, offer: offerWords(pending.kind), name };
        out.push({ id: `accept:${seat}:${pending.offer}`, seat, label: _("Accept"), aria: many ? _("Accept as {name}", { name }) : null,
          confirm: { title: many ? _("Accept {by}'s offer of {offer} as {name}?", vars) : _("Accept {by}'s offer of {offer}?", vars),
            yes: _("Yes, accept"),
            text: lastNeeded ? _("Yours is the last answer needed: {consequence}.", { consequence })
              : _("Once every other player still in the game accepts too, {consequence}.", { consequence }) },
          answer: { position: pending.offer, accept: true } });
        out.push({ id: `decline:${seat}:${pending.offer}`, seat, label: _("Decline"), aria: many ? _("Decline as {name}", { name }) : null,
          confirm: { title: many ? _("Decline {by}'s offer of {offer} as {name}?", vars) : _("Decline {by}'s offer of {offer}?", vars),
            yes: _("Yes, decline"),
            text: _("The offer lapses and the game goes on.") }, answer: { position: pending.offer, accept: false } });
      }
    }
    return out;
  }

  async function post(what, seat, fields, send) {
    const envelope = { v: 1, ctx: `referee/${what}`, game: gameId, seat, seq: game.seq, prev: game.head, ...fields,
      at: nowIso() };
    return send(await sign(envelope));
  }

  const CONTEXTS = { resign: _("Your resignation was refused"), offer: _("Your offer was refused"), answer: _("Your answer was refused") };

  async function perform(action) {
    busy = true;
    for (const button of buttonsBox.querySelectorAll("button")) button.disabled = true;
    statusBox.textContent = _("Signing and sending…");
    let kind;
    try {
      let receipt;
      if (action.id.startsWith("resign:")) {
        kind = "resign";
        receipt = await post("resign", action.seat, {}, (s) => api.resign(gameId, s));
        statusBox.textContent = _("You resigned (entry #{n}).", { n: receipt.position });
      } else if (action.kind) {
        kind = "offer";
        receipt = await post("offer", action.seat, { offer: action.kind }, (s) => api.offer(gameId, s));
        statusBox.textContent = _("You offered {offer} (offer #{n}).", { offer: offerWords(action.kind), n: receipt.position });
      } else {
        kind = "answer";
        const { position, accept } = action.answer;
        receipt = await post("answer", action.seat, { offer: position, accept }, (s) => api.answer(gameId, position, s));
        const n = receipt.position;
        statusBox.textContent = action.id.startsWith("withdraw:") ? _("You withdrew the offer (entry #{n}).", { n })
          : accept ? _("You accepted (entry #{n}).", { n }) : _("You declined (entry #{n}).", { n });
      }
    } catch (err) {
      statusBox.textContent = "";
      const stale = err.code === "submission/stale" ? _("The game moved on before your decision arrived; the page now shows the new position") : null;
      showError(err, stale || CONTEXTS[kind] || _("Refused"), { reveal: true });
    } finally {
      busy = false;
      shownKey = null;
      await reload();
      // The confirmation and its button are gone: keep the keyboard's place in the panel.
      if ((!document.activeElement || document.activeElement === document.body) && !section.hidden) {
        section.querySelector("h2").focus();
      }
    }
  }

  function closeConfirm({ refocus = true } = {}) {
    const was = confirming;
    confirming = null;
    confirmBox.hidden = true;
    confirmBox.replaceChildren();
    if (refocus && was) {
      const again = buttonsBox.querySelector(`button[data-action='${was.id}']`);
      (again || section.querySelector("h2")).focus();
    }
  }

  function openConfirm(action, opener) {
    confirming = { id: action.id, opener };
    const c = action.confirm;
    const yes = el("button", { type: "button", class: action.danger ? "primary danger confirm-yes" : "primary confirm-yes",
      onclick: () => {
        closeConfirm({ refocus: false });
        perform(action);
      } }, c.yes);
    const cancel = el("button", { type: "button", class: "confirm-cancel", onclick: () => closeConfirm() }, _("Cancel"));
    confirmBox.replaceChildren(el("p", { id: "decision-confirm-title", class: "confirm-title" }, c.title),
      el("p", { id: "decision-confirm-text" }, c.text), el("p", { class: "inline" }, yes, cancel));
    confirmBox.dataset.action = action.id;
    confirmBox.hidden = false;
    cancel.focus(); // the least harmful choice has the focus: Enter twice never resigns by accident
  }

  confirmBox.addEventListener("keydown", (event) => {
    if (event.key === "Escape") {
      event.preventDefault();
      closeConfirm();
    }
  });

  function describePending() {
    const decisions = game.raw.decisions;
    const parts = [];
    if (!decisions) return parts;
    const pending = decisions.pending;
    if (pending) {
      const by = seatName(game.seats, pending.seat);
      const what = pending.kind === "takeback"
        ? (pending.move !== undefined ? _("{name} asks to take back their move #{n}.", { name: by, n: pending.move })
          : _("{name} asks to take back their move.", { name: by }))
        : _("{name} offers {offer}.", { name: by, offer: offerWords(pending.kind) });
      const left = standing();
      const accepted = (pending.accepted || []).map((i) => seatName(game.seats, i));
      const waiting = left.filter((i) => i !== pending.seat && !(pending.accepted || []).includes(i)).map((i) => seatName(game.seats, i));
      parts.push(el("p", { class: "pending-offer", dataset: { kind: pending.kind, seat: String(pending.seat), offer: String(pending.offer) } },
        el("strong", {}, what),
        accepted.length ? ` ${_("Accepted by {names}.", { names: accepted.join(", ") })}` : "",
        waiting.length ? ` ${_("Waiting for {names}.", { names: waiting.join(", ") })}` : ""));
    }
    const last = decisions.last;
    if (last && !pending) {
      parts.push(el("p", { class: "last-offer hint", dataset: { outcome: last.outcome, kind: last.kind } },
        last.outcome === "lapsed" && last.position !== null && last.position !== undefined
          ? _("The last offer (#{n}, {offer}) lapsed at entry #{position}.", { n: last.offer, offer: offerWords(last.kind), position: last.position })
          : _("The last offer (#{n}, {offer}) {outcome}.", { n: last.offer, offer: offerWords(last.kind), outcome: OUTCOME_WORDS[last.outcome] || last.outcome })));
    }
    const resigned = decisions.resigned || [];
    if (resigned.length) {
      parts.push(el("p", { class: "resigned-seats" }, _("Resigned: {names}.", { names: resigned.map((i) => seatName(game.seats, i)).join(", ") })));
    }
    if (game.status === "aborted" && last && last.kind === "abort" && last.outcome === "agreed") {
      parts.push(el("p", {}, _("The game was aborted by agreement: it has no result.")));
    }
    return parts;
  }

  return {
    /** Redraw for a fresh game document, the log's facts and this browser's seats. */
    render(fresh, facts, mine) {
      game = fresh;
      const list = actions(mine, facts);
      const pendingParts = describePending();
      section.hidden = list.length === 0 && pendingParts.length === 0;
      section.dataset.pending = game.raw.decisions && game.raw.decisions.pending ? game.raw.decisions.pending.kind : "";
      const key = JSON.stringify([game.seq, game.status, list.map((a) => a.id), mine]);
      if (key === shownKey) return;
      shownKey = key;
      pendingBox.replaceChildren(...pendingParts);
      const bySeat = new Map();
      for (const action of list) {
        if (!bySeat.has(action.seat)) bySeat.set(action.seat, []);
        bySeat.get(action.seat).push(action);
      }
      const focused = document.activeElement && buttonsBox.contains(document.activeElement)
        ? document.activeElement.dataset.action : null;
      buttonsBox.replaceChildren(...[...bySeat].map(([seat, acts]) => el("div", { class: "decision-seat", dataset: { seat: String(seat) } },
        mine.length > 1 ? el("span", { class: "hint" }, `${seatName(game.seats, seat)}: `) : "",
        acts.map((action) => {
          const button = el("button", { type: "button", class: action.danger ? "danger" : null, "aria-label": action.aria,
            dataset: { action: action.id }, disabled: busy, "aria-haspopup": "dialog" }, action.label);
          button.addEventListener("click", () => openConfirm(action, button));
          return button;
        }))));
      if (focused) {
        const again = buttonsBox.querySelector(`button[data-action='${focused}']`);
        if (again) again.focus();
      }
      // A confirmation open for an action that is no longer possible (the offer was withdrawn, the game ended)
      // closes, and says why.
      if (confirming && !list.some((a) => a.id === confirming.id)) {
        const inside = confirmBox.contains(document.activeElement);
        closeConfirm({ refocus: false });
        statusBox.textContent = _("That choice is no longer possible: the game has changed.");
        if (inside) section.querySelector("h2").focus();
      }
    },
  };
}
