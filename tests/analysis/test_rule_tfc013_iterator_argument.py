"""TFC013 for a Python iterator passed to a tf.function as an argument (issue #26).

Each test pairs a reported case with a correct look-alike that must stay silent, so every
test here fails on a TFC013 that only knows captured iterators.
"""

from __future__ import annotations

import pytest

from jupyterlab_tfcoach.analysis.testing import check, check_cells, span

CODE = "TFC013"


def _related(finding) -> list[tuple[int | None, int, int, str]]:
    return [(r.cell, r.line, r.column, r.message) for r in finding.related]


def test_the_tensorflow_guide_example():
    # TensorFlow's guide/function, "Iterators": the first is buggy, the second is fine.
    source = """\
        import tensorflow as tf

        @tf.function
        def buggy_consume_next(iterator):
            tf.print("Value:", next(iterator))

        iterator = iter([1, 2, 3])
        buggy_consume_next(iterator)
        # This reuses the first value from the iterator, rather than consuming the next value.
        buggy_consume_next(iterator)
        buggy_consume_next(iterator)

        @tf.function
        def good_consume_next(iterator):
            # This is ok, iterator is a tf.data.Iterator
            tf.print("Value:", next(iterator))

        ds = tf.data.Dataset.from_tensor_slices([1, 2, 3])
        iterator = iter(ds)
        good_consume_next(iterator)
        good_consume_next(iterator)
        good_consume_next(iterator)
        """
    [finding] = check(source, CODE)
    assert span(finding) == (5, 24, 5, 38)
    assert finding.message.startswith(
        "`next(iterator)` in tf.function `buggy_consume_next` runs only while tracing, and "
        "`buggy_consume_next(iterator)` passes Python iterator `iterator`: each new iterator "
        "traces again, and calls with the same one reuse what tracing took from it"
    )
    assert "pass a tf.data iterator" in finding.message
    passes = "`buggy_consume_next(iterator)` passes Python iterator `iterator`"
    assert _related(finding) == [(None, line, 20, passes) for line in (8, 10, 11)]
    assert finding.fix is None  # no edit is right for every caller: the advice is in words


def test_for_loop_over_a_generator_expression_passed_in_a_training_loop():
    source = """\
        import tensorflow as tf

        SCALES = [0.5, 1.5, 2.5]

        @tf.function
        def scaled_sum(total, factors):
            for factor in factors:
                total = total + factor
            return total

        for epoch in range(4):
            result = scaled_sum(tf.zeros([2, 2]), (s * 2 for s in SCALES))
        """
    [finding] = check(source, CODE)
    assert span(finding) == (7, 19, 7, 26)
    assert finding.message.startswith(
        "`for` loop over parameter `factors` in tf.function `scaled_sum` runs only while "
        "tracing, and `scaled_sum(tf.zeros([2, 2]), (s * 2 for s in SCALES))` passes Python "
        "iterator `(s * 2 for s in SCALES)` as `factors`"
    )
    # The look-alikes: the list itself, or a tuple built from the generator. A loop over
    # either is unrolled over all its items on every trace, which is what it says.
    for argument in ("SCALES", "tuple(s * 2 for s in SCALES)", "[s * 2 for s in SCALES]"):
        twin = source.replace("(s * 2 for s in SCALES))", f"{argument})")
        assert argument in twin
        assert check(twin, CODE) == []


def test_generator_function_passed_by_keyword():
    source = """\
        import tensorflow as tf

        def warmup_rates():
            rate = 0.001
            while True:
                yield rate
                rate *= 2

        weights = tf.Variable(tf.ones([3]))

        @tf.function
        def apply_update(grads, *, rates):
            weights.assign_sub(next(rates) * grads)

        schedule = warmup_rates()
        for _ in range(5):
            apply_update(tf.ones([3]), rates=schedule)
        """
    [finding] = check(source, CODE)
    assert span(finding) == (13, 24, 13, 35)
    passes = "`apply_update(tf.ones([3]), rates=schedule)` passes Python iterator `schedule` as "
    assert f"{passes}`rates`: each new iterator traces again" in finding.message
    assert _related(finding) == [(None, 17, 38, f"{passes}`rates`")]
    # The guide's other remedy: call next() outside, pass the item in as a tensor.
    twin = source.replace(
        "weights.assign_sub(next(rates) * grads)", "weights.assign_sub(rates * grads)"
    ).replace("rates=schedule)", "rates=tf.constant(next(schedule)))")
    assert "next(schedule)" in twin
    assert check(twin, CODE) == []
    # The same generator handed to a plain Python function runs eagerly: silent.
    eager = source.replace("@tf.function\n        def apply_update", "def apply_update")
    assert "@tf.function" not in eager
    assert check(eager, CODE) == []


