"""A tf.train feature list given values of another kind while building an Example
(``errors/families_feature_lists.py``): protobuf raises in the learner's line naming only
Python types; the entry names the list and the value, and its fix (a number wrapped in a
list, text encoded) builds the Example in the kernel."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(900)]


def test_a_number_unlisted_and_text_unencoded(kernel: KernelSession) -> None:
    runs_cleanly(kernel, "price = 12.5\ntitle = 'red bike'")
    error = failing(kernel, "cost = tf.train.Feature(float_list=tf.train.FloatList(value=price))")
    text = error["explanation"]
    assert "`price` is the single float 12.5, not a list" in text
    assert "`tf.train.FloatList` holds a list of floats" in text
    fix = fix_of(text)
    assert fix == "cost = tf.train.Feature(float_list=tf.train.FloatList(value=[price]))"
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "list(cost.float_list.value)") == [12.5]
    error = failing(
        kernel, "name_f = tf.train.Feature(bytes_list=tf.train.BytesList(value=[title]))"
    )
    assert "`[title]` is a list of 1 str values" in error["explanation"]
    fix = fix_of(error["explanation"])
    assert fix == "name_f = tf.train.Feature(bytes_list=tf.train.BytesList(value=[title.encode()]))"
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "name_f.bytes_list.value[0].decode()") == "red bike"
    # The right kinds stay quiet.
    runs_cleanly(kernel, "ok = tf.train.BytesList(value=[title.encode()])")


def test_text_given_to_an_integer_list_inside_a_helper(kernel: KernelSession) -> None:
    runs_cleanly(
        kernel,
        "def to_record(codes, year):\n"
        "    return tf.train.Example(features=tf.train.Features(feature={\n"
        "        'codes': tf.train.Feature(int64_list=tf.train.Int64List(value=codes)),\n"
        "        'year': tf.train.Feature(int64_list=tf.train.Int64List(value=[year]))}))",
    )
    error = failing(kernel, "rec = to_record('a7 b9', 2020)")
    text = error["explanation"]
    assert "`codes` is the string 'a7 b9' (text, 5 characters)" in text
    assert "has to become numbers" in text
    assert "the caller passed text" in text
    runs_cleanly(kernel, "rec = to_record([7, 9], 2020)")
