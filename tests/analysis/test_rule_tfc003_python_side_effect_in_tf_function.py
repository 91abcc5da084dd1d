from __future__ import annotations

from jupyterlab_tfcoach.analysis.testing import check, check_cells, span

CODE = "TFC003"


def test_global_counter_and_outer_list():
    source = """\
        import tensorflow as tf
        calls = 0
        history = []

        @tf.function
        def step(x):
            global calls
            calls += 1
            history.append(x)
            return x
        """
    findings = check(source, CODE)
    assert [span(f) for f in findings] == [(8, 5, 8, 15), (9, 5, 9, 22)]
    assert "global `calls`" in findings[0].message
    assert "list `history`" in findings[1].message


def test_nonlocal_counter_and_outer_dict_item_under_alias():
    source = """\
        import tensorflow as t

        def make():
            seen = 0
            cache = {}

            @t.function
            def step(x):
                nonlocal seen
                seen = seen + 1
                cache["last"] = x
                return x

            return step
        """
    findings = check(source, CODE)
    assert [span(f) for f in findings] == [(10, 9, 10, 24), (11, 9, 11, 26)]
    assert "nonlocal `seen`" in findings[0].message
    assert "dict `cache`" in findings[1].message


def test_self_attribute_increment_that_is_not_a_variable():
    source = """\
        from tensorflow import function

        class Counter:
            def __init__(self):
                self.count = 0
                self.log = []

            @function
            def __call__(self, x):
                self.count += 1
                self.log.append(x)
                return x
        """
    findings = check(source, CODE)
    assert [span(f) for f in findings] == [(10, 9, 10, 24), (11, 9, 11, 27)]
    assert "`self.count` is a Python number" in findings[0].message


def test_class_level_default_counts_as_python_number():
    source = """\
        import tensorflow as tf

        class Step:
            calls = 0

            @tf.function
            def __call__(self, x):
                self.calls = self.calls + 1
                return x
        """
    [finding] = check(source, CODE)
    assert span(finding) == (8, 9, 8, 36)


def test_notebook_cells():
    cells = [
        "import tensorflow as tf\nlosses = []",
        "@tf.function\ndef f(x):\n    losses.append(x)\n    return x",
    ]
    [finding] = check_cells(cells, CODE)
    assert (finding.cell, *span(finding)) == (1, 3, 5, 3, 21)


def test_correct_state_handling_is_silent():
    source = """\
        import tensorflow as tf
        counter = tf.Variable(0)
        outside = []

        class Model:
            def __init__(self):
                self.steps = tf.Variable(0)
                self.unknown = make_something()

            @tf.function
            def train(self, x, items):
                self.steps.assign_add(1)
                self.unknown += 1          # type unknown: stay silent
                local = []
                local.append(x)            # local list: fine
                items.append(x)            # parameter of unknown type
                counter.assign_add(1)
                return x

        def eager(x):
            outside.append(x)              # not a tf.function

        @tf.function
        def nested(x):
            def helper(v):
                outside.append(v)          # nested function: not reported
            return x
        """
    assert check(source, CODE) == []


def test_storing_a_lazily_created_variable_is_silent():
    # Keeping a new variable in a global or a list is the first-trace creation idiom;
    # creating it on every trace is TFC010's finding.
    source = """\
        import tensorflow as tf
        _scale = None
        kernels = []

        @tf.function
        def step(x):
            global _scale
            if _scale is None:
                _scale = tf.Variable(2.0)
            if not kernels:
                kernels.append(tf.Variable(tf.zeros([3, 3])))
            kernels.append(x)
            return x * _scale
        """
    [finding] = check(source, CODE)
    assert finding.line == 12


# -- items of outer containers (issue 12) -------------------------------------------------


def test_mutating_an_item_of_an_outer_container():
    source = """\
        import tensorflow as tf
        history = {"loss": []}
        logs = {}
        stats = {"n": 0}

        @tf.function
        def step(x, k):
            loss = tf.reduce_sum(x)
            history["loss"].append(loss)
            logs[k].append(x)
            stats["n"] += 1
            return loss
        """
    findings = check(source, CODE)
    assert [span(f) for f in findings] == [(9, 5, 9, 33), (10, 5, 10, 22), (11, 5, 11, 20)]
    assert findings[2].message == (
        '`stats["n"] += 1` in tf.function `step` changes the Python dict `stats` only while tracing'
    )
    assert "dict `logs`" in findings[1].message
    assert findings[0].message == (
        '`history["loss"].append(loss)` in tf.function `step` changes the Python dict `history` '
        "only while tracing"
    )