def test_zip_passed_to_a_tf_function_made_by_wrapping():
    source = """\
        import tensorflow as tf

        FEATURES = [[1.0, 2.0], [3.0, 4.0]]
        LABELS = [0.0, 1.0]

        def fit_pair(model_weights, pairs):
            features, label = next(pairs)
            return tf.reduce_sum(model_weights * features) - label

        fast_fit_pair = tf.function(fit_pair)
        checked_fit_pair = tf.function(fit_pair, input_signature=[tf.TensorSpec([2])] * 2)

        pairs = zip(FEATURES, LABELS)
        losses = [fast_fit_pair(tf.ones([2]), pairs) for _ in LABELS]
        eager_losses = [fit_pair(tf.ones([2]), pairs) for _ in LABELS]
        """
    [finding] = check(source, CODE)
    assert span(finding) == (7, 23, 7, 34)
    assert "tf.function `fit_pair`" in finding.message
    assert "`fast_fit_pair(tf.ones([2]), pairs)` passes Python iterator `pairs`" in (
        finding.message
    )
    # Only the call of the tf.function: the eager call of ``fit_pair`` itself is fine.
    assert [(r.line, r.column) for r in finding.related] == [(14, 39)]
    # A tf.function with an input_signature cannot take a Python iterator at all: the call
    # raises TypeError, loudly, so the rule leaves it to that error.
    loud = source.replace(
        "fast_fit_pair(tf.ones([2]), pairs)", "checked_fit_pair(tf.ones([2]), pairs)"
    )
    assert "checked_fit_pair(tf.ones([2]), pairs)" in loud
    assert check(loud, CODE) == []


def test_notebook_cells_enumerate_over_a_list():
    cells = [
        "import tensorflow as tf",
        "@tf.function\ndef log_step(counter):\n    index, loss = next(counter)\n"
        "    tf.print(index, loss)",
        "LOSSES = [0.9, 0.5, 0.2]\nnumbered = enumerate(LOSSES)",
        "for _ in LOSSES:\n    log_step(numbered)",
    ]
    [finding] = check_cells(cells, CODE)
    assert (finding.cell, *span(finding)) == (1, 3, 19, 3, 32)
    assert _related(finding) == [
        (3, 2, 14, "`log_step(numbered)` passes Python iterator `numbered` as `counter`")
    ]
    # The twin: tf.data numbers the elements itself, and its iterator is a TensorFlow one.
    cells[2] = "LOSSES = [0.9, 0.5, 0.2]\n" + (
        "numbered = iter(tf.data.Dataset.from_tensor_slices(LOSSES).enumerate())"
    )
    assert check_cells(cells, CODE) == []


CONSUME_SOURCE = """\
import tensorflow as tf
from loaders import open_stream

READINGS = [0.25, 0.5, 0.75]
DATASET = tf.data.Dataset.from_tensor_slices(READINGS)

def readings():
    yield from READINGS

@tf.function
def consume(stream):
    return tf.constant(2.0) * next(stream)

value = consume({argument})
"""

# (a Python iterator the rule reports, a correct look-alike it must not)
PAIRS = {
    "iter of a list / of a dataset": ("iter(READINGS)", "iter(DATASET)"),
    "iter of range / of Dataset.range": (
        "iter(range(3))",
        "iter(tf.data.Dataset.range(3).map(lambda i: tf.cast(i, tf.float32)))",
    ),
    "generator function / Dataset.from_generator over it": (
        "readings()",
        "iter(tf.data.Dataset.from_generator(readings, "
        "output_signature=tf.TensorSpec([], tf.float32)))",
    ),
    "map over a list / Dataset.map": ("map(float, READINGS)", "iter(DATASET.map(tf.square))"),
    "generator expression / the item taken outside": (
        "(r * 10 for r in READINGS)",
        "tf.constant(next(r * 10 for r in READINGS))",
    ),
    "by keyword / a dataset iterator by keyword": ("stream=iter(READINGS)", "stream=iter(DATASET)"),
}


