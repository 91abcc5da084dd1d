"""Text stripped to lower-case letters before it is lower-cased (issue #25, silent bugs):
a ``tf.strings`` standardiser and a ``re.sub`` cleaner whose class keeps ``a-z`` only,
followed by a lower-casing, are told with the replacement given lower-cased text; the fix
runs in the kernel and the capitals survive as lower-case letters. Lower-casing first, a
class with ``A-Z``, an ignore-case pattern and a cleaner that never lower-cases stay
silent."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.harness import KernelSession, KernelSetup, checked_report, run

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

KERNEL = KernelSetup(
    before_load="import numpy as np\nimport tensorflow as tf\nimport keras\n", after_load=""
)


def case_notes(report: dict[str, Any]) -> list[str]:
    return [note["text"] for note in report["notes"] if "not lower-cased" in note["text"]]


def fix_of(text: str) -> str:
    return re.findall(r"`([^`]+)`", text.split("before stripping it: ", 1)[1])[0]


def test_a_tensorflow_standardiser(kernel: KernelSession) -> None:
    cell = """def squash(batch):
    kept = tf.strings.regex_replace(batch, "[^a-z0-9 ]", "")
    return tf.strings.lower(kept)

out = squash(tf.constant(["Hello World 42", "GOOD"]))
"""
    notes = case_notes(checked_report(run(kernel, cell)))
    assert len(notes) == 1, notes
    assert notes[0].startswith(
        '`tf.strings.regex_replace(batch, "[^a-z0-9 ]", "")` (line 2 in `squash`) deletes '
        "every character outside `[a-z0-9 ]` before `tf.strings.lower` (line 3)"
    )
    fix = fix_of(notes[0])
    assert fix == 'tf.strings.regex_replace(tf.strings.lower(batch), "[^a-z0-9 ]", "")'
    fixed = cell.replace('tf.strings.regex_replace(batch, "[^a-z0-9 ]", "")', fix)
    assert case_notes(checked_report(run(kernel, fixed))) == []
    checked_report(run(kernel, 'assert out.numpy().tolist() == [b"hello world 42", b"good"]'))


def test_a_python_cleaner_in_a_comprehension(kernel: KernelSession) -> None:
    cell = """import re
reviews = ["Loved It!", "MEH."]
tokens = [re.sub(r"[^a-z\\s]", "", r).lower().split() for r in reviews]
"""
    notes = case_notes(checked_report(run(kernel, cell)))
    assert len(notes) == 1, notes
    assert "before `.lower()` (line 3)" in notes[0]
    fix = fix_of(notes[0])
    assert fix == 're.sub(r"[^a-z\\s]", "", r.lower())'
    fixed = cell.replace('re.sub(r"[^a-z\\s]", "", r)', fix)
    assert case_notes(checked_report(run(kernel, fixed))) == []
    checked_report(run(kernel, 'assert tokens == [["loved", "it"], ["meh"]]'))


def test_look_alikes_stay_silent(kernel: KernelSession) -> None:
    cell = """import re
def tidy(s):
    s = s.lower()
    return re.sub(r"[^a-z0-9\\s]", "", s)
def tidy_cased(s):
    return re.sub(r"[^a-zA-Z\\s]", "", s).lower()
def tidy_flagged(s):
    return re.sub(r"(?i)[^a-z\\s]", "", s).lower()
def letters_only(s):
    return re.sub(r"[^a-z]", "", s)
def squash_ok(batch):
    return tf.strings.regex_replace(tf.strings.lower(batch), "[^a-z ]", "")
"""
    assert case_notes(checked_report(run(kernel, cell))) == []
