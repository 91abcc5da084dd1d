"""A small labelled subset cut from data stored class by class (issue #25, silent bugs):
``feats[:n], tags[:n]`` of rows sorted by label hold one class only, and a model trained
on them can learn nothing else. A slice under a tenth of the rows is told by
``symptoms/sorted_splits.py`` when it holds one class and its inputs are cut the same way
beside it; the printed shuffle, run first, gives the subset several classes. Look-alikes
stay silent: the same slice of the labels alone (a look), a subset of a few rows, a
subset of data stored shuffled."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.harness import KernelSession, checked_report, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(300)]

SECTION = "keras-validation-data"
DATA = (
    "np.random.seed(11)\n"
    "feats = np.random.normal(size=(600, 5)).astype('float32')\n"
    "tags = np.repeat(np.array(['cat', 'dog', 'owl']), [200, 150, 250])\n"
)
CELL = "n_small = 20\nfeats_l, tags_l = feats[:n_small], tags[:n_small]\n"


def split_notes(kernel: KernelSession, code: str) -> list[str]:
    report: dict[str, Any] = checked_report(run(kernel, code))
    return [n["text"] for n in report["notes"] if (n["course"] or {}).get("section") == SECTION]


def test_a_labelled_subset_of_one_class(kernel: KernelSession) -> None:
    run(kernel, DATA)
    [text] = split_notes(kernel, CELL)
    assert value_of(kernel, "sorted(set(tags_l.tolist()))") == ["cat"]  # the symptom
    assert text.startswith(
        "`tags` is sorted by class, so `tags[:n_small]` (line 2 of this cell) holds class "
        "cat only: classes dog and owl never appear in that part."
    ), text
    assert "That part is `tags_l` and `feats_l`." in text, text
    fix = re.findall(r"`([^`]+)`", text)[-1]
    assert fix == "perm = np.random.permutation(len(tags)); feats, tags = feats[perm], tags[perm]"
    run(kernel, DATA)
    assert split_notes(kernel, fix + "\n" + CELL) == []
    assert len(value_of(kernel, "sorted(set(tags_l.tolist()))")) > 1


def test_look_alikes_stay_silent(kernel: KernelSession) -> None:
    run(kernel, DATA)
    assert split_notes(kernel, "first_tags = tags[:20]\n") == []
    assert split_notes(kernel, "f3, t3 = feats[:3], tags[:3]\n") == []
    run(kernel, "mixed = np.random.permutation(600)\nfeats, tags = feats[mixed], tags[mixed]\n")
    assert split_notes(kernel, CELL) == []
