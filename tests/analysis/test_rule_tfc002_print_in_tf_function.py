from __future__ import annotations

from jupyterlab_tfcoach.analysis.testing import FixCase, check, check_cells, fixed, span

CODE = "TFC002"


def test_print_in_decorated_function_gets_tf_print():
    source = """\
        import tensorflow as tf

        @tf.function
        def step(x):
            print("x is", x)
            return x * 2
        """
    [finding] = check(source, CODE)
    assert span(finding) == (5, 5, 5, 21)
    assert "`step`" in finding.message
    assert fixed(source, finding).splitlines()[4] == '    tf.print("x is", x)'


def test_fix_uses_the_files_own_alias_and_decorator_call():
    source = """\
        import tensorflow as t

        @t.function(jit_compile=True)
        def step(x):
            print(x, sep=", ")
        """
    [finding] = check(source, CODE)
    assert fixed(source, finding).splitlines()[4] == '    t.print(x, sep=", ")'


def test_function_wrapped_later_and_from_import():
    source = """\
        from tensorflow import function

        def body(x):
            print(x)
            return x

        body = function(body)
        """
    [finding] = check(source, CODE)
    assert span(finding) == (4, 5, 4, 13)
    assert finding.fix is None  # no module alias to spell tf.print with


def test_unsupported_keywords_and_fstrings_get_no_fix():
    source = """\
        import sys
        import tensorflow as tf

        @tf.function
        def step(x):
            print(x, file=sys.stderr)
            print(f"x={x}")
        """
    findings = check(source, CODE)
    assert [f.fix for f in findings] == [None, None]


def test_notebook_cells():
    cells = ["import tensorflow as tf", "@tf.function\ndef f(x):\n    print(x)\n    return x"]
    [finding] = check_cells(cells, CODE)
    assert (finding.cell, *span(finding)) == (1, 3, 5, 3, 13)


def test_look_alikes_are_silent():
    source = """\
        import tensorflow as tf

        @tf.function
        def step(x):
            tf.print(x)
            def callback(v):
                print(v)  # nested: may run eagerly via tf.py_function
            return tf.py_function(lambda v: print(v) or v, [x], tf.float32)

        def eager(x):
            print(x)
        """
    assert check(source, CODE) == []


def test_shadowed_print_is_silent():
    source = """\
        import tensorflow as tf
        from rich import print

        @tf.function
        def step(x):
            print(x)
        """
    assert check(source, CODE) == []


def test_print_in_an_eager_only_branch_is_silent():
    # Runs only under tf.config.run_functions_eagerly(True): never while tracing.
    source = """\
        import tensorflow as tf

        @tf.function
        def step(x):
            if tf.executing_eagerly():
                print("eager:", x)
            if not tf.config.functions_run_eagerly():
                pass
            else:
                print("eager too:", x)
            if tf.executing_eagerly():
                pass
            else:
                print("tracing:", x)
            return x
        """
    [finding] = check(source, CODE)
    assert finding.line == 14


# -- code the trace runs outside the tf.function's own body (issue 12) --------------------


def test_nested_function_called_in_the_body_is_traced():
    source = """\
        import tensorflow as tf

        @tf.function
        def step(x):
            def show(v):
                print("value", v)
            show(x)
            return x
        """
    [finding] = check(source, CODE)
    assert span(finding) == (6, 9, 6, 26)
    assert finding.message.startswith(
        "`show` is called from tf.function `step`, so `print(...)` in it runs only while tracing"
    )
    repaired = fixed(source, finding)
    assert repaired.splitlines()[5] == '        tf.print("value", v)'
    assert check(repaired, CODE) == []


def test_nested_function_only_handed_to_py_function_is_silent():
    # The twin of the case above: tf.py_function runs ``show`` eagerly on every call.
    source = """\
        import tensorflow as tf

        @tf.function
        def step(x):
            def show(v):
                print("value", v)
                return v
            return tf.py_function(show, [x], tf.float32)
        """
    assert check(source, CODE) == []