def test_item_of_a_self_attribute_container_but_not_of_a_parameter():
    source = """\
        import tensorflow as tf

        class Trainer:
            def __init__(self):
                self.history = {"loss": []}

            @tf.function
            def step(self, x, logs):
                self.history["loss"].append(x)
                logs["loss"].append(x)      # a parameter: its type is not known here
                return x
        """
    [finding] = check(source, CODE)
    assert span(finding) == (9, 9, 9, 39)
    assert "dict `self.history`" in finding.message


def test_items_of_containers_made_in_the_function_and_tensor_arrays_are_silent():
    source = """\
        import tensorflow as tf

        @tf.function
        def step(xs):
            history = {"loss": []}
            stats = {"n": 0}
            for x in xs:
                history["loss"].append(tf.reduce_sum(x))
                stats["n"] += 1
            losses = tf.TensorArray(tf.float32, size=0, dynamic_size=True)
            for i in tf.range(tf.shape(xs)[0]):
                losses = losses.write(i, tf.reduce_sum(xs[i]))
            return losses.stack(), history["loss"]
        """
    assert check(source, CODE) == []


# -- helpers called from the trace --------------------------------------------------------


def test_module_level_helper_mutating_outer_state():
    source = """\
        import tensorflow as tf
        seen = []
        calls = 0

        def remember(x):
            global calls
            calls += 1
            seen.append(x)

        @tf.function
        def step(x):
            remember(x)
            return x

        remember(tf.constant(0.0))
        """
    findings = check(source, CODE)
    assert [span(f) for f in findings] == [(7, 5, 7, 15), (8, 5, 8, 19)]
    assert findings[0].message == (
        "`remember` is called from tf.function `step`, so `calls += 1` in it changes the "
        "Python global `calls` only while tracing, not on every call"
    )
    assert "`remember` is called from tf.function `step`" in findings[1].message


def test_helper_mutating_its_own_or_the_tf_functions_locals_is_silent():
    source = """\
        import tensorflow as tf
        seen = []

        def summarize(xs):
            parts = []
            parts.append(tf.reduce_sum(xs))   # the helper's own list
            return parts

        def only_eager(x):
            seen.append(x)                    # never called from the trace

        @tf.function
        def step(x):
            total = 0
            collected = []

            def add(v):
                nonlocal total
                total = total + 1             # the tf.function's own local
                collected.append(v)           # likewise
            add(x)
            return summarize(x), collected

        only_eager(1)
        """
    assert check(source, CODE) == []


def test_nested_helper_mutating_module_state_is_reported():
    source = """\
        import tensorflow as tf
        seen = []

        @tf.function
        def step(x):
            def add(v):
                seen.append(v)
            add(x)
            return x
        """
    [finding] = check(source, CODE)
    assert span(finding) == (7, 9, 7, 23)
    assert "`add` is called from tf.function `step`" in finding.message


def test_method_helper_incrementing_a_python_counter():
    source = """\
        import tensorflow as tf

        class Trainer:
            def __init__(self):
                self.steps = 0
                self.step_var = tf.Variable(0)

            def count(self):
                self.steps += 1

            def count_var(self):
                self.step_var.assign_add(1)

            @tf.function
            def train_step(self, x):
                self.count()
                self.count_var()
                return x
        """
    [finding] = check(source, CODE)
    assert span(finding) == (9, 9, 9, 24)
    assert finding.message == (
        "`self.steps` is a Python number; `count` is called from tf.function `train_step`, "
        "so `self.steps += 1` in it runs only while tracing, not on every call"
    )


def test_helper_in_an_earlier_notebook_cell():
    cells = [
        "import tensorflow as tf\nlosses = []\n\ndef log(x):\n    losses.append(x)",
        "@tf.function\ndef f(x):\n    log(x)\n    return x",
    ]
    [finding] = check_cells(cells, CODE)
    assert (finding.cell, *span(finding)) == (0, 5, 5, 5, 21)


def test_create_once_under_is_none_guard_is_silent_but_unguarded_creation_warns():
    guarded = """\
        import tensorflow as tf
        g = None

        @tf.function
        def draw():
            global g
            if g is None:
                g = tf.random.Generator.from_seed(1)
            return g.normal([])
        """
    assert check(guarded, CODE) == []
    unguarded = guarded.replace("if g is None:", "if True:")
    [finding] = check(unguarded, CODE)
    assert span(finding) == (8, 9, 8, 45)
    assert "global `g`" in finding.message
    assert finding.severity.value == "warning"


def test_is_none_guard_on_another_name_still_warns():
    source = """\
        import tensorflow as tf
        g = None
        other = None

        @tf.function
        def draw():
            global g
            if other is None:
                g = 1
            return tf.constant(0)
        """
    [finding] = check(source, CODE)
    assert span(finding) == (9, 9, 9, 14)


