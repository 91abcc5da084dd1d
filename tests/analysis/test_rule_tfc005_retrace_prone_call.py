from __future__ import annotations

from jupyterlab_tfcoach.analysis import analyze_cells
from jupyterlab_tfcoach.analysis.testing import check, check_cells, only, span

CODE = "TFC005"


def related_spans(finding):
    return [(r.line, r.column, r.end_line, r.end_column) for r in finding.related]


def test_different_literals_at_call_sites_are_one_finding_with_related_call_sites():
    source = """\
        import tensorflow as tf

        @tf.function
        def scale(x, factor):
            return x * factor

        a = scale(x, 2)
        b = scale(x, factor=3.5)
        c = scale(x, 2)
        """
    [finding] = check(source, CODE)
    assert span(finding) == (7, 14, 7, 15)  # the first call site
    assert finding.message == (
        "tf.function `scale` is called with 2 different Python values for `factor` (2, 3.5) "
        "at 3 call sites: one trace each"
    )
    assert related_spans(finding) == [(8, 21, 8, 24), (9, 14, 9, 15)]
    assert [r.message for r in finding.related] == [
        "also called with `factor` = 3.5",
        "also called with `factor` = 2",
    ]
    assert [r.cell for r in finding.related] == [None, None]


def test_one_finding_per_parameter_whose_values_differ():
    source = """\
        import tensorflow as tf

        @tf.function
        def f(x, n, k):
            return x

        f(x, 1, 5)
        f(x, 2, 5)
        f(x, 5, 5)
        """
    [finding] = check(source, CODE)
    assert span(finding) == (7, 6, 7, 7)
    assert "3 different Python values for `n` (1, 2, 5) at 3 call sites" in finding.message
    assert related_spans(finding) == [(8, 6, 8, 7), (9, 6, 9, 7)]


def test_same_literal_everywhere_and_bools_are_fine():
    source = """\
        import tensorflow as tf

        @tf.function
        def step(x, n, training=False):
            return x

        step(x, 3, training=True)
        step(x, 3, training=False)
        """
    assert check(source, CODE) == []


def test_loop_variable_passed_to_tf_function_wrapped_later():
    source = """\
        import tensorflow as t

        def body(x, n):
            return x * n

        fast = t.function(body)
        for n in range(5):
            fast(x, n)
        """
    [finding] = check(source, CODE)
    assert span(finding) == (8, 13, 8, 14)
    assert "from the loop over `range(5)`" in finding.message


def test_tf_function_created_in_loop():
    source = """\
        from tensorflow import function
        import tensorflow as tf

        for lr in rates:
            step = function(train)

            @tf.function
            def inner(x):
                return x
        """
    findings = check(source, CODE)
    assert [span(f) for f in findings] == [(5, 12, 5, 27), (7, 6, 7, 17)]
    assert "created inside a loop" in findings[0].message


def test_self_method_calls_with_different_literals():
    source = """\
        import tensorflow as tf

        class Trainer:
            @tf.function
            def step(self, x, k):
                return x * k

            def run(self, x):
                self.step(x, 1)
                self.step(x, 2)
        """
    [finding] = check(source, CODE)
    assert span(finding) == (9, 22, 9, 23)
    assert "`self.step`" in finding.message and "(1, 2)" in finding.message
    assert related_spans(finding) == [(10, 22, 10, 23)]


def test_notebook_cells_related_location_in_a_later_cell():
    cells = [
        "import tensorflow as tf\n@tf.function\ndef f(x, k):\n    return x * k",
        "f(x, 1)",
        "  f(x, 2)",  # indented cell: analysed dedented, columns mapped back
    ]
    [finding] = analyze_cells(cells, only(CODE))  # check_cells would dedent the cells
    assert (finding.cell, *span(finding)) == (1, 1, 6, 1, 7)
    [related] = finding.related
    assert (related.cell, related.line, related.column, related.end_line, related.end_column) == (
        2,
        1,
        8,
        1,
        9,
    )


def test_tf_function_method_called_through_an_instance_in_a_loop():
    source = """\
        import tensorflow as tf

        class Classifier(tf.Module):
            @tf.function
            def train_step(self, x, y, epoch):
                return x

            def fit(self, x, y):
                for epoch in range(10):
                    self.train_step(x, y, epoch)

        clf = Classifier(units=3)
        for epoch in range(10):
            clf.train_step(x, y, epoch)
        """
    findings = check(source, CODE)
    assert [span(f) for f in findings] == [(10, 35, 10, 40), (14, 26, 14, 31)]
    assert findings[0].message == (
        "tf.function `self.train_step` gets the Python number `epoch` from the loop over "
        "`range(10)`: every value traces a new graph"
    )
    assert "`clf.train_step`" in findings[1].message