def test_module_level_helper_is_reported_once_on_its_own_line():
    source = """\
        import tensorflow as tf

        def report(x):
            print("x is", x)

        @tf.function
        def step(x):
            report(x)
            report(x + 1)
            return x

        @tf.function
        def other(x):
            report(x)
            return x

        report(tf.constant(1.0))  # an eager call too: still traced from step
        """
    [finding] = check(source, CODE)
    assert span(finding) == (4, 5, 4, 21)
    assert finding.severity.value == "warning"
    assert finding.message == (
        "`report` is called from tf.function `step`, so `print(...)` in it runs only while "
        "tracing; use tf.print to print on every call"
    )
    repaired = fixed(source, finding)
    assert repaired.splitlines()[3] == '    tf.print("x is", x)'
    assert check(repaired, CODE) == []


def test_helpers_that_do_not_run_in_a_trace_are_silent():
    source = """\
        import tensorflow as tf

        def eager_only(x):
            print("eager", x)              # called only eagerly

        def deeper(x):
            print("two calls down", x)     # helper of a helper: not followed

        def helper(x):
            deeper(x)
            return x

        def debug(x):
            print("debugging", x)          # called only under executing_eagerly()

        @tf.function
        def step(x):
            if tf.executing_eagerly():
                debug(x)
            return helper(x)

        eager_only(tf.constant(1.0))
        """
    assert check(source, CODE) == []


def test_method_called_on_self_from_a_tf_function_method():
    source = """\
        import tensorflow as tf

        class Trainer:
            def log(self, loss):
                print("loss", loss)

            def summary(self):
                print("never called from the trace")

            @tf.function
            def train_step(self, x):
                loss = tf.reduce_sum(x)
                self.log(loss)
                return loss
        """
    [finding] = check(source, CODE)
    assert finding.line == 5
    assert "`log` is called from tf.function `train_step`" in finding.message


def test_helper_in_an_earlier_notebook_cell():
    cells = [
        "import tensorflow as tf\n\ndef show(x):\n    print(x)",
        "@tf.function\ndef f(x):\n    show(x)\n    return x",
    ]
    [finding] = check_cells(cells, CODE)
    assert (finding.cell, *span(finding)) == (0, 4, 5, 4, 13)
    assert "`show` is called from tf.function `f`" in finding.message


# -- counting traces on purpose -----------------------------------------------------------


def test_trace_counting_prints_are_information_with_a_fix():
    source = """\
        import tensorflow as tf

        @tf.function
        def step(x):
            print("Tracing with", x)
            print("Retracing!")
            print(f"Traced with {x}")
            print("tracing", x.shape)
            return x
        """
    findings = check(source, CODE)
    assert [f.line for f in findings] == [5, 6, 7, 8]
    assert {f.severity.value for f in findings} == {"information"}
    assert findings[0].message == (
        "`print(...)` in tf.function `step` runs once per trace: fine for counting traces; "
        "use tf.print to see values on every call"
    )
    assert [f.fix is not None for f in findings] == [True, True, False, True]
    assert fixed(source, findings[0]).splitlines()[4] == '    tf.print("Tracing with", x)'


def test_prints_that_do_not_count_traces_stay_warnings():
    # The text must be the first argument and talk about tracing as a word.
    source = """\
        import tensorflow as tf

        @tf.function
        def step(x):
            print(x, "tracing")
            print("x is", x)
            print("traceback of", x)
            return x
        """
    findings = check(source, CODE)
    assert [(f.line, f.severity.value) for f in findings] == [
        (5, "warning"),
        (6, "warning"),
        (7, "warning"),
    ]


