"""English, German and French for mails, the mail gateway's replies, the human part of API errors and the CLI
(issue 24 item 3), on real servers: the suite's Redis, RQ workers, the gateway's aiosmtpd server and an SMTP
sink, an HTTP server for the CLI. Codes, rule ids, details and field paths never change with the language."""

from __future__ import annotations

import random
import re
import smtplib
import uuid
from collections import Counter
from email.message import EmailMessage

import pytest
from babel.messages.pofile import read_po
from live_server import serving
from notify_servers import text_of
from svc_helpers import Http, accept_all, create_game, move_envelope, run_cli, signed
from test_mail_gateway import gateway  # noqa: F401 - the fixture: app, gateway SMTP server, sink, workers
from tournament_helpers import Players, join_envelope

from referee.clock import now
from referee.i18n import SUPPORTED, TRANSLATIONS, env_language, extract, negotiate
from referee.notify.armor import armor
from referee.protocol.signing import generate_key, public_key_b64, sign
from workers import deliveries


# -- the catalogs ---------------------------------------------------------------------------------------------
def catalog_problems(extracted: dict[str, list[str]], catalog) -> list[str]:
    """What a catalog lacks for the msgids of the sources: missing, empty or fuzzy entries, and translations whose
    ``%(name)s`` placeholders differ from their msgid's."""
    placeholders = re.compile(r"%\((\w+)\)s")
    problems = []
    for msgid, where in extracted.items():
        entry = catalog.get(msgid)
        if entry is None:
            problems.append(f"missing {msgid!r} ({where[0]})")
        elif not entry.string:
            problems.append(f"empty {msgid!r} ({where[0]})")
        elif entry.fuzzy:
            problems.append(f"fuzzy {msgid!r} ({where[0]})")
        elif set(placeholders.findall(msgid)) != set(placeholders.findall(entry.string)):
            problems.append(f"placeholders of {msgid!r} differ in {entry.string!r}")
    return problems


def duplicate_msgids(po_text: str) -> list[str]:
    """The msgids (with their msgctxt) a ``.po`` text holds more than once: Babel's reader keeps one of them
    without a word, so the other translation is never shown."""
    entries = re.findall(r'^(?:msgctxt ((?:"(?:[^"\\]|\\.)*"\n?)+))?msgid ((?:"(?:[^"\\]|\\.)*"\n?)+)', po_text, re.M)
    counts = Counter((context.strip(), "".join(re.findall(r'"((?:[^"\\]|\\.)*)"', msgid)))
                     for context, msgid in entries)
    return sorted({msgid for (_context, msgid), count in counts.items() if count > 1 and msgid})


def test_every_string_of_mails_errors_and_the_cli_is_translated_into_german_and_french():
    extracted = extract()  # Babel's Python extractor over referee/{notify,api,cli}, error_texts, i18n
    assert len(extracted) > 250 and "Your turn in %(name)s %(game)s" in extracted
    assert "the request is malformed: %(problems)s" in extracted and "say --accept or --decline" in extracted
    for language in SUPPORTED[1:]:
        with (TRANSLATIONS / language / "LC_MESSAGES" / "referee.po").open("rb") as handle:
            catalog = read_po(handle, locale=language, domain="referee")
        assert catalog_problems(extracted, catalog) == [], language
        for domain in ("referee", "web"):  # each msgid once (one was twice, with two translations)
            po_text = (TRANSLATIONS / language / "LC_MESSAGES" / f"{domain}.po").read_text(encoding="utf-8")
            assert duplicate_msgids(po_text) == [], (language, domain)
            first = re.search(r'^msgid "(.+)"$', po_text, re.M).group(1)  # the check finds one added
            assert duplicate_msgids(f'{po_text}\nmsgid "{first}"\nmsgstr "x"\n') == [first], (language, domain)
        # the check fails when the catalog misses a msgid, or leaves it empty
        catalog.delete("Your turn in %(name)s %(game)s")
        catalog["say --accept or --decline"].string = ""
        assert catalog_problems(extracted, catalog) == [
            "missing 'Your turn in %(name)s %(game)s' (notify/render.py:"
            + extracted["Your turn in %(name)s %(game)s"][0].split(":")[1] + ")",
            "empty 'say --accept or --decline' (cli/decisions.py:"
            + extracted["say --accept or --decline"][0].split(":")[1] + ")"]