def test_instance_calls_with_tensors_or_plain_methods_are_silent():
    source = """\
        import tensorflow as tf

        class Classifier(tf.Module):
            @tf.function
            def train_step(self, x, y, epoch):
                return x

            def log(self, epoch):
                return epoch

            def fit(self, x, y):
                for epoch in tf.range(10):
                    self.train_step(x, y, epoch)

        clf = Classifier()
        for epoch in range(10):
            clf.train_step(x, y, tf.constant(epoch))
            clf.log(epoch)
        for epoch in tf.range(10):
            clf.train_step(x, y, epoch)
        other = make_classifier()
        for epoch in range(10):
            other.train_step(x, y, epoch)
        """
    assert check(source, CODE) == []


def test_inherited_tf_function_method_and_instance_literals():
    source = """\
        import tensorflow as tf

        class Base(tf.Module):
            @tf.function
            def step(self, x, k):
                return x * k

        class Child(Base):
            pass

        a = Child()
        b = Child()
        a.step(x, 1)
        a.step(x, 2)
        b.step(x, 3)
        """
    # ``b`` has its own cache: its single value is not a retrace of ``a``'s function.
    [finding] = check(source, CODE)
    assert span(finding) == (13, 11, 13, 12)
    assert "`a.step`" in finding.message and "(1, 2) at 2 call sites" in finding.message
    assert related_spans(finding) == [(14, 11, 14, 12)]


def test_different_instances_each_with_one_value_are_silent():
    source = """\
        import tensorflow as tf

        class Model(tf.Module):
            @tf.function
            def step(self, x, k):
                return x * k

        small = Model()
        large = Model()
        small.step(x, 1)
        large.step(x, 2)
        """
    assert check(source, CODE) == []


def test_loop_over_a_literal_list_or_a_name_bound_to_one():
    source = """\
        import tensorflow as tf

        RATES = (0.1, 0.01, 0.001)

        @tf.function
        def step(x, lr):
            return x * lr

        for lr in [0.1, 0.01, 0.001]:
            step(x, lr)
        for lr in RATES:
            step(x, lr)
        """
    findings = check(source, CODE)
    assert [span(f) for f in findings] == [(10, 13, 10, 15), (12, 13, 12, 15)]
    assert "from the loop over `[0.1, 0.01, 0.001]`" in findings[0].message
    assert "from the loop over `RATES`" in findings[1].message


def test_loops_over_tensors_strings_or_changed_lists_are_silent():
    source = """\
        import tensorflow as tf

        @tf.function
        def step(x, lr):
            return x * lr

        for lr in [tf.constant(0.1), tf.constant(0.01)]:
            step(x, lr)
        for mode in ["train", "eval"]:
            step(x, mode)
        for flag in [True, False]:
            step(x, flag)
        RATES = [0.1, 0.01]
        if fine_tune:
            RATES = schedule()
        for lr in RATES:
            step(x, lr)
        for lr in [0.1, 0.01]:
            step(x, tf.constant(lr))
        """
    assert check(source, CODE) == []


def test_look_alikes_are_silent():
    source = """\
        import tensorflow as tf

        @tf.function(input_signature=[tf.TensorSpec([None]), tf.TensorSpec([])])
        def typed(x, k):
            return x * k

        typed(x, 1)
        typed(x, 2)

        @tf.function
        def f(x, n):
            return x

        for n in tf.range(5):
            f(x, n)
        for n in range(5):
            n = tf.constant(n)
            f(x, n)
        for item in batches:
            f(item, 1)

        def plain(x, k):
            return x
        plain(x, 1)
        plain(x, 2)
        step = tf.function(plain)
        """
    assert check(source, CODE) == []


def test_function_wrapping_what_the_loop_iterates_over_is_silent():
    # One tf.function per model is needed anyway: it traces once for its own model.
    source = """\
        import tensorflow as tf

        compiled = []
        for model in models:
            compiled.append(tf.function(model))
        for name, layer in layers.items():
            serve = tf.function(layer.call)
        for size in (8, 16):
            net = build(size)
            fast = tf.function(net)
        for lr in rates:
            step = tf.function(train)
        """
    [finding] = check(source, CODE)
    assert span(finding) == (12, 12, 12, 30)


def test_enumerate_counter_passed_to_tf_function():
    source = """\
        import tensorflow as tf

        @tf.function
        def step(batch, i):
            return batch

        for i, batch in enumerate(ds):
            step(batch, i)
        for step_number, (x, y) in enumerate(dataset, start=1):
            step(x, step_number)
        """
    findings = check(source, CODE)
    assert [span(f) for f in findings] == [(8, 17, 8, 18), (10, 13, 10, 24)]
    assert findings[0].message == (
        "tf.function `step` gets the Python number `i` from the loop over `enumerate(ds)`: "
        "every value traces a new graph"
    )
    assert "`step_number` from the loop over `enumerate(dataset, start=1)`" in findings[1].message


