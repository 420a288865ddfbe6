"""The worked example of docs/randomness.md is computed by the real code: every number in it is checked
here, against ``referee.games.randomness`` and against a recomputation with nothing but ``hashlib``, so
the document cannot drift from the generator."""

from __future__ import annotations

import contextlib
import hashlib
import io
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from referee.games.randomness import Rng, derive_game_seed, recorded_game_seed

DOC = Path(__file__).resolve().parents[2] / "docs" / "randomness.md"

SERVER_SEED = bytes(range(32))
GAME_ID = "g_demo"
ENTROPIES = [b"\xaa" * 32, b"\xbb" * 32]
ITEMS = ["A", "B", "C", "D", "E"]


def by_hand() -> dict[str, object]:
    """The example recomputed from the documented byte layout with hashlib only."""
    game_seed = hashlib.sha256(b"referee/seed/v1" + SERVER_SEED + GAME_ID.encode() + b"".join(ENTROPIES)).digest()
    label = b"deck"
    block_input = (b"referee/rng/v1" + b"\x00" + game_seed + len(label).to_bytes(2, "big") + label
                   + (0).to_bytes(8, "big"))
    block0 = hashlib.sha256(block_input).digest()
    u64s = [int.from_bytes(block0[k:k + 8], "big") for k in range(0, 32, 8)]
    items, steps, draws = list(ITEMS), [], iter(u64s)
    for i in range(len(items) - 1, 0, -1):
        n = i + 1
        limit = 2**64 - (2**64 % n)
        x = next(draws)
        assert x < limit  # no rejection happens in this example (the doc says so)
        j = x % n
        items[i], items[j] = items[j], items[i]
        steps.append((i, n, x, limit, j, " ".join(items)))
    return {"commitment": hashlib.sha256(SERVER_SEED).hexdigest(), "game_seed": game_seed,
            "block_input": block_input, "block0": block0, "u64s": u64s, "steps": steps, "shuffled": items,
            "recorded": hashlib.sha256(b"referee/recorded-seed/v1" + GAME_ID.encode()).digest()}


def expected_lines() -> list[str]:
    """Lines that must appear verbatim in the document."""
    ex = by_hand()
    lines = [
        f"commitment  = {ex['commitment']}",
        f"game_seed   = {ex['game_seed'].hex()}",
        f"block input = {ex['block_input'].hex()}",
        f"block_0     = {ex['block0'].hex()}",
    ]
    lines += [f"u64[{k}] = 0x{x:016x} = {x}" for k, x in enumerate(ex["u64s"])]
    for i, n, x, limit, j, after in ex["steps"]:
        lines.append(f"| {i} | below({n}) | {x} | {limit} | {x} mod {n} = {j} | swap {i} and {j} | {after} |")
    lines.append(f"shuffle(A B C D E) = {' '.join(ex['shuffled'])}")
    lines.append(f"recorded seed of g_demo = {ex['recorded'].hex()}")
    return lines


def test_the_by_hand_recomputation_is_the_real_generator():
    ex = by_hand()
    assert derive_game_seed(SERVER_SEED, GAME_ID, ENTROPIES) == ex["game_seed"]
    rng = Rng(ex["game_seed"], "deck")
    assert [rng.below(2**63) for _ in range(4)] == [x % 2**63 for x in ex["u64s"]]
    assert Rng(ex["game_seed"], "deck").shuffle(ITEMS) == ex["shuffled"]
    assert recorded_game_seed(GAME_ID) == ex["recorded"]


@pytest.mark.parametrize("line", expected_lines())
def test_doc_shows_the_numbers_of_the_real_code(line):
    assert line in DOC.read_text(encoding="utf-8"), f"docs/randomness.md lacks or changed: {line}"


def test_doc_shell_commands_give_the_documented_hashes(tmp_path):
    """The ``sha256sum`` recipes in the document, run as written (where a POSIX shell with xxd exists)."""
    if shutil.which("xxd") is None or shutil.which("sha256sum") is None or shutil.which("bash") is None:
        pytest.skip("xxd/sha256sum not installed")
    text = DOC.read_text(encoding="utf-8")
    blocks = re.findall(r"```sh\n(.*?)```", text, flags=re.S)
    assert len(blocks) >= 2
    ex = by_hand()
    outputs = []
    for block in blocks:
        run = subprocess.run(["bash", "-c", block], capture_output=True, text=True, cwd=tmp_path, check=True)
        outputs.append(run.stdout)
    joined = "".join(outputs)
    for digest in (ex["commitment"], ex["game_seed"].hex(), ex["block0"].hex()):
        assert digest in joined


def test_doc_python_recipe_prints_the_documented_numbers():
    code = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.S)
    assert len(code) == 1
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(code[0], {})
    ex = by_hand()
    assert out.getvalue().splitlines() == [ex["game_seed"].hex(), str(ex["shuffled"])]