def test_the_language_of_a_header_and_of_a_terminal():
    assert negotiate("de-AT,de;q=0.9,en;q=0.5") == "de" and negotiate("fr-CA") == "fr"
    assert negotiate("es, it;q=0.8") == "en" and negotiate("de;q=0.2, fr;q=0.3") == "fr"
    assert env_language({"LANGUAGE": "", "LANG": "fr_FR.UTF-8"}) == "fr"
    assert env_language({"LC_MESSAGES": "de_CH", "LANG": "fr_FR"}) == "de"
    assert env_language({"LC_ALL": "C.UTF-8", "LANG": "de_DE"}) == "en" and env_language({}) == "en"


# -- API errors -----------------------------------------------------------------------------------------------
def test_api_errors_speak_the_requests_language_and_keep_code_rule_and_details(app):
    client = app.test_client()
    http = Http(client)
    game = create_game(http, "fivetowers", 2)
    accept_all(http, game)
    state = http.get(f"/games/{game.game_id}")[1]
    seat = state["to_move"]
    other = 1 - seat

    def move(key_seat: int, envelope_seat: int, move: dict, key=None):
        envelope = move_envelope(game.game_id, envelope_seat, state["seq"], state["head"], move)
        return signed(key or game.keys[key_seat], envelope)

    players = Players(2)
    status, created = http.post("/tournaments", players.body(format={"kind": "round_robin", "table_sizes": [2]}))
    assert status == 201, created
    tournament, outsider = created["tournament"], generate_key()
    outsider_join = signed(outsider, join_envelope(http, tournament, outsider))

    requests = {  # what a player meets: a refused move (rule id), not your turn, a bad signature, bad JSON
        "illegal": lambda h: client.post(f"/games/{game.game_id}/moves", json=move(seat, seat, {"type": "bid",
                                                                                                "amount": 99}),
                                         headers=h),
        "not_your_turn": lambda h: client.post(f"/games/{game.game_id}/moves", json=move(other, other, {
            "type": "pass"}), headers=h),
        "bad_signature": lambda h: client.post(f"/games/{game.game_id}/moves", json=move(
            seat, seat, {"type": "pass"}, key=generate_key()), headers=h),
        "floats": lambda h: client.post(f"/games/{game.game_id}/moves", data=b'{"envelope": 1.5, "sig": "x"}',
                                        headers={**h, "Content-Type": "application/json"}),
        "no_game": lambda h: client.get("/games/g_nosuchgame", headers=h),
        # a tournament's: one that is not there, and a join by a key that is no player of it
        "no_tournament": lambda h: client.get("/tournaments/t_nosuch", headers=h),
        "not_player": lambda h: client.post(f"/tournaments/{tournament}/join", json=outsider_join, headers=h),
    }
    expected = {
        "de": {"illegal": "ein Gebot ist eine Zahl von 0 bis 5, der Anzahl der Karten in der Auslage",
               "not_your_turn": f"Platz {seat} ist am Zug, nicht Platz {other}",
               "bad_signature": f"die Signatur über diesen Umschlag stammt nicht vom Schlüssel von Platz {seat}",
               "floats": "die Anfrage ist fehlerhaft: $.envelope: Gleitkommazahlen sind nicht erlaubt",
               "no_game": "keine Partie 'g_nosuchgame'", "no_tournament": "kein Turnier 't_nosuch'",
               "not_player": "dieser Schlüssel gehört zu keiner Person des Turniers"},
        "fr": {"illegal": "une enchère est un nombre de 0 à 5, le nombre de cartes de l'étalage",
               "not_your_turn": f"c'est à la place {seat} de jouer, pas à la place {other}",
               "bad_signature": f"la signature de cette enveloppe n'est pas celle de la clé de la place {seat}",
               "floats": "la requête est mal formée : $.envelope: les nombres à virgule flottante ne sont pas "
                         "permis",
               "no_game": "aucune partie 'g_nosuchgame'", "no_tournament": "aucun tournoi 't_nosuch'",
               "not_player": "cette clé n'est celle d'aucun joueur du tournoi"},
    }
    log_before = app.extensions["referee.store"].read_log(game.game_id)
    for name, request in requests.items():
        english = request({"Accept-Language": "en"})
        assert english.status_code >= 400, (name, english.json)
        for language in ("de", "fr"):
            answer = request({"Accept-Language": f"{language}-CH, {language};q=0.9, en;q=0.5"})
            assert answer.status_code == english.status_code
            error, original = answer.json["error"], english.json["error"]
            assert {k: v for k, v in error.items() if k != "message"} == {
                k: v for k, v in original.items() if k != "message"}, name  # code, rule, details unchanged
            assert answer.headers["Content-Language"] == language and "Accept-Language" in answer.headers["Vary"]
            assert error["message"] == expected[language][name], (name, language, error)
    assert english.json["error"]["code"] == "join/not_player"
    assert app.extensions["referee.store"].read_log(game.game_id) == log_before
    # no Accept-Language, or one we do not speak: English
    assert requests["illegal"]({}).json["error"]["message"].startswith("a bid is a number from 0 to 5")
    assert requests["illegal"]({"Accept-Language": "es"}).json["error"]["message"].startswith("a bid is")


