from __future__ import annotations

from jupyterlab_tfcoach.analysis.testing import check, check_cells, span
from tests.tf_runner import run_tensorflow

CODE = "TFC010"


def test_unconditional_variable_creation():
    source = """\
        import tensorflow as tf

        @tf.function
        def step(x):
            total = tf.Variable(0.0)
            return total + x
        """
    [finding] = check(source, CODE)
    assert span(finding) == (5, 13, 5, 29)
    assert "`step`" in finding.message


def test_method_under_alias_and_from_import():
    source = """\
        import tensorflow as t
        from tensorflow import Variable as V

        class M:
            @t.function
            def __call__(self, x):
                self.v = V(1.0)
                return x
        """
    [finding] = check(source, CODE)
    assert span(finding) == (7, 18, 7, 24)


def test_notebook_cells():
    cells = ["import tensorflow as tf", "@tf.function\ndef f():\n    return tf.Variable(1)"]
    [finding] = check_cells(cells, CODE)
    assert (finding.cell, *span(finding)) == (1, 3, 12, 3, 26)


def test_guarded_or_outside_creation_is_silent():
    source = """\
        import tensorflow as tf
        v = tf.Variable(1.0)

        class M:
            def __init__(self):
                self.w = None

            @tf.function
            def __call__(self, x):
                if self.w is None:
                    self.w = tf.Variable(x)
                return self.w * x

        def eager():
            return tf.Variable(1.0)

        @tf.function
        def uses(x):
            return v * x
        """
    assert check(source, CODE) == []


WRAPPED_INPUT = """\
    import tensorflow as tf

    dense = tf.keras.layers.Dense(3)

    @tf.function
    def input_attribution(batch):
        probe = tf.Variable(tf.cast(batch, tf.float32))
        with tf.GradientTape() as recorder:
            top = tf.reduce_max(dense(probe), axis=1)
        return recorder.gradient(top, probe)

    first = input_attribution(tf.ones([2, 4]))
    second = input_attribution(tf.ones([5, 4]))
    shape = list(second.shape)
    """


def test_a_variable_wrapping_the_argument_for_a_gradient_advises_tape_watch():
    # ``batch`` exists only in the call: "create it outside" cannot be followed. The
    # variable is there for a gradient with respect to the input: watch the input.
    [finding] = check(WRAPPED_INPUT, CODE)
    assert finding.message == (
        "tf.Variable created in tf.function `input_attribution` on every trace: "
        "`probe = tf.Variable(tf.cast(batch, tf.float32))` wraps the argument `batch`, new "
        "at each call; to take a gradient with respect to `batch`, watch the argument "
        "instead: `recorder.watch(batch)` at the top of the `with ... as recorder:` block, "
        "with `batch` in place of `probe`"
    )
    repaired = (
        WRAPPED_INPUT.replace("        probe = tf.Variable(tf.cast(batch, tf.float32))\n", "")
        .replace(
            "with tf.GradientTape() as recorder:\n",
            "with tf.GradientTape() as recorder:\n            recorder.watch(batch)\n",
        )
        .replace("probe", "batch")
    )
    assert check(repaired, CODE) == []
    broken, working = run_tensorflow(WRAPPED_INPUT, repaired, shape="shape")
    assert broken.error == "ValueError"
    assert working.error is None and working.probes["shape"] == [5, 4]


def test_a_variable_wrapping_the_argument_without_a_tape():
    source = """\
        import tensorflow as tf

        @tf.function
        def running(total_in, step):
            acc = tf.Variable(total_in)
            acc.assign_add(step)
            return acc.read_value()
        """
    [finding] = check(source, CODE)
    assert "`acc = tf.Variable(total_in)` wraps the argument `total_in`" in finding.message
    assert "create the variable once outside and `.assign(total_in)`" in finding.message


def test_the_tape_is_found_under_an_imported_alias():
    # The tape is resolved through the file's imports, like the variable: ``GT`` is
    # GradientTape here, so the advice names its tape.
    source = """\
        import tensorflow as tf
        from tensorflow import GradientTape as GT

        @tf.function
        def sensitivity(images):
            frozen = tf.Variable(images)
            with GT() as tape:
                score = tf.reduce_sum(frozen * 2.0)
            return tape.gradient(score, frozen)
        """
    [finding] = check(source, CODE)
    assert "watch the argument instead: `tape.watch(images)`" in finding.message


def test_a_per_call_copy_of_outside_weights_is_told_to_be_tensors():
    source = """\
        import tensorflow as tf

        layers_w = [tf.Variable(tf.ones((2, 2))), tf.Variable(tf.zeros((2,)))]

        @tf.function
        def probe(x, y):
            tmp = [tf.Variable(v) for v in layers_w]
            with tf.GradientTape() as tape:
                err = tf.reduce_sum((x @ tmp[0] + tmp[1] - y) ** 2)
            return tape.gradient(err, tmp)
        """
    [finding] = check(source, CODE)
    assert "a copy of `layers_w` made as new variables at each call" in finding.message
    assert "`tmp = list(layers_w)`" in finding.message
    assert "create it once outside" not in finding.message
    # A comprehension over the function's own argument is not a copy of outside weights.
    own = source.replace("for v in layers_w]", "for v in x]")
    [finding] = check(own, CODE)
    assert "a copy of" not in finding.message