@pytest.mark.parametrize("case", sorted(PAIRS))
def test_python_iterator_arguments_and_their_correct_twins(case: str):
    reported, twin = PAIRS[case]
    [finding] = check(CONSUME_SOURCE.replace("{argument}", reported), CODE)
    assert (finding.line, finding.related[0].line) == (12, 14)
    assert check(CONSUME_SOURCE.replace("{argument}", twin), CODE) == []


def test_arguments_of_unknown_origin_are_silent():
    # Whatever cannot be told a Python iterator from the file says nothing.
    known = "value = consume(iter(READINGS))\n"
    unknown = [
        "value = consume(open_stream())\n",  # a loader: may well hand out a tf.data iterator
        "value = consume(iter(open_stream()))\n",
        "streams = [iter(READINGS)]\nvalue = consume(*streams)\n",  # which parameter: unknown
        "options = {'stream': iter(READINGS)}\nvalue = consume(**options)\n",
    ]
    base = CONSUME_SOURCE.replace("value = consume({argument})\n", "")
    assert len(check(base + known, CODE)) == 1
    for calls in unknown:
        assert check(base + calls, CODE) == [], calls
    # A body that rebinds the parameter first (to anything) is not read as the argument.
    rebound = (base + known).replace(
        "    return tf.constant(2.0) * next(stream)",
        "    stream = iter(stream)\n    return tf.constant(2.0) * next(stream)",
    )
    assert "stream = iter(stream)" in rebound
    assert check(rebound, CODE) == []


def test_keras_fit_on_a_generator_is_silent():
    # Keras 3 pulls a generator's batches in Python and hands the traced step tensors.
    source = """\
        import keras
        import numpy as np
        import tensorflow as tf

        def batches():
            for _ in range(4):
                yield np.ones((8, 3), "float32"), np.ones((8, 1), "float32")

        model = keras.Sequential([keras.Input(shape=(3,)), keras.layers.Dense(1)])
        model.compile(optimizer="sgd", loss="mse")
        model.fit(batches(), epochs=1)

        @tf.function
        def train_step(data):
            features, labels = next(data)
            with tf.GradientTape() as tape:
                loss = keras.losses.mean_squared_error(labels, model(features))
            return tape.gradient(loss, model.trainable_variables)

        train_step(batches())
        """
    [finding] = check(source, CODE)
    assert (finding.line, finding.related[0].line) == (15, 20)
    assert check(source.replace("train_step(batches())", ""), CODE) == []


def test_iterator_passed_to_a_tf_function_method():
    source = """\
        import tensorflow as tf

        class Scorer(tf.Module):
            @tf.function
            def score(self, marks, scale=1.0):
                return tf.constant(next(marks)) * scale

            def score_twice(self):
                halves = (m / 2 for m in [4.0, 6.0])
                return self.score(halves), self.score(halves)

        scorer = Scorer()
        scorer.score(iter([1.0, 2.0]), scale=3.0)
        scorer.score(iter(tf.data.Dataset.from_tensor_slices([1.0, 2.0])))
        """
    [finding] = check(source, CODE)
    assert span(finding) == (6, 28, 6, 39)
    assert [r.line for r in finding.related] == [10, 10, 13]
    assert "`self.score(halves)` passes Python iterator `halves` as `marks`" in (finding.message)
    # The twin: only tf.data iterators reach the method.
    twin = source.replace(
        "halves = (m / 2 for m in [4.0, 6.0])",
        "halves = iter(tf.data.Dataset.from_tensor_slices([2.0, 3.0]))",
    ).replace("scorer.score(iter([1.0, 2.0]), scale=3.0)", "scorer.score(halves)")
    assert check(twin, CODE) == []