def test_a_contact_has_a_language_en_de_or_fr(app):
    client, key = app.test_client(), generate_key()

    def contact(**fields):
        envelope = {"v": 1, "ctx": "referee/contact", "key": public_key_b64(key), "webhook": "http://127.0.0.1:9/h",
                    "events": ["turn"], **fields, "at": now()}
        return {"envelope": envelope, "sig": sign(key, envelope)}

    refused = client.post("/contacts", json=contact(language="es"))
    assert refused.status_code == 400 and refused.json["error"]["code"] == "request/invalid"
    assert refused.json["error"]["details"]["problems"][0]["path"] == "$.envelope.language"
    assert client.post("/contacts", json=contact()).json["language"] == "en"
    made = client.post("/contacts", json=contact(language="fr")).json
    assert made["language"] == "fr"
    kept = client.put(f"/contacts/{made['id']}", json=contact(contact=made["id"], events=["turn", "finished"]))
    assert kept.status_code == 200 and kept.json["language"] == "fr"  # a change without it keeps it
    changed = client.put(f"/contacts/{made['id']}", json=contact(contact=made["id"], language="de"))
    assert changed.json["language"] == "de"


# -- mails and the mail gateway ---------------------------------------------------------------------------------
def _send(port: int, text: str, sender: str, **headers: str) -> None:
    message = EmailMessage()
    message["From"], message["To"], message["Subject"] = sender, "play@referee.example", "Zug"
    message["Message-ID"] = f"<{uuid.uuid4().hex}@client.example>"
    message.set_content(text)
    for name, value in headers.items():  # after the content: setting it clears the Content-* headers
        message[name.replace("_", "-")] = value
    with smtplib.SMTP("127.0.0.1", port, timeout=10) as smtp:
        smtp.send_message(message)


