"""Raising mistakes read from the failing line and its values, not from a scenario
(issue #25): a name missing at a library module's top level but present in a submodule
(``families_api_names.py``), a required argument shown with its documented example value
(``documented_examples.py``), a Python list indexed by a tensor of positions
(``families_container_index.py``), a constant key the learner's dict holds in another
case (``families_lookup_key.py``). Each printed fix runs in the kernel and gives the
right result; the correct look-alike gets no entry."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, KernelSetup, checked_report, run, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(400)]

KERNEL = KernelSetup(after_load="import numpy as np\nimport tensorflow as tf\nimport keras")


def test_a_function_that_lives_in_a_submodule(kernel: KernelSession) -> None:
    runs_cleanly(kernel, "heights = tf.constant([[1.0, 3.0], [2.0, 6.0]])")
    error = failing(kernel, "spread = tf.reduce_variance(heights, axis=0)")
    text = error["explanation"]
    assert "`tensorflow.math.reduce_variance`" in text
    fix = fix_of(text)
    assert fix == "spread = tf.math.reduce_variance(heights, axis=0)"
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "spread.numpy().tolist()") == [0.25, 2.25]
    # Several submodules holding the same function are one answer.
    error = failing(kernel, "unit = tf.l2_normalize(heights, axis=1)")
    fix = fix_of(error["explanation"])
    assert fix is not None and fix.startswith("unit = tf.")
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "round(float(tf.norm(unit[0])), 4)") == 1.0
    runs_cleanly(kernel, "fine = tf.math.reduce_variance(heights)")


def test_a_keras_class_written_without_its_submodule(kernel: KernelSession) -> None:
    error = failing(kernel, "stopper = keras.EarlyStopping(patience=2)")
    fix = fix_of(error["explanation"])
    assert fix == "stopper = keras.callbacks.EarlyStopping(patience=2)"
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "stopper.patience") == 2


def test_a_required_device_gets_its_documented_example(kernel: KernelSession) -> None:
    error = failing(kernel, "single = tf.distribute.OneDeviceStrategy()")
    text = error["explanation"]
    assert "OneDeviceStrategy(device='/gpu:0')" in text
    fix = fix_of(text)
    assert fix == 'single = tf.distribute.OneDeviceStrategy(device="/cpu:0")'
    runs_cleanly(kernel, fix)
    runs_cleanly(kernel, "with single.scope():\n    w = tf.Variable(2.0)")
    assert value_of(kernel, "float(w)") == 2.0


def test_a_required_size_gets_an_example_and_no_fix(kernel: KernelSession) -> None:
    # The documented value fits the documentation's data, not the learner's: said, not
    # printed as a fix.
    error = failing(kernel, "repeat = keras.layers.RepeatVector()")
    text = error["explanation"]
    assert "`RepeatVector(n=3)`" in text
    assert "Fix:" not in text
    runs_cleanly(kernel, "repeat = keras.layers.RepeatVector(4)")


def test_a_list_indexed_by_a_tensor_of_positions(kernel: KernelSession) -> None:
    runs_cleanly(
        kernel,
        "colours = ['red', 'green', 'blue', 'cyan']\n"
        "votes = tf.constant([0.1, 0.7, 0.05, 0.9])\n"
        "ranked = tf.argsort(votes, direction='DESCENDING')[:2]",
    )
    error = failing(kernel, "winners = colours[ranked]")
    text = error["explanation"]
    assert "`colours` is a Python list of 4 items" in text
    fix = fix_of(text)
    assert fix == "winners = [colours[i] for i in ranked.numpy()]"
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "winners") == ["cyan", "green"]
    runs_cleanly(kernel, "first = colours[int(ranked[0])]")


def test_a_tuple_indexed_by_a_numpy_array_inside_a_call(kernel: KernelSession) -> None:
    runs_cleanly(
        kernel,
        "grades = ('low', 'mid', 'high')\nscores = np.array([2.5, 0.2, 1.1])\n"
        "order = np.argsort(scores)",
    )
    error = failing(kernel, "print(grades[order])")
    fix = fix_of(error["explanation"])
    assert fix == "print([grades[i] for i in order])"
    runs_cleanly(kernel, "picked = " + fix.removeprefix("print(").removesuffix(")"))
    assert value_of(kernel, "picked") == ["mid", "high", "low"]


def test_a_constant_key_the_table_holds_in_another_case(kernel: KernelSession) -> None:
    runs_cleanly(kernel, "token_ids = {'[pad]': 0, 'river': 1, 'stone': 2}")
    error = failing(kernel, 'print("river ->", token_ids["River"])')
    text = error["explanation"]
    assert "It has `'river'`" in text
    fix = fix_of(text)
    assert fix == 'print("river ->", token_ids["river"])'
    runs_cleanly(kernel, fix)
    runs_cleanly(kernel, "code = token_ids['stone']")
    # Another spelling case: an upper-case table asked in lower case.
    runs_cleanly(kernel, "SYMBOLS = {'NA': 11, 'CL': 17}")
    error = failing(kernel, "charge = SYMBOLS['cl'] - 1")
    fix = fix_of(error["explanation"])
    assert fix == "charge = SYMBOLS['CL'] - 1"
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "charge") == 16
    # Keys read from a NumPy array are NumPy strings (``np.str_``), still strings.
    runs_cleanly(kernel, "index_of = {w: i for i, w in enumerate(np.array(['the', 'fox']))}")
    error = failing(kernel, "fox_id = index_of['Fox']")
    fix = fix_of(error["explanation"])
    assert fix == "fox_id = index_of['fox']"
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "fox_id") == 1
    # A constant key with no other case is a typo or a missing entry: no such reading.
    error = checked_report(run(kernel, "other = SYMBOLS['K']", ok=False))["error"]
    assert error is None or "another case" not in error["explanation"]


def test_a_step_counter_asked_of_a_dataset_of_pairs(kernel: KernelSession) -> None:
    runs_cleanly(
        kernel,
        "feats = np.arange(24, dtype='float32').reshape(8, 3)\n"
        "target = np.arange(8, dtype='float32')\n"
        "pairs_ds = tf.data.Dataset.from_tensor_slices((feats, target)).batch(4)\n"
        "total = 0.0",
    )
    cell = "for batch_no, (fb, tb) in pairs_ds:\n    total += float(tf.reduce_sum(tb))"
    error = failing(kernel, cell)
    text = error["explanation"]
    assert "`batch_no`" in text and "step number" in text
    fix = fix_of(text)
    assert fix == "enumerate(pairs_ds)"
    runs_cleanly(kernel, "total = 0.0\n" + cell.replace("in pairs_ds", f"in {fix}"))
    assert value_of(kernel, "total") == 28.0


def test_a_step_counter_asked_of_a_zip(kernel: KernelSession) -> None:
    runs_cleanly(
        kernel,
        "starts = np.zeros((3, 2))\nends = np.ones((3, 4))\nseen = []",
    )
    cell = "for k, (s, e) in zip(starts, ends):\n    seen.append(k)"
    error = failing(kernel, cell)
    fix = fix_of(error["explanation"])
    assert fix == "enumerate(zip(starts, ends))"
    runs_cleanly(kernel, cell.replace("in zip(starts, ends)", f"in {fix}"))
    assert value_of(kernel, "seen") == [0, 1, 2]


def test_one_output_of_two_columns_unpacked_into_two_names(kernel: KernelSession) -> None:
    runs_cleanly(
        kernel,
        "keras.utils.set_random_seed(1)\n"
        "bounds = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])\n"
        "grid = np.ones((5, 3), dtype='float32')",
    )
    error = failing(kernel, "low, high = bounds(grid)")
    text = error["explanation"]
    assert "`bounds` has one output, of shape (None, 2)" in text
    fix = fix_of(text)
    assert fix == "low, high = tf.unstack(bounds(grid), axis=-1)"
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "[list(low.shape), list(high.shape)]") == [[5], [5]]
    # The same model through predict, three outputs asked of a two-column output: no
    # columns reading (the counts differ), and a correct split stays silent.
    cell = "lo, mid, hi = bounds.predict(grid, verbose=0)"
    error = checked_report(run(kernel, cell, ok=False))["error"]
    assert error is None or "tf.unstack" not in error["explanation"]
    runs_cleanly(kernel, "pred = bounds.predict(grid, verbose=0)\nlo, hi = pred[:, 0], pred[:, 1]")


def test_predict_of_three_columns_unpacked(kernel: KernelSession) -> None:
    runs_cleanly(
        kernel,
        "inp = keras.Input((2,))\n"
        "rgb = keras.Model(inp, keras.layers.Dense(3, activation='sigmoid')(inp))\n"
        "pixels = np.zeros((7, 2), dtype='float32')",
    )
    error = failing(kernel, "r, g, b = rgb.predict(pixels, verbose=0)")
    fix = fix_of(error["explanation"])
    assert fix == "r, g, b = tf.unstack(rgb.predict(pixels, verbose=0), axis=-1)"
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "[float(v) for v in r[:2]]") == [0.5, 0.5]


def test_a_keyword_of_another_layer_class(kernel: KernelSession) -> None:
    runs_cleanly(
        kernel,
        "seq_in = keras.Input((6, 4))\nrec = keras.layers.LSTM(5, return_sequences=True)(seq_in)",
    )
    error = failing(kernel, "head = keras.layers.Dense(2, return_sequences=True)")
    text = error["explanation"]
    assert "`return_sequences` is a keyword of `LSTM`" in text
    fix = fix_of(text)
    assert fix == "head = keras.layers.Dense(2)"
    runs_cleanly(kernel, fix)
    runs_cleanly(kernel, "out = head(rec)\nshape = list(out.shape)")
    assert value_of(kernel, "shape") == [None, 6, 2]


def test_a_pooling_keyword_given_to_a_convolution(kernel: KernelSession) -> None:
    error = failing(kernel, "conv = keras.layers.Conv1D(4, 3, pool_size=2, padding='same')")
    text = error["explanation"]
    assert "`pool_size` is a keyword of" in text and "Pooling" in text
    fix = fix_of(text)
    assert fix == "conv = keras.layers.Conv1D(4, 3, padding='same')"
    runs_cleanly(kernel, fix)
    runs_cleanly(kernel, "fine = keras.layers.MaxPooling1D(pool_size=2)")


def test_a_while_loop_state_that_grows_with_the_batch(kernel: KernelSession) -> None:
    cell = (
        "@tf.function\n"
        "def accumulate(v):\n"
        "    acc0 = tf.zeros((1, 3))\n"
        "    def step(i, acc):\n"
        "        return i + 1, acc + v\n"
        "    _, total = tf.while_loop(lambda i, acc: i < 4, step, [tf.constant(0), acc0])\n"
        "    return total\n"
        "\n"
        "summed = accumulate(tf.ones((5, 3)))"
    )
    error = failing(kernel, cell)
    text = error["explanation"]
    assert "`acc0` enters the loop with shape (1, 3)" in text and "(5, 3)" in text
    fix = fix_of(text)
    assert fix == (
        "_, total = tf.while_loop(lambda i, acc: i < 4, step, [tf.constant(0), acc0], "
        "shape_invariants=[tf.TensorShape([]), tf.TensorShape([None, 3])])"
    )
    fixed = cell.replace(
        "    _, total = tf.while_loop(lambda i, acc: i < 4, step, [tf.constant(0), acc0])",
        "    " + fix,
    )
    runs_cleanly(kernel, fixed)
    assert value_of(kernel, "summed.numpy().tolist()[0]") == [4.0, 4.0, 4.0]
    runs_cleanly(kernel, cell.replace("tf.zeros((1, 3))", "tf.zeros_like(v)"))


def test_a_while_loop_vector_that_grows_by_concat(kernel: KernelSession) -> None:
    cell = (
        "@tf.function\n"
        "def collect(n):\n"
        "    seen0 = tf.zeros((0,))\n"
        "    body = lambda k, seen: (k + 1, tf.concat([seen, [tf.cast(k, tf.float32)]], 0))\n"
        "    return tf.while_loop(cond=lambda k, seen: k < n, body=body, loop_vars=(0, seen0))\n"
        "\n"
        "steps_seen = collect(tf.constant(3))"
    )
    error = failing(kernel, cell)
    fix = fix_of(error["explanation"])
    assert fix == (
        "return tf.while_loop(cond=lambda k, seen: k < n, body=body, loop_vars=(0, seen0), "
        "shape_invariants=(tf.TensorShape([]), tf.TensorShape([None])))"
    )
    fixed = cell.replace(
        "    return tf.while_loop(cond=lambda k, seen: k < n, body=body, loop_vars=(0, seen0))",
        "    " + fix,
    )
    runs_cleanly(kernel, fixed)
    assert value_of(kernel, "steps_seen[1].numpy().tolist()") == [0.0, 1.0, 2.0]


def _spans(text: str) -> list[str]:
    import re

    return re.findall(r"`([^`]+)`", text)


def test_a_python_list_collecting_a_graph_loop(kernel: KernelSession) -> None:
    cell = (
        "@tf.function\n"
        "def running(xs):\n"
        "    partial = []\n"
        "    acc = tf.constant(0.0)\n"
        "    for i in tf.range(tf.shape(xs)[0]):\n"
        "        acc = acc + xs[i]\n"
        "        partial.append(acc)\n"
        "    return tf.stack(partial)\n"
        "\n"
        "sums = running(tf.constant([1.0, 2.0, 3.0]))"
    )
    error = failing(kernel, cell)
    text = error["explanation"]
    spans = _spans(text)
    made = "partial = tf.TensorArray(tf.float32, size=0, dynamic_size=True)"
    write = "partial = partial.write(partial.size(), acc)"
    assert made in spans and write in spans and "partial.stack()" in spans
    fixed = (
        cell.replace("    partial = []", "    " + made)
        .replace("        partial.append(acc)", "        " + write)
        .replace("tf.stack(partial)", "partial.stack()")
    )
    runs_cleanly(kernel, fixed)
    assert value_of(kernel, "sums.numpy().tolist()") == [1.0, 3.0, 6.0]


def test_a_python_list_collecting_a_graph_while(kernel: KernelSession) -> None:
    cell = (
        "@tf.function\n"
        "def halvings(n):\n"
        "    seen = []\n"
        "    while n > 1:\n"
        "        n = n // 2\n"
        "        seen.append(n)\n"
        "    return tf.concat([seen], axis=0)\n"
        "\n"
        "steps = halvings(tf.constant(20))"
    )
    error = failing(kernel, cell)
    spans = _spans(error["explanation"])
    made = "seen = tf.TensorArray(tf.int32, size=0, dynamic_size=True)"
    write = "seen = seen.write(seen.size(), n)"
    assert made in spans and write in spans
    fixed = (
        cell.replace("    seen = []", "    " + made)
        .replace("        seen.append(n)", "        " + write)
        .replace("tf.concat([seen], axis=0)", "seen.stack()")
    )
    runs_cleanly(kernel, fixed)
    assert value_of(kernel, "steps.numpy().tolist()") == [10, 5, 2, 1]
    # Values returned and collected outside the function: no such entry.
    runs_cleanly(kernel, "outs = [running_ok for running_ok in [tf.constant(1.0)]]")