def test_trace_counting_print_in_a_helper_names_the_helper():
    source = """\
        import tensorflow as tf

        def announce(x):
            print("tracing step for", x.shape)

        @tf.function
        def step(x):
            announce(x)
            return x
        """
    [finding] = check(source, CODE)
    assert finding.severity.value == "information"
    assert finding.message.startswith(
        "`announce` is called from tf.function `step`, so `print(...)` in it runs once per trace"
    )


# -- Keras 3 (issue #26): methods a compiled model traces, without TensorFlow imported -------


def test_print_in_call_of_a_layer_of_a_compiled_model():
    source = """\
        import keras
        from keras import layers

        class Clip(layers.Layer):
            def __init__(self, limit):
                super().__init__()
                print("limit", limit)

            def build(self, input_shape):
                print("building for", input_shape)

            def call(self, inputs):
                print("clipping", inputs)
                return keras.ops.clip(inputs, -1.0, 1.0)

        net = keras.Sequential([keras.Input((5,)), Clip(1.0), layers.Dense(2)])
        net.compile(optimizer="adam", loss="mse")
        """
    [finding] = check(source, CODE)
    assert span(finding) == (13, 9, 13, 34)
    assert finding.severity == "warning"
    assert "Keras-traced `Clip.call`" in finding.message
    assert finding.fix is None  # no TensorFlow import to spell tf.print with


def test_print_in_train_step_of_a_compiled_model_subclass_under_tf_keras():
    source = """\
        import tensorflow as tf

        class Regressor(tf.keras.Model):
            def train_step(self, data):
                print("step on", data)
                return super().train_step(data)

            def test_step(self, data):
                tf.print("eval on", data)
                return super().test_step(data)

        regressor = Regressor()
        regressor.compile(optimizer="sgd", loss="mae")
        """
    [finding] = check(source, CODE)
    assert finding.line == 5 and "Keras-traced `Regressor.train_step`" in finding.message
    assert fixed(source, finding).splitlines()[4] == '        tf.print("step on", data)'


def test_keras_look_alikes_that_run_eagerly_are_silent():
    source = """\
        import keras

        class Probe(keras.Model):
            def call(self, x):
                print("seen", x)
                return x

        class Tap(keras.layers.Layer):
            def call(self, x):
                print("tap", x)
                return x

        debug = Probe()
        debug.compile(optimizer="sgd", loss="mse", run_eagerly=True)
        """
    assert check(source, CODE) == []  # every compiled model runs eagerly
    no_compile = """\
        from keras import layers

        class Tap(layers.Layer):
            def call(self, x):
                print("tap", x)
                return x

        Tap()(keras_input)
        """
    assert check(no_compile, CODE) == []  # no model compiled: called eagerly here
    flag_later = """\
        import keras

        class Probe(keras.Model):
            def call(self, x):
                print("seen", x)
                return x

        probe = Probe()
        probe.run_eagerly = True
        probe.compile(optimizer="sgd", loss="mse")
        """
    assert check(flag_later, CODE) == []


def test_model_subclass_counts_only_when_its_instance_is_compiled_to_trace():
    source = """\
        import keras

        class Eager(keras.Model):
            def call(self, x):
                print("eager", x)
                return x

        class Traced(keras.Model):
            def call(self, x):
                print("traced", x)
                return x

        a = Eager()
        a.compile(loss="mse", run_eagerly=True)
        b = Traced()
        b.compile(loss="mse")
        """
    [finding] = check(source, CODE)
    assert finding.line == 10


def test_a_model_factory_compiles_the_class_bound_when_it_is_called():
    # A notebook that redefines its model class between runs of one factory: each
    # compile(...) gets the version bound at its call, so only the versions compiled to
    # trace are traced (here the second one, debugged with run_eagerly=True, is not).
    source = """\
        import keras

        class Scorer(keras.Model):
            def train_step(self, batch):
                print("v1 batch", batch)
                return super().train_step(batch)

        def new_scorer(width):
            features = keras.Input((width,))
            scorer = Scorer(features, keras.layers.Dense(3)(features))
            return scorer

        scorer = new_scorer(8)
        scorer.compile(optimizer="adam", loss="mse")

        class Scorer(keras.Model):
            def train_step(self, batch):
                print("v2 batch", batch)
                return super().train_step(batch)

        scorer = new_scorer(8)
        scorer.compile(optimizer="adam", loss="mse", run_eagerly=True)
        """
    [finding] = check(source, CODE)
    assert finding.line == 5 and "Keras-traced `Scorer.train_step`" in finding.message