def test_a_german_and_a_french_player_get_their_mails_and_gateway_replies_in_their_language(gateway):  # noqa: F811
    app, port, sink, run = gateway
    client, http = app.test_client(), Http(app.test_client())
    keys = [generate_key(), generate_key()]
    addresses = {"de": "dora@example.org", "fr": "felix@example.org"}
    contacts = {}
    for key, language in zip(keys, ("de", "fr"), strict=True):
        envelope = {"v": 1, "ctx": "referee/contact", "key": public_key_b64(key), "email": addresses[language],
                    "events": ["turn"], "language": language, "at": now()}
        made = client.post("/contacts", json={"envelope": envelope, "sig": sign(key, envelope)})
        assert made.status_code == 201 and made.json["language"] == language, made.json
        contacts[language] = made.json["id"]
    run()
    confirmations = {language: sink.wait_for(address)[0] for language, address in addresses.items()}
    assert str(confirmations["de"]["Subject"]) == "Bestätige deine Adresse für den Schiedsrichter"
    assert str(confirmations["fr"]["Subject"]) == "Confirmez votre adresse pour l'arbitre"
    assert confirmations["de"]["Content-Language"] == "de" and confirmations["fr"]["Content-Language"] == "fr"
    for language, mail in confirmations.items():
        code = text_of(mail).split("Confirmation code:")[1].split()[0]  # the line the gateway reads stays as it is
        confirmed = client.post(f"/contacts/{contacts[language]}/confirm", json={"code": code})
        assert confirmed.status_code == 200 and confirmed.json["email_status"] == "confirmed"

    game = create_game(http, "fivetowers", 2, keys=keys)
    accept_all(http, game)
    router = deliveries.OutboxRouter(app.extensions["referee.store"].redis, app.extensions["referee.contacts"],
                                     name="i18n-router")

    def route_and_deliver() -> None:
        for _ in range(2):
            run()
            router.run_once(block_ms=0)
        run()

    language_of_seat = {0: "de", 1: "fr"}
    subjects = {"de": f"Du bist am Zug in 5 Towers {game.game_id}",
                "fr": f"À vous de jouer dans 5 Towers {game.game_id}"}
    openings = {"de": f"Du bist am Zug in der Partie 5 Towers {game.game_id} (du bist p{{seat}} (Platz {{seat}})).",
                "fr": f"C'est à vous de jouer dans la partie 5 Towers {game.game_id} (vous êtes p{{seat}} (place "
                      "{seat})).", }
    rng = random.Random(7)
    seen: set[str] = set()
    for _ in range(2):  # one turn of each seat, each played by mail from its address
        route_and_deliver()
        _status, legal = http.get(f"/games/{game.game_id}/legal-moves")
        seat = legal["to_move"]
        language = language_of_seat[seat]
        turn = [m for m in sink.to(addresses[language]) if str(m["Subject"]) == subjects[language]]
        assert len(turn) == 1, [str(m["Subject"]) for m in sink.to(addresses[language])]
        text = text_of(turn[0])
        assert text.startswith(openings[language].format(seat=seat)), text
        assert turn[0]["Content-Language"] == language
        assert f"referee move {game.game_id} '<MOVE>' --key " in text and '"ctx": "referee/move"' in text
        html = turn[0].get_body(preferencelist=("html",)).get_content()
        assert f'<html lang="{language}">' in html
        seen.add(language)
        # an illegal move, then a legal one, by mail: the replies in the sender's contact's language
        illegal = move_envelope(game.game_id, seat, legal["seq"], legal["head"], {"type": "bid", "amount": 99})
        move = rng.choice(legal["moves"])
        legal_block = armor(signed(keys[seat], move_envelope(game.game_id, seat, legal["seq"], legal["head"], move)))
        _send(port, armor(signed(keys[seat], illegal)) + "\n" + legal_block, addresses[language])
        run()
        reply = text_of(sink.to(addresses[language])[-1])
        if language == "de":
            assert reply.startswith("Der Schiedsrichter hat deine Mail gelesen: 2 signierte(r) Block/Blöcke darin.")
            assert f"Block 1 (Partie {game.game_id}): ABGELEHNT bid/out_of_range (Regel FT-" in reply, reply
            assert "ein Gebot ist eine Zahl von 0 bis 5, der Anzahl der Karten in der Auslage" in reply
            assert f"Block 2 (Partie {game.game_id}): ANGENOMMEN (Zug) an Position" in reply
        else:
            assert reply.startswith("L'arbitre a lu votre courriel : 2 bloc(s) signé(s) dedans."), reply
            assert f"Bloc 1 (partie {game.game_id}) : REFUSÉ bid/out_of_range (règle FT-" in reply, reply
            assert "une enchère est un nombre de 0 à 5, le nombre de cartes de l'étalage" in reply
            assert f"Bloc 2 (partie {game.game_id}) : ACCEPTÉ (coup) à la position" in reply
        assert '"receipt_sig"' in reply and sink.to(addresses[language])[-1]["Content-Language"] == language
    assert seen == {"de", "fr"}
    # an address without a contact: the mail's own Content-Language, else English
    _send(port, "Hallo", "gast@example.org", Content_Language="de-DE")
    _send(port, "Bonjour", "invite@example.org", Accept_Language="fr-FR, fr;q=0.9")
    _send(port, "Hello", "guest@example.org")
    run()
    assert "mail/no_block: die Mail enthält keinen" in text_of(sink.to("gast@example.org")[-1])
    assert "mail/no_block: le courriel ne contient aucun bloc" in text_of(sink.to("invite@example.org")[-1])
    assert "mail/no_block: the mail holds no" in text_of(sink.to("guest@example.org")[-1])


