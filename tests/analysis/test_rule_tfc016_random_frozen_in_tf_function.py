from __future__ import annotations

from jupyterlab_tfcoach.analysis.testing import FixCase, check, check_cells, eagerly, fixed, span

CODE = "TFC016"


def test_numpy_draw_in_a_tf_function_becomes_the_tf_random_op():
    source = """\
        import numpy as np
        import tensorflow as tf

        @tf.function
        def noisy_step(x):
            noise = np.random.normal(0.0, 0.1, size=(8, 4)).astype("float32")
            return x + noise
        """
    [finding] = check(source, CODE)
    assert span(finding)[:2] == (6, 13)
    assert "`noisy_step`" in finding.message
    assert "once, while tracing" in finding.message
    line = fixed(source, finding).splitlines()[5]
    assert line == "    noise = tf.random.normal((8, 4), mean=0.0, stddev=0.1)"


def test_draws_keep_numpys_float64_unless_cast_and_python_draws_are_scalars():
    source = """\
        import random
        import numpy as np
        import tensorflow as tf
        from numpy.random import randn

        @tf.function
        def step(x):
            a = np.random.uniform(-1.0, 1.0, (4,))
            b = randn(3, 2)
            c = random.gauss(0.0, 2.0)
            return a, b, c
        """
    findings = check(source, CODE)
    lines = [fixed(source, f).splitlines()[f.line - 1].strip() for f in findings]
    assert lines == [
        "a = tf.random.uniform((4,), minval=-1.0, maxval=1.0, dtype=tf.float64)",
        "b = tf.random.normal((3, 2), dtype=tf.float64)",
        "c = tf.random.normal([], mean=0.0, stddev=2.0)",
    ]


def test_dataset_map_function_and_keras_call_of_a_compiled_model():
    cells = [
        "import numpy as np\nimport keras\nimport tensorflow as tf",
        "def jitter(x):\n    return x + np.random.normal(scale=0.05, size=3)\n\n"
        "ds = tf.data.Dataset.from_tensor_slices(np.zeros((6, 3))).map(jitter)",
        "class Noise(keras.layers.Layer):\n"
        "    def call(self, x):\n"
        "        return x * np.random.uniform(0.9, 1.1)\n\n"
        "model = keras.Sequential([keras.Input((3,)), Noise(), keras.layers.Dense(1)])\n"
        'model.compile(optimizer="adam", loss="mse")',
    ]
    findings = check_cells(cells, CODE)
    assert [(f.cell, f.line) for f in findings] == [(1, 2), (2, 3)]
    assert "Dataset.map function `jitter`" in findings[0].message
    # No size: one number, drawn once; the op keeps the scale.
    assert findings[0].fix is not None
    assert findings[1].fix is not None


def test_draws_without_an_equivalent_op_are_reported_without_a_fix():
    source = """\
        import numpy as np
        import tensorflow as tf

        @tf.function
        def pick(x):
            return tf.gather(x, np.random.choice(4, size=2))
        """
    [finding] = check(source, CODE)
    assert finding.fix is None
    assert "a `tf.random` op" in finding.message


def test_look_alikes_are_silent():
    source = """\
        import random
        import numpy as np
        import tensorflow as tf

        rng = tf.random.Generator.from_seed(1)
        table = np.random.normal(size=(4, 4)).astype("float32")  # eager: drawn once on purpose

        def eager_helper():
            return np.random.normal()

        @tf.function
        def step(x):
            scale = np.float32(2.0)
            noise = tf.random.normal(tf.shape(x)) + rng.normal([])
            if tf.executing_eagerly():
                print(np.random.rand())
            with tf.init_scope():
                seed = random.randint(0, 9)
            return x * scale + noise + table[0, 0]

        def random(n):  # a learner's own function named like the module
            return n

        print(eager_helper())
        """
    assert check(source, CODE) == []


def test_a_local_name_shadowing_the_module_is_not_a_draw():
    source = """\
        import numpy as np
        import tensorflow as tf

        @tf.function
        def step(x):
            np = tf.experimental.numpy
            return np.random.rand(3) if False else x
        """
    assert check(source, CODE) == []


GAN_NOISE = """\
    import numpy as np
    import tensorflow as tf

    @tf.function
    def sample(scale):
        z = np.random.normal(size=(2, 3)).astype("float32")
        return z * scale

    first, second = sample(tf.constant(1.0)), sample(tf.constant(1.0))
    print(bool(tf.reduce_any(first != second)))
    """

MAPPED_JITTER = """\
    import numpy as np
    import tensorflow as tf

    def jitter(x):
        return x + np.random.uniform(-0.5, 0.5, size=(3,))

    ds = tf.data.Dataset.from_tensor_slices(np.zeros((4, 3))).map(jitter)
    rows = [row.numpy().tolist() for row in ds]
    print(len({tuple(r) for r in rows}) == 4, rows[0][0] != 0.0)
    """

# Proven by tests/analysis/test_fixes_proven.py: the fixed code draws new numbers on each call,
# as its Python code does run eagerly (two samples differ; four mapped rows all differ).
FIX_CASES = (
    FixCase(CODE, GAN_NOISE, eagerly(GAN_NOISE), "a tf.function's noise"),
    FixCase(
        CODE,
        MAPPED_JITTER,
        MAPPED_JITTER.replace(".map(jitter)", "").replace(
            "rows = [row.numpy().tolist() for row in ds]",
            "rows = [jitter(row).tolist() for row in np.zeros((4, 3))]",
        ),
        "a Dataset.map function's jitter",
    ),
)
