"""A KeyError from the learner's own lookup dict of strings (``errors/families_lookup_key
.py``): ``[word_ids[w] for w in text.split()]`` inside the learner's function, given a
word the table was never built with. Python's message is only the key; the entry names the
dict, its size and keys, the key missing, and the key in another case when the table has
it. No fix is printed (cleaning the input or extending the table is the learner's choice);
a lookup with ``.get`` and a table holding every key get no entry."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, KernelSetup
from tests.harness import error_of_failing_cell as failing
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

KERNEL = KernelSetup(after_load="import numpy as np\nimport tensorflow as tf")

TABLE = """word_ids = {w: i for i, w in enumerate(["red", "green", "blue", "sky", "is"])}

def encode(text):
    return [word_ids[w] for w in text.split()]
"""


def test_a_word_in_another_case(kernel: KernelSession) -> None:
    runs_cleanly(kernel, TABLE)
    error = failing(kernel, "ids = encode('Sky is blue')")
    text = error["explanation"]
    assert "`word_ids[w]` asked `word_ids` for the key `'Sky'`" in text
    assert "a dict of 5 string keys ('red', 'green', 'blue', 'sky', 'is')" in text
    assert "It has `'sky'`" in text
    # The correct look-alikes stay quiet.
    runs_cleanly(kernel, "ids = encode('Sky is blue'.lower())")
    runs_cleanly(kernel, "ids = [word_ids.get(w, -1) for w in 'Sky is blue'.split()]")


def test_a_character_never_in_the_table(kernel: KernelSession) -> None:
    runs_cleanly(kernel, "to_index = {c: i for i, c in enumerate('acgt')}")
    error = failing(kernel, "codes = []\nfor base in 'gattnc':\n    codes.append(to_index[base])")
    text = error["explanation"]
    assert "`to_index[base]` asked `to_index` for the key `'n'`" in text
    assert "never built with" in text