# -- the command line ---------------------------------------------------------------------------------------------
GERMAN = {"LANGUAGE": None, "LC_ALL": None, "LC_MESSAGES": None, "LANG": "de_DE.UTF-8"}


def test_the_cli_speaks_german_by_lang_and_passes_its_language_to_the_server(app, tmp_path):
    key = tmp_path / "dora.key"
    assert run_cli("keygen", "--out", str(key))[0] == 0
    code, output = run_cli("keygen", "--out", str(key), env=GERMAN)
    assert code != 0 and f"{key} existiert; ein Schlüssel wird nicht überschrieben" in output, output
    code, output = run_cli("keygen", "--out", str(key), env={**GERMAN, "LC_ALL": "C"})  # LC_ALL before LANG
    assert code != 0 and "exists; not overwriting a key" in output
    code, output = run_cli("keygen", "--out", str(key), env={**GERMAN, "LANG": "fr_FR.UTF-8"})
    assert code != 0 and "existe ; une clé n'est jamais écrasée" in output
    http = Http(app.test_client())
    other = generate_key()
    from referee.protocol.signing import read_or_create_key_file

    game = create_game(http, "fivetowers", 2, keys=[read_or_create_key_file(str(key)), other])
    accept_all(http, game)
    with serving(app) as url:
        code, output = run_cli("answer", game.game_id, "--accept", "--key", str(key), "--server", url, env=GERMAN)
        assert code != 0 and f"in der Partie {game.game_id} ist kein Angebot offen" in output, output
        code, output = run_cli("move", game.game_id, '{"type": "bid", "amount": 99}', "--key", str(key),
                               "--seat", "0", "--server", url, env=GERMAN)
        assert code == 1, output
        if http.get(f"/games/{game.game_id}")[1]["to_move"] == 0:  # the server's message, in German; code as is
            assert '"code": "bid/out_of_range"' in output and "ein Gebot ist eine Zahl von 0 bis 5" in output, output
        else:
            assert '"code": "move/not_your_turn"' in output and "Platz 1 ist am Zug, nicht Platz 0" in output, output
        code, output = run_cli("move", game.game_id, "{not json", "--key", str(key), "--server", url, env=GERMAN)
        assert code != 0 and "MOVE ist kein JSON" in output, output


@pytest.mark.parametrize("language", ["de", "fr"])
def test_a_language_without_its_catalog_entry_falls_back_to_english(language):
    from referee.error_texts import translate_message

    assert translate_message("something no catalog holds", language) == "something no catalog holds"
    assert translate_message("seat 1 is to move, not seat 0", "en") == "seat 1 is to move, not seat 0"