def test_a_model_of_keras_own_class_traces_no_subclass_train_step():
    # fit() of a Sequential or functional model runs Keras's own train_step; a model
    # subclass can only be nested in it as a layer, so only its call() is traced.
    source = """\
        import tensorflow as tf

        class Halver(tf.keras.Model):
            def call(self, x):
                print("halving", x)
                return x / 2

            def train_step(self, batch):
                print("stepping by hand", batch)
                return {}

        def assemble():
            given = tf.keras.Input(shape=(2,))
            return tf.keras.Model(inputs=given, outputs=tf.keras.layers.Dense(1)(given))

        spares = [Halver()]
        spares[0].train_step((1.0, 2.0))
        net = assemble()
        net.compile(optimizer="sgd", loss="mse")
        stack = tf.keras.Sequential([tf.keras.layers.Dense(1)])
        stack.compile(optimizer="sgd", loss="mse")
        """
    [finding] = check(source, CODE)
    assert finding.line == 5 and "Keras-traced `Halver.call`" in finding.message


def test_a_layer_only_run_on_sample_values_is_in_no_compiled_model():
    # Debugging a layer by running it once on sample data: its instances are called at
    # module level on concrete values (or their result is dropped), so no model holds it.
    source = """\
        import keras
        import numpy as np
        from keras import layers

        class Mixer(layers.Layer):
            def call(self, pair):
                left, right = pair
                print("mixing", left.shape, right.shape)
                return left * right

        class Gate(layers.Layer):
            def call(self, x):
                print("gating", x.shape)
                return x

        probe = keras.random.uniform(shape=(3, 4))
        mixed = Mixer()((probe, probe))
        Mixer()((keras.Input((4,)), keras.Input((4,))))
        mixer = Mixer()
        _ = mixer((np.ones((2, 4)), np.zeros((2, 4))))
        print(mixer.built)

        features = keras.Input((4,))
        gated = Gate()(features)
        model = keras.Model(features, layers.Dense(1)(gated))
        model.compile(optimizer="adam", loss="mse")
        """
    [finding] = check(source, CODE)
    assert finding.line == 13 and "Keras-traced `Gate.call`" in finding.message
    # The same eager check, once the instance also goes into a model: traced.
    joined = source.replace(
        "print(mixer.built)", "stack = keras.Sequential([keras.Input((4,)), mixer])"
    )
    assert [f.line for f in check(joined, CODE)] == [8, 13]


def test_print_in_a_dataset_map_function_but_not_in_the_loop_over_it():
    source = """\
        import tensorflow as tf

        def augment(image):
            print("augmenting", image)
            return image * 2

        def show(image):
            print(image)

        pipeline = tf.data.Dataset.range(8).map(augment).batch(2)
        trace_free = [show(x) for x in pipeline]
        """
    [finding] = check(source, CODE)
    assert finding.line == 4 and "Dataset.map function `augment`" in finding.message


# Proven by tests/analysis/test_fixes_proven.py (parses, finding gone, no new finding). Not
# run: `tf.print` writes to the process's standard error, where the printed text of the
# intended code (Python's `print`, run eagerly) cannot be compared with it.
FIX_CASES = (
    FixCase(
        CODE,
        """\
        import tensorflow as tf

        @tf.function
        def step(x, scale):
            print("step with", x, scale)
            return x * scale
        """,
        note="print of tensors",
    ),
)
