"""Printed fixes the fix auditor (benchmarks/audit_printed_fixes.py) found wrong, repaired
by mechanism (issue #25): each fix is applied to the cell as a learner would, the cell runs
again in the kernel and gives the right result; the correct look-alike gets no entry.

- a save path held by a name or made by an expression is fixed where it is made, not
  replaced by its value written out (a literal the notebook never had);
- a float stored into an integer variable (``step.assign_add(n / 32)``) is made whole
  (``//``), never fixed by casting the variable (a tensor with no ``assign_add``);
- one example's values by input name, some of them strings, wrapped so Keras takes them
  (``dtype=object``: a NumPy unicode array is a dtype Keras refuses).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.harness import KernelSession, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600)]


def test_a_save_path_made_elsewhere_is_fixed_where_it_is_made(
    kernel: KernelSession, tmp_path: Path
) -> None:
    runs_cleanly(
        kernel,
        f"""import os
scratch = {str(tmp_path)!r}
scorer = keras.Sequential([keras.Input((4,)), keras.layers.Dense(2)])
snapshot = os.path.join(scratch, "scorer_snap.h5")""",
    )
    # The name is read by the failing call only: its assignment is the fix.
    text = failing(kernel, "scorer.save_weights(snapshot)")["explanation"]
    assert "the path is `snapshot`: give it the new name where it is made" in text
    fix = fix_of(text)
    assert fix == 'snapshot = os.path.join(scratch, "scorer_snap.weights.h5")'
    runs_cleanly(kernel, f"{fix}\nscorer.save_weights(snapshot)")
    assert (tmp_path / "scorer_snap.weights.h5").exists()
    # The path made on the failing line: only its last literal changes.
    cell = 'scorer.save_weights(os.path.join(scratch, "pre_" + "scorer.h5"))\nprint("saved")'
    fix = fix_of(failing(kernel, cell)["explanation"])
    assert fix == 'scorer.save_weights(os.path.join(scratch, "pre_" + "scorer.weights.h5"))'
    runs_cleanly(kernel, cell.replace(cell.splitlines()[0], fix))
    assert (tmp_path / "pre_scorer.weights.h5").exists()
    # Look-alike: the right extension made by an expression saves with no entry.
    runs_cleanly(kernel, 'scorer.save_weights(os.path.join(scratch, "ok.weights.h5"))')


def test_a_float_stored_into_an_integer_variable_is_made_whole(kernel: KernelSession) -> None:
    runs_cleanly(
        kernel,
        """class Tally(tf.Module):
    def __init__(self):
        super().__init__()
        self.batches = tf.Variable(0, dtype=tf.int64)
tally = Tally()
chunk = np.zeros((96, 5), dtype="float32")
pages = tf.Variable(0, dtype=tf.int32)""",
    )
    cell = "for _ in range(3):\n    tally.batches.assign_add(chunk.shape[0] / 32)"
    text = failing(kernel, cell)["explanation"]
    assert "`tally.batches` is an integer variable" in text
    assert "tf.cast" not in text
    fix = fix_of(text)
    assert fix == "tally.batches.assign_add(chunk.shape[0] // 32)"
    runs_cleanly(kernel, "tally.batches.assign(0)\n" + cell.replace(cell.splitlines()[1][4:], fix))
    assert value_of(kernel, "int(tally.batches)") == 9
    # A plain variable, assign: the same.
    fix = fix_of(failing(kernel, "pages.assign(len(chunk) / 8)")["explanation"])
    assert fix == "pages.assign(len(chunk) // 8)"
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "int(pages)") == 12
    # Not a division: the rule, no cast of the variable.
    text = failing(kernel, "pages.assign_add(0.5)")["explanation"]
    assert "must be a whole number" in text and "Fix: " not in text
    # Look-alike: a whole count stored, no entry.
    runs_cleanly(kernel, "pages.assign_add(len(chunk) // 8)")


def test_one_examples_strings_by_input_name_are_kept_as_text(kernel: KernelSession) -> None:
    runs_cleanly(
        kernel,
        """color_in = keras.Input((1,), dtype="string", name="color")
size_in = keras.Input((1,), name="size")
colors = keras.layers.StringLookup(vocabulary=["red", "blue"], output_mode="one_hot")
joined = keras.layers.Concatenate()([keras.layers.Flatten()(colors(color_in)), size_in])
shop = keras.Model({"color": color_in, "size": size_in}, keras.layers.Dense(1)(joined))
item = {"color": "blue", "size": 2.5}""",
    )
    text = failing(kernel, "guess = shop.predict(item, verbose=0)")["explanation"]
    fix = fix_of(text)
    assert fix == (
        "guess = shop.predict({name: np.array([value], dtype=object if isinstance(value, str) "
        "else None) for name, value in item.items()}, verbose=0)"
    )
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "list(guess.shape)") == [1, 1]
    # The values written in the call: the string alone is kept as text.
    text = failing(kernel, 'guess = shop.predict({"color": "red", "size": 1.0}, verbose=0)')[
        "explanation"
    ]
    fix = fix_of(text)
    assert fix == (
        'guess = shop.predict({"color": np.array(["red"], dtype=object), '
        '"size": np.array([1.0])}, verbose=0)'
    )
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "list(guess.shape)") == [1, 1]
    # Look-alike: a batch of one per input, no entry.
    runs_cleanly(
        kernel,
        'shop.predict({"color": np.array(["red"], dtype=object), "size": np.array([1.0])}, '
        "verbose=0)",
    )


def test_an_operand_read_the_same_way_on_a_later_line_is_cast_there_too(
    kernel: KernelSession,
) -> None:
    runs_cleanly(
        kernel,
        """proj = tf.Variable(tf.ones((3, 2)))
