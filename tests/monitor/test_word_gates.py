"""The substring tests in front of the monitor's gate patterns never change a search."""

from __future__ import annotations

import importlib
import pkgutil
import re

import jupyterlab_tfcoach.monitor as monitor
from jupyterlab_tfcoach.monitor.word_gates import WordGate, required_literals, word_gate

CELLS = [
    "",
    "pass",
    "scores = model.predict(x_val)\nlabels = np.argmax(scores, axis=1)\n",
    "LOSS = keras.losses.BinaryCrossentropy()\nhist = net.fit(a, b, epochs=3)\n",
    "for step in range(10):\n    with tf.GradientTape() as tape:\n        y = w * x\n",
    "kernel_len = 0.5\nk = tf.exp(-d2 / kernel_len)\n",
    "held = (X_te - mu) / sd\n",
    "# ſcale and K (kelvin) are not ASCII\nſtd = 1\n",
    "Length = 3; BANDWIDTH = 2",
]


def _gate_patterns() -> list[re.Pattern[str]]:
    found: dict[int, re.Pattern[str]] = {}
    for info in pkgutil.walk_packages(monitor.__path__, monitor.__name__ + "."):
        for value in vars(importlib.import_module(info.name)).values():
            if isinstance(value, WordGate):
                value = value.pattern
            if isinstance(value, re.Pattern) and isinstance(value.pattern, str):
                found[id(value)] = value
    return list(found.values())


def test_every_monitor_pattern_finds_the_same_match_behind_its_gate() -> None:
    patterns = _gate_patterns()
    assert len(patterns) > 100
    for pattern in patterns:
        gate = WordGate(pattern)
        for cell in CELLS:
            plain, gated = pattern.search(cell), gate.search(cell)
            assert (plain and plain.span()) == (gated and gated.span()), pattern.pattern


def test_the_literals_read_from_a_pattern() -> None:
    assert required_literals(re.compile(r"length|\bls\b|bandwidth")) == (
        frozenset({"length", "ls", "bandwidth"}),
        False,
    )
    assert required_literals(re.compile(r"(?i)hazard|surviv")) == (
        frozenset({"hazard", "surviv"}),
        True,
    )
    # A class of characters alone, or an optional part, requires no literal.
    assert required_literals(re.compile(r"[|&]")) is None
    assert required_literals(re.compile(r"(?:ab)?\d")) is None


def test_a_cell_without_the_words_is_not_searched_and_other_methods_are_the_patterns() -> None:
    gate = word_gate(r"\bsqrt\s*\(")
    assert not gate.could_match("y = x ** 0.5")
    assert gate.could_match("y = tf.sqrt (x)")
    assert gate.search("y = tf.sqrt (x)") is not None
    assert [m.group() for m in gate.finditer("sqrt(a) + sqrt(b)")] == ["sqrt(", "sqrt("]
    # Case-insensitive patterns test the lowered text; text outside ASCII always searches.
    folded = word_gate(r"(?i)kelvin")
    assert folded.search("KELVIN") is not None
    assert folded.could_match("\u212aelvin") and folded.search("\u212aelvin") is not None
    assert word_gate(gate) is gate