def test_trace_counters_are_information_other_counters_warn():
    source = """\
        import tensorflow as tf
        num_traces = 0
        calls = 0
        traces = []

        class Model(tf.Module):
            def __init__(self):
                self.trace_count = 0
                self.steps = 0

            @tf.function
            def __call__(self, x):
                self.trace_count += 1
                self.steps += 1
                return x

        @tf.function
        def f(x):
            global num_traces, calls
            num_traces += 1
            calls += 1
            traces.append(1)
            return x
        """
    findings = check(source, CODE)
    assert [(f.line, f.severity.value) for f in findings] == [
        (13, "information"),
        (14, "warning"),
        (20, "information"),
        (21, "warning"),
        (22, "information"),
    ]
    assert "runs once per trace, which is what a trace counter wants" in findings[0].message
    assert "`self.trace_count`" in findings[0].message
    assert "`num_traces`" in findings[2].message
    assert "`traces`" in findings[4].message


def test_init_scope_body_is_silent_but_the_same_code_outside_it_warns():
    source = """\
        import tensorflow as tf

        class Counter(tf.Module):
            def __init__(self):
                self.counter = 0
                self.log = []

            @tf.function
            def __call__(self, x):
                if self.counter == 0:
                    with tf.init_scope():
                        self.counter += 1
                        self.log.append("first")
                return x
        """
    assert check(source, CODE) == []
    outside = source.replace("with tf.init_scope():", "with tf.name_scope('n'):")
    findings = check(outside, CODE)
    assert [(f.line, f.severity.value) for f in findings] == [(12, "warning"), (13, "warning")]


def test_item_created_once_under_an_if_not_guard_is_silent():
    # Sonnet's tests: build a module on the first trace, keep it in a one-item list.
    source = """\
        import tensorflow as tf

        mod = [None]
        made = []

        @tf.function
        def f(x):
            if not mod[0]:
                mod[0] = tf.keras.layers.Dense(2)
            made[0] = x        # not guarded: still a change while tracing only
            return mod[0](x)
        """
    [finding] = check(source, CODE)
    assert finding.line == 10


def test_a_guard_on_one_slot_covers_filling_the_others():
    source = """\
        import tensorflow as tf

        slots = [None, None]
        seen = []

        @tf.function
        def f():
            if slots[0] is None:
                slots[0] = tf.Variable(1.0)
                slots[1] = tf.Variable(2.0)
            seen.append(1)
            return slots[0] + slots[1]
        """
    [finding] = check(source, CODE)
    assert finding.line == 11  # the unguarded append is still a trace-time change


# -- Keras 3 (issue #26): methods a compiled model traces, without TensorFlow imported -------


def test_python_counter_and_outer_list_in_a_compiled_keras_model():
    source = """\
        import keras

        batch_log = []

        class Forecaster(keras.Model):
            def __init__(self):
                super().__init__()
                self.head = keras.layers.Dense(1)
                self.updates = 0
                self.seen = keras.Variable(0, trainable=False)

            def call(self, window):
                batch_log.append(window)
                return self.head(window)

            def train_step(self, data):
                self.updates += 1
                self.seen.assign_add(1)
                return super().train_step(data)

        forecaster = Forecaster()
        forecaster.compile(optimizer="adam", loss="mse")
        """
    first, second = check(source, CODE)
    assert first.line == 13 and "Keras-traced `Forecaster.call`" in first.message
    assert "Python list `batch_log`" in first.message
    assert second.line == 17 and "`self.updates` is a Python number" in second.message
    assert "Keras-traced `Forecaster.train_step`" in second.message


def test_same_changes_in_eager_keras_code_are_silent():
    source = """\
        import keras

        batch_log = []

        class Forecaster(keras.Model):
            def __init__(self):
                super().__init__()
                self.updates = 0
                batch_log.append("created")

            def train_step(self, data):
                self.updates += 1
                batch_log.append(data)
                return super().train_step(data)

        forecaster = Forecaster()
        forecaster.compile(optimizer="adam", loss="mse", run_eagerly=True)
        """
    assert check(source, CODE) == []


def test_train_step_of_a_model_stepped_by_hand_beside_a_compiled_sequential_is_silent():
    # A Sequential's fit runs Keras's own train_step; the subclass's runs eagerly here.
    source = """\
        import keras

        class Auditor(keras.Model):
            def __init__(self):
                super().__init__()
                self.history = {"loss": []}

            def train_step(self, data):
                self.history["loss"].append(float(data[1].mean()))
                return {}

        auditor = Auditor()
        auditor.train_step((None, batch_targets))
        baseline = keras.Sequential([keras.layers.Dense(1)])
        baseline.compile(optimizer="adam", loss="mse")
        """
    assert check(source, CODE) == []