sample = {"feats": np.arange(12.0).reshape(4, 3), "target": np.zeros((4, 2))}
class Clock:
    pass
clock = Clock()
clock.ticks = tf.range(5)
gain = tf.constant(0.5)""",
    )
    cell = (
        'first = tf.matmul(sample["feats"], proj)\n'
        'gap = tf.matmul(sample["feats"], proj) - sample["target"]'
    )
    text = failing(kernel, cell)["explanation"]
    assert 'The cell reads `sample["feats"]` the same way again on line 2' in text
    fixes = re.findall(r"`([^`]+)`", text.split("Fix: ", 1)[1])
    assert fixes == [
        'first = tf.matmul(tf.cast(sample["feats"], tf.float32), proj)',
        'gap = tf.matmul(tf.cast(sample["feats"], tf.float32), proj) - sample["target"]',
    ]
    runs_cleanly(kernel, "\n".join(fixes))
    assert value_of(kernel, "gap.numpy()[0].tolist()") == [3.0, 3.0]
    # An attribute, integer against float, read again inside a call on line 2.
    cell = "ramp = gain * clock.ticks\nwarm = tf.minimum(1.0, gain * clock.ticks / 4)"
    text = failing(kernel, cell)["explanation"]
    fixes = re.findall(r"`([^`]+)`", text.split("Fix: ", 1)[1])
    assert fixes == [
        "ramp = gain * tf.cast(clock.ticks, tf.float32)",
        "warm = tf.minimum(1.0, gain * tf.cast(clock.ticks, tf.float32) / 4)",
    ]
    runs_cleanly(kernel, "\n".join(fixes))
    assert value_of(kernel, "warm.numpy().tolist()") == [0.0, 0.125, 0.25, 0.375, 0.5]
    # Read once (its shape only below): the cast at the failing place stands alone.
    text = failing(kernel, 'one = tf.matmul(sample["feats"], proj)\nprint(sample["feats"].shape)')[
        "explanation"
    ]
    assert text.endswith(
        'Cast `sample["feats"]` to float32: '
        '`tf.matmul(tf.cast(sample["feats"], tf.float32), proj)`.'
    )
    # Look-alike: cast in both places, no entry.
    runs_cleanly(kernel, "\n".join(fixes))


def spans_after_fix(text: str) -> list[str]:
    return re.findall(r"`([^`]+)`", text.split("Fix: ", 1)[1])


def test_every_line_that_fails_the_same_way_is_in_the_fix(
    kernel: KernelSession, tmp_path: Path
) -> None:
    runs_cleanly(
        kernel,
        f"""import os
os.chdir({str(tmp_path)!r})
feed = keras.Input((4,))
heads = keras.Model(feed, {{"level": keras.layers.Dense(1, name="level")(feed),
                            "group": keras.layers.Dense(3, name="group")(feed)}})
probe = np.ones((5, 4), dtype="float32")
flat = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])""",
    )
    # A dict read by position on two lines: both lines read by key.
    cell = "got = heads.predict(probe, verbose=0)\nlevels = got[0]\ngroups = got[1].argmax(axis=-1)"
    text = failing(kernel, cell)["explanation"]
    fixes = spans_after_fix(text)
    assert fixes == ['levels = got["level"]', 'groups = got["group"].argmax(axis=-1)']
    lines = cell.splitlines()
    runs_cleanly(kernel, "\n".join([lines[0], *fixes]))
    assert value_of(kernel, "[list(levels.shape), list(groups.shape)]") == [[5, 1], [5]]
    # A save and the load of the same path below it: both paths renamed.
    cell = 'flat.save("flat_run")\ncopy = keras.models.load_model("flat_run")'
    fixes = spans_after_fix(failing(kernel, cell)["explanation"])
    assert fixes == [
        'flat.save("flat_run.keras")',
        'copy = keras.models.load_model("flat_run.keras")',
    ]
    runs_cleanly(kernel, "\n".join(fixes))
    assert value_of(kernel, "copy.count_params()") == 8
    # Look-alike: keys and a .keras path, no entry.
    runs_cleanly(kernel, 'lv = got["level"]\nflat.save("ok.keras")')


def test_no_weights_only_save_for_a_model_that_was_never_built(kernel: KernelSession) -> None:
    runs_cleanly(
        kernel,
        """class Duo(keras.Model):
    def __init__(self, first, second):
        super().__init__()
        self.first = first
        self.second = second

    def train_step(self, data):
        return {}
duo = Duo(keras.layers.Dense(2), keras.layers.Dense(2))""",
    )
    text = failing(kernel, 'duo.save("duo.keras")')["explanation"]
    assert "`Duo` must say them in a `get_config` method" in text
    assert "save_weights" not in text
    # Built, the weights-only save is offered and runs.
    runs_cleanly(
        kernel,
        """class Solo(keras.Model):
    def __init__(self, width):
        super().__init__()
        self.inner = keras.layers.Dense(width)

    def call(self, x):
        return self.inner(x)
solo = Solo(2)
solo(np.ones((1, 3)))""",
    )
    fix = fix_of(failing(kernel, 'solo.save("solo_run.keras")')["explanation"])
    assert fix == 'solo.save_weights("solo_run.weights.h5")'
    runs_cleanly(kernel, fix)
