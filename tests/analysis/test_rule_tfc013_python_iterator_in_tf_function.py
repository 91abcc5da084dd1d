from __future__ import annotations

import re

import pytest

from jupyterlab_tfcoach.analysis.rules import rule_by_code
from jupyterlab_tfcoach.analysis.testing import check, check_cells, span

CODE = "TFC013"


def test_next_on_a_python_iterator_made_outside():
    source = """\
        import tensorflow as tf

        batches = iter([1.0, 2.0, 3.0])

        @tf.function
        def step():
            return tf.constant(next(batches)) * 2
        """
    [finding] = check(source, CODE)
    assert span(finding) == (7, 24, 7, 37)
    assert "`step`" in finding.message and "`batches`" in finding.message
    assert "only while tracing" in finding.message
    assert finding.fix is None


def test_dataset_iterator_made_outside_is_silent():
    # A tf.data iterator is a TensorFlow resource: the graph fetches a new element per call.
    source = """\
        import tensorflow as tf

        batches = iter(tf.data.Dataset.from_tensor_slices([1.0, 2.0, 3.0]))

        @tf.function
        def step():
            return next(batches) * 2
        """
    assert check(source, CODE) == []


# (how the iterator is made, whether it is a Python iterator the rule must report)
ITERATORS = {
    "iter of a list literal": ("iter([1.0, 2.0])", True),
    "iter of a tuple bound to a name": ("iter(VALUES)", True),
    "iter of a list bound to a name": ("iter(ITEMS)", True),
    "iter of range": ("iter(range(3))", True),
    "generator expression over range": ("(i * 0.5 for i in range(3))", True),
    "generator function from the file": ("numbers()", True),
    "itertools.count": ("itertools.count(1)", True),
    "itertools alias, cycle over a list": ("its.cycle([1.0, 2.0])", True),
    "name imported from itertools": ("repeat_forever(ITEMS)", True),
    "enumerate over a list": ("enumerate(ITEMS)", True),
    "zip of two lists": ("zip(ITEMS, VALUES)", True),
    "map over a list": ("map(float, ITEMS)", True),
    "reversed list": ("reversed(ITEMS)", True),
    # Silent twins: TensorFlow iterators and values of unknown type.
    "iter of a dataset": ("iter(DATASET)", False),
    "iter of a dataset chain": ("iter(tf.data.Dataset.range(3).batch(2))", False),
    "generator expression over a dataset": ("(x * 2 for x in DATASET)", False),
    "enumerate over a dataset": ("enumerate(DATASET)", False),
    "zip of a list and a dataset": ("zip(ITEMS, DATASET)", False),
    "itertools.cycle over a dataset": ("itertools.cycle(DATASET)", False),
    "iter of an unknown object": ("iter(loader)", False),
    "a plain function's result": ("not_a_generator()", False),
    "iter with a sentinel": ("iter(read_line, '')", False),
}

ITERATOR_SOURCE = """\
    import itertools
    import itertools as its
    from itertools import repeat as repeat_forever
    import tensorflow as tf
    from data import loader, read_line

    VALUES = (1.0, 2.0)
    ITEMS = [3.0, 4.0]
    DATASET = tf.data.Dataset.from_tensor_slices(ITEMS)

    def numbers():
        yield 1.0
        yield 2.0

    def not_a_generator():
        def inner():
            yield 1.0  # makes ``inner`` a generator, not the function around it
        return inner

    it = {expression}

    @tf.function
    def step(x):
        return x + next(it)
    """


@pytest.mark.parametrize("case", sorted(ITERATORS))
def test_which_iterators_are_python_iterators(case: str):
    expression, reported = ITERATORS[case]
    findings = check(ITERATOR_SOURCE.replace("{expression}", expression), CODE)
    assert [f.line for f in findings] == ([24] if reported else [])


def test_for_loop_over_an_outer_python_iterator():
    source = """\
        import tensorflow as tf

        numbers = iter([1.0, 2.0, 3.0])

        @tf.function
        def total(x):
            for value in numbers:
                x = x + value
            return x
        """
    [finding] = check(source, CODE)
    assert span(finding) == (7, 18, 7, 25)
    assert finding.message.startswith("`for` loop over Python iterator `numbers`")


def test_loops_over_tensors_datasets_and_local_iterators_are_silent():
    source = """\
        import tensorflow as tf

        dataset = tf.data.Dataset.range(4)
        values = [1.0, 2.0]

        @tf.function
        def total(x, batch):
            for element in dataset:
                x += tf.cast(element, tf.float32)
            for row in batch:
                x += tf.reduce_sum(row)
            local = iter(values)  # made while tracing, every trace: a plain unrolled loop
            x += next(local)
            for value in (v * 2 for v in values):
                x += value
            return x
        """
    assert check(source, CODE) == []


def test_next_outside_a_tf_function_is_silent():
    source = """\
        import tensorflow as tf

        batches = iter([1.0, 2.0, 3.0])

        def eager_step():
            return tf.constant(next(batches)) * 2

        @tf.function
        def step(x):
            def callback():
                return next(batches)  # nested: may run eagerly via tf.py_function
            if tf.executing_eagerly():
                x += next(batches)
            return x

        first = next(batches)
        """
    assert check(source, CODE) == []


