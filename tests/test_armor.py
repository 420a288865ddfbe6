"""Armored submissions (CONTRACT section 9): what mail clients do to a block must not stop it reading."""

from __future__ import annotations

import textwrap

from referee.notify.armor import BEGIN, END, armor, find_blocks
from referee.protocol.signing import generate_key, sign

KEY = generate_key()
ENVELOPE = {"v": 1, "ctx": "referee/move", "game": "g_abcdefghijklmnop", "seat": 1, "seq": 12,
            "prev": "ab" * 32, "move": {"type": "bid", "amount": 3}}
SUBMISSION = {"envelope": ENVELOPE, "sig": sign(KEY, ENVELOPE)}


def test_a_block_is_wrapped_at_64_columns_and_reads_back():
    block = armor(SUBMISSION)
    lines = block.splitlines()
    assert lines[0] == BEGIN and lines[-1] == END and all(len(line) <= 64 for line in lines[1:-1])
    assert [b.submission for b in find_blocks(block)] == [SUBMISSION]


def test_quoting_crlf_rewrapping_and_indentation_are_ignored():
    body = "".join(armor(SUBMISSION).splitlines()[1:-1])
    rewrapped = "\r\n".join([BEGIN, *textwrap.wrap(body, 37), END])
    quoted = "\n".join(">> " + line for line in rewrapped.split("\r\n"))
    mail = f"On Monday you wrote:\r\n{quoted}\r\n\r\n-- \r\nsent from my phone"
    assert [b.submission for b in find_blocks(mail)] == [SUBMISSION]
    indented = "\n".join("    " + line for line in armor(SUBMISSION).splitlines())
    assert [b.submission for b in find_blocks(indented)] == [SUBMISSION]


def test_several_blocks_are_found_in_order_and_broken_ones_say_why():
    other = {**SUBMISSION, "sig": "x"}
    tampered = armor(SUBMISSION).replace("e", "%", 1)
    text = armor(SUBMISSION) + "\nand\n" + armor(other) + tampered + BEGIN + "\nabc\n"
    blocks = find_blocks(text)
    assert [b.submission for b in blocks[:2]] == [SUBMISSION, other]
    assert blocks[2].error[0] == "mail/broken_block" and blocks[3].error[0] == "mail/broken_block"
    assert "END" in blocks[3].error[1]


def test_text_without_a_block_has_none():
    assert find_blocks("Dear referee, I pass.\n> -----BEGIN something else-----") == []