def test_enumerate_items_or_a_tensor_counter_are_silent():
    source = """\
        import tensorflow as tf

        @tf.function
        def step(batch, i):
            return batch

        for i, batch in enumerate(ds):
            step(batch, tf.constant(i))
        for i, batch in enumerate(ds):
            step(batch, batch)
        for i, (x, y) in enumerate(dataset):
            step(x, y)
        for i, batch in zip(counts, ds):
            step(batch, i)
        """
    assert check(source, CODE) == []


def test_while_loop_counter_passed_to_tf_function():
    source = """\
        import tensorflow as tf

        @tf.function
        def step(x, epoch):
            return x

        epoch = 0
        while epoch < 10:
            step(x, epoch)
            epoch += 1

        n = 0
        while True:
            n = n + 1
            step(x, n)

        seen = 0
        for batch in ds:
            step(batch, seen)
            seen -= 0.5
        """
    findings = check(source, CODE)
    assert [span(f) for f in findings] == [(9, 13, 9, 18), (15, 13, 15, 14), (19, 17, 19, 21)]
    assert findings[0].message == (
        "tf.function `step` gets the Python number `epoch`, which the `while` loop steps "
        "(`epoch += 1`): every value traces a new graph"
    )
    assert "`n`, which the `while` loop steps (`n = n + 1`)" in findings[1].message
    assert "`seen`, which the `for` loop steps (`seen -= 0.5`)" in findings[2].message


def test_tensor_counters_and_other_loop_rebinds_are_silent():
    source = """\
        import tensorflow as tf

        @tf.function
        def step(x, epoch):
            return x

        epoch = tf.Variable(0)
        while epoch < 10:
            step(x, epoch)
            epoch.assign_add(1)

        epoch = 0
        while epoch < 10:
            step(x, tf.constant(epoch))
            epoch += 1

        count = tf.constant(0)
        while count < 10:
            count += 1
            step(x, count)

        level = 0
        while level < 3:
            step(x, level)
            level = next_level(level)

        fixed_k = 3
        while running:
            step(x, fixed_k)
            other += 1
        """
    assert check(source, CODE) == []


def test_schedule_list_indexed_by_the_loop():
    source = """\
        import tensorflow as tf

        LR_SCHEDULE = [0.1] * 5 + [0.01] * 5

        @tf.function
        def sgd(x, lr):
            return x * lr

        for epoch in range(10):
            sgd(x, LR_SCHEDULE[epoch])
        for i, batch in enumerate(ds):
            sgd(batch, (0.1, 0.05, 0.01)[i])
        epoch = 0
        while epoch < 10:
            sgd(x, LR_SCHEDULE[epoch])
            epoch += 1
        """
    findings = check(source, CODE)
    assert [span(f) for f in findings] == [(10, 12, 10, 30), (12, 16, 12, 36), (15, 12, 15, 30)]
    assert findings[0].message == (
        "tf.function `sgd` gets the Python number `LR_SCHEDULE[epoch]`, looked up with `epoch` "
        "from the loop over `range(10)`: every value traces a new graph"
    )
    assert "looked up with `i` from the loop over `enumerate(ds)`" in findings[1].message
    assert "looked up with `epoch`, which the `while` loop steps (`epoch += 1`)" in (
        findings[2].message
    )


def test_schedule_of_tensors_or_a_fixed_index_is_silent():
    source = """\
        import tensorflow as tf

        LR_SCHEDULE = [tf.constant(0.1), tf.constant(0.01), tf.constant(0.001)]
        RATES = [0.1, 0.01, 0.001]

        @tf.function
        def sgd(x, lr):
            return x * lr

        for epoch in range(3):
            sgd(x, LR_SCHEDULE[epoch])
            sgd(x, RATES[0])
            sgd(x, tf.constant(RATES[epoch]))
        for epoch in range(3):
            sgd(x, schedule(epoch)[epoch])
        """
    assert check(source, CODE) == []


def test_notebook_counter_and_schedule_across_cells():
    cells = [
        """\
        import tensorflow as tf

        @tf.function
        def train_step(x, lr):
            return x * lr
        """,
        "lr_schedule = [0.1, 0.05, 0.01]\nstep = 0",
        """\
        while step < 3:
            train_step(x, lr_schedule[step])
            train_step(x, tf.constant(lr_schedule[step]))
            step += 1
        """,
    ]
    [finding] = check_cells(cells, CODE)
    assert (finding.cell, *span(finding)) == (2, 2, 19, 2, 36)
    assert "`lr_schedule[step]`, looked up with `step`, which the `while` loop steps" in (
        finding.message
    )
