// Reading the API's game documents in one place, so that the pages do not depend on field spellings
// scattered through the code.

import * as fivetowers from "./fivetowers.js";
import * as towerup from "./towerup.js";
import { _ } from "../shared/i18n.js";

export const RULESETS = { fivetowers, towerup };

export function rulesetModule(name) {
  return RULESETS[name] || null;
}

/** The heading of a ruleset's chart of the score over a game (the replay page's and the verify page's). */
export function chartHeading(name) {
  return name === "towerup" ? _("Locomotive tracks over the game") : _("Tower points over the game");
}

export function normGame(g) {
  const ruleset = g.ruleset && typeof g.ruleset === "object" ? g.ruleset.name : g.ruleset;
  return {
    raw: g,
    id: g.id ?? g.game,
    ruleset,
    version: g.ruleset && typeof g.ruleset === "object" ? g.ruleset.version : g.version,
    status: g.status,
    toMove: g.to_move ?? g.seat_to_move ?? null,
    seq: g.seq,
    head: g.head,
    state: g.state ?? g.view ?? g.public_state ?? null,
    seats: g.seats ?? [],
    accepted: Array.isArray(g.accepted) ? g.accepted
      : Array.isArray(g.seats) && g.seats.length && g.seats.every((x) => typeof x.accepted === "boolean")
        ? g.seats.map((x, i) => (x.accepted ? i : -1)).filter((i) => i >= 0) : null,
    verdict: g.last_verdict ?? g.verdict ?? null,
  };
}

export function normLegal(data) {
  if (Array.isArray(data)) return { seat: null, moves: data };
  return { seat: data.seat ?? data.to_move ?? null, moves: data.moves ?? data.legal_moves ?? [] };
}

export function seatName(seats, i) {
  return (seats && seats[i] && seats[i].name) || _("Seat {n}", { n: i + 1 });
}

/** One line for a verdict {seq, type, status, seat?, error?}. */
export function describeVerdict(verdict, seats) {
  if (!verdict) return "—";
  // the log entry's type in words (the type itself, e.g. data-type, stays as the log writes it)
  const types = { move: _("move"), auto_move: _("default move"), accepted: _("acceptance"), created: _("creation"),
    started: _("start"), timeout: _("timeout"), vacation: _("vacation"), resigned: _("resignation"), offer: _("offer"),
    answered: _("answer"), agreed: _("agreement"), revealed: _("reveal"), forfeited: _("forfeit") };
  const type = types[verdict.type] || verdict.type || _("entry");
  const what = verdict.seat !== undefined && verdict.seat !== null
    ? _("{name}'s {type} #{seq}", { name: seatName(seats, verdict.seat), type, seq: verdict.seq })
    : `${type} #${verdict.seq}`;
  if (verdict.status === "rejected" && verdict.error) {
    const e = verdict.error;
    return `${what}: ${_("rejected")}${e.rule ? ` [${e.rule}]` : ""} ${e.code || ""}: ${e.message || ""}`;
  }
  const status = { accepted: _("accepted"), applied: _("applied"), pending: _("pending"), rejected: _("rejected") }[verdict.status]
    || verdict.status;
  return `${what}: ${status}`;
}
