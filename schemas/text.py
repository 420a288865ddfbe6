"""The rule of a message's text, apart from the schemas: the verifier checks stored messages with it
(``referee.verify.messages``) and so imports it in the browser too (Pyodide), where marshmallow is not needed.
``schemas.common.MessageText`` checks the text of a message posted to the API with the same function."""

from __future__ import annotations

import unicodedata

MESSAGE_MAX = 2000


def message_text_problem(text: object) -> str | None:
    """What breaks the rules of a message's text, or None: 1–2,000 characters, NFC-normalised as sent (the
    text is signed, so the referee cannot normalise it), no control or format character (Unicode Cc, Cf)
    but the line feed, no lone surrogate. The verifier checks stored messages with the same function.

    >>> message_text_problem("gg\\nwell played") is None
    True
    >>> message_text_problem("a\\u202eb")
    'must not contain control or format characters other than line feeds (found U+202E at 1)'
    """
    if not isinstance(text, str):
        return "must be a string"
    if not 1 <= len(text) <= MESSAGE_MAX:
        return f"must have 1 to {MESSAGE_MAX} characters (has {len(text)})"
    for index, char in enumerate(text):
        if char != "\n" and unicodedata.category(char) in {"Cc", "Cf", "Cs"}:
            return (f"must not contain control or format characters other than line feeds "
                    f"(found U+{ord(char):04X} at {index})")
    if unicodedata.normalize("NFC", text) != text:
        return "must be NFC-normalised (normalise the text before signing it)"
    return None