# -- every kind of mail --------------------------------------------------------------------------------------------
def _events() -> list[dict]:
    base = {"game": "g_abc", "link": "/play/games/g_abc"}
    events = [{"type": "turn", "seat": 0, "deadline": "2026-12-01T10:00:00Z"},
              {"type": "reminder", "seat": 0, "before": 7200, "deadline": "2026-12-01T10:00:00Z"},
              {"type": "timeout", "seat": 1, "action": "auto_move", "deadline": "2026-12-01T10:00:00Z"},
              {"type": "timeout", "seat": 1, "action": "forfeit", "deadline": "2026-12-01T10:00:00Z"},
              {"type": "started", "seats": [{"seat": 0, "name": "ada"}, {"seat": 1}]},
              {"type": "finished", "ranks": [{"seat": 0, "rank": 1}, {"seat": 1, "rank": 2, "forfeited": True}]},
              {"type": "tournament_round", "tournament": "t_x", "round": 2, "bye": True},
              {"type": "tournament_round", "tournament": "t_x", "round": 2, "seat": 1},
              {"type": "offer", "seat": 1, "offer": "takeback", "move": 6, "position": 7},
              {"type": "resigned", "seat": 1, "goes_on": True}, {"type": "resigned", "seat": 1, "goes_on": False},
              {"type": "message", "seat": 1, "text": "gg\nwell played", "to": [0]},
              {"type": "message", "seat": 1, "text": "hello"},
              {"type": "seated", "seat": 1, "name": "Bea", "open_seats": 1, "full": False},
              {"type": "seated", "seat": 1, "name": "Bea", "open_seats": 0, "full": True},
              {"type": "left", "seat": 1, "open_seats": 1}, {"type": "cancelled"},
              {"type": "rematch", "seat": 0, "rematch_of": {"game": "g_old", "head": "ab" * 32}},
              {"type": "recovery", "seat": 1, "new_key": "K" * 43, "position": 12,
               "not_before": "2026-12-04T10:00:00.000Z"}]
    events += [{"type": "offer", "seat": 1, "offer": kind, "position": 7} for kind in ("draw", "end", "abort")]
    events += [{"type": "offer_answered", "seat": 0, "by": 1, "offer": kind, "outcome": outcome, "position": 7}
               for kind in ("draw", "takeback") for outcome in ("accepted", "declined", "withdrawn", "agreed",
                                                                  "lapsed")]
    return [{**base, **event} for event in events]


def test_every_kind_of_mail_is_rendered_in_german_and_french_with_no_english_sentence_left():
    from referee.notify.render import render_confirmation, render_event, render_webhook_disabled

    game = {"ruleset": {"name": "towerup"}, "seats": [{"seat": 0, "name": "ada"}, {"seat": 1, "name": "bo"}],
            "to_move": 0, "seq": 9, "head": "ab" * 32,
            "decisions": {"pending": {"kind": "draw", "seat": 1, "offer": 8}}}

    def sentences(text: str) -> set[str]:  # the lines in words: not commands, envelopes, quotes or ranks
        return {line for line in text.splitlines() if line.strip() and not line.startswith(("    ", "  1.", "  2."))
                and line not in ("-- ",)}

    rendered = {language: [render_event(event, base_url="https://r.example", game=game, language=language)
                           for event in _events()]
                + [(*render_confirmation(key="K", contact_id="c_x", code="abcdefgh12", link="https://r.example/c",
                                         language=language), ""),
                   (*render_webhook_disabled(webhook="https://h.example", failures=5, contact_id="c_x",
                                             language=language), "")]
                for language in SUPPORTED}
    for language in ("de", "fr"):
        for (subject, text, _html), (en_subject, en_text, _en_html) in zip(rendered[language], rendered["en"],
                                                                          strict=True):
            assert subject != en_subject, subject
            left = sentences(text) & sentences(en_text) - {"Confirmation code: abcdefgh12"}
            assert not left, (language, left)