def test_iterator_from_an_enclosing_function():
    source = """\
        import tensorflow as tf

        def make_step(values):
            it = iter(list(values))

            @tf.function
            def step():
                return next(it)

            return step

        def make_dataset_step(values):
            it = iter(values)  # ``values`` may be a dataset: silent

            @tf.function
            def step():
                return next(it)

            return step
        """
    [finding] = check(source, CODE)
    assert finding.line == 8


def test_a_name_that_may_hold_a_dataset_iterator_is_silent():
    source = """\
        import tensorflow as tf

        values = [1.0, 2.0]
        it = iter(values)
        if use_tf_data:
            it = iter(tf.data.Dataset.from_tensor_slices(values))

        @tf.function
        def step():
            return next(it)
        """
    assert check(source, CODE) == []


def test_shadowed_next_and_iter_are_silent():
    source = """\
        import tensorflow as tf
        from pipeline import iter

        def next(source):
            return source.pull()

        a = iter([1.0])
        b = (x for x in [1.0])

        @tf.function
        def step():
            return next(b) + tf.constant(1.0)

        @tf.function
        def other():
            for v in a:
                pass
            return tf.constant(1.0)
        """
    assert check(source, CODE) == []


def test_notebook_cells():
    cells = [
        "import tensorflow as tf",
        "batches = iter([1.0, 2.0, 3.0])",
        "@tf.function\ndef step():\n    return tf.constant(next(batches))",
    ]
    [finding] = check_cells(cells, CODE)
    assert (finding.cell, *span(finding)) == (2, 3, 24, 3, 37)
    # The twin: the same cells with a tf.data iterator.
    cells[1] = "batches = iter(tf.data.Dataset.from_tensor_slices([1.0, 2.0, 3.0]))"
    assert check_cells(cells, CODE) == []


def test_docs_example_is_reported_and_its_correction_is_not():
    docs = rule_by_code(CODE).docs
    example, corrected = re.findall(r"```python\n(.*?)```", docs, re.S)
    # One finding per way in: a captured iterator, and one passed as an argument.
    captured, passed = check("import tensorflow as tf\n" + example, CODE)
    assert "`batches`" in captured.message and "`step`" in captured.message
    assert "`step_on(numbers)`" in passed.message
    assert check("import tensorflow as tf\n" + corrected, CODE) == []


def test_iterator_kept_on_self_and_advanced_in_a_tf_function_method():
    source = """\
        import itertools
        import tensorflow as tf

        class Annealer(tf.Module):
            def __init__(self):
                self.rates = itertools.cycle([1e-2, 5e-3, 1e-3])
                self.widths = [8, 16]
                self.frames = iter(tf.data.Dataset.range(100))

            @tf.function
            def step(self, weights):
                rate = next(self.rates)
                for width in self.widths:
                    weights = weights[:width]
                return weights * rate + tf.cast(next(self.frames), tf.float32)
        """
    [finding] = check(source, CODE)
    assert span(finding) == (12, 16, 12, 32)
    assert "tf.function `step` advances Python iterator `self.rates`" in finding.message
    # The twin: the rates are a tf.data iterator too, advanced by the graph.
    twin = source.replace(
        "itertools.cycle([1e-2, 5e-3, 1e-3])",
        "iter(tf.data.Dataset.from_tensor_slices([1e-2, 5e-3, 1e-3]).repeat())",
    )
    assert check(twin, CODE) == []


def test_for_loop_over_a_generator_kept_on_self():
    source = """\
        import tensorflow as tf

        def crops(count):
            for k in range(count):
                yield k * 4

        class Cropper(tf.Module):
            def reset(self):
                self.offsets = crops(3)

            @tf.function
            def crop_all(self, image):
                pieces = []
                for offset in self.offsets:
                    pieces.append(image[offset : offset + 4])
                return tf.stack(pieces)
        """
    [finding] = check(source, CODE)
    assert "`self.offsets`" in finding.message
    # A list of offsets, unrolled as written, is fine.
    assert check(source.replace("self.offsets = crops(3)", "self.offsets = [0, 4, 8]"), CODE) == []


def test_list_and_tuple_drain_a_generator_while_tracing():
    source = """\
        import tensorflow as tf

        def readings():
            for k in range(4):
                yield float(k)

        sensor = readings()
        sizes = [3, 5]
        ds_iterator = iter(tf.data.Dataset.range(4))

        @tf.function
        def summarise():
            values = list(sensor)
            kept = tuple(sizes) + tuple(range(2))
            return tf.reduce_sum(values) + len(kept)

        @tf.function
        def total(stream):
            return tf.reduce_sum(tuple(stream))

        print(summarise(), total(x * 2.0 for x in [1.0, 2.0]), total([1.0, 2.0]))
        """
    captured, passed = check(source, CODE)
    assert span(captured) == (13, 14, 13, 26)
    assert "drains Python iterator `sensor`" in captured.message
    assert passed.line == 19 and "`tuple(stream)`" in passed.message
    assert [r.line for r in passed.related] == [21]
    # The twins: a list of readings, and only lists passed to ``total``: nothing drained.
    twin = source.replace("sensor = readings()", "sensor = [0.0, 1.0]").replace(
        "total(x * 2.0 for x in [1.0, 2.0])", "total([2.0, 4.0])"
    )
    assert check(twin, CODE) == []
