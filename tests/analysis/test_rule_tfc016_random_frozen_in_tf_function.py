from __future__ import annotations

import textwrap

from jupyterlab_tfcoach.analysis.testing import FixCase, check, check_cells, eagerly, fixed, span
from tests.tf_runner import run_tensorflow

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


def test_generator_draws_in_functions_a_dataset_maps_filters_or_flat_maps():
    source = """\
        import random
        import numpy as np
        import tensorflow as tf

        gen = np.random.default_rng(11)
        old_style = np.random.RandomState(4)
        prng = random.Random(3)

        def blur_weight(img):
            return img * gen.beta(2.0, 5.0)

        def repeat_noisy(img):
            return tf.data.Dataset.from_tensors(img + old_style.normal(0.0, 0.2, size=(2,)))

        pics = tf.data.Dataset.from_tensor_slices(np.ones((6, 2), dtype=np.float32))
        a = pics.map(blur_weight)
        b = pics.flat_map(repeat_noisy)
        c = pics.filter(lambda img: img[0] > prng.random())
        """
    findings = check(source, CODE)
    assert [f.line for f in findings] == [10, 13, 18]
    beta, normal, uniform = findings
    assert "`gen.beta(2.0, 5.0)` in Dataset.map function `blur_weight`" in beta.message
    assert beta.fix is None
    assert "`tf.random.Generator`" in beta.message and "`tf.random.stateless_*`" in beta.message
    assert (
        "a Beta draw is `g / (g + h)` with `g = tf.random.gamma([], 2.0)` and "
        "`h = tf.random.gamma([], 5.0)`" in beta.message
    )
    assert fixed(source, normal).splitlines()[12].strip() == (
        "return tf.data.Dataset.from_tensors(img + "
        "tf.random.normal((2,), mean=0.0, stddev=0.2, dtype=tf.float64))"
    )
    assert "lambda img: img[0] > tf.random.uniform([])" in fixed(source, uniform)


def test_generator_look_alikes_are_silent():
    source = """\
        import numpy as np
        import tensorflow as tf

        gen = np.random.default_rng(11)
        tf_gen = tf.random.Generator.from_seed(2)
        offsets = gen.normal(size=(2,)).astype("float32")  # eager: drawn once on purpose

        def host_noise(img):
            return (img + gen.normal(0.0, 0.1, size=img.shape)).astype(np.float32)

        def shift(img):
            return img + offsets + tf_gen.normal([2]) + tf.random.uniform([2])

        def wrapped(img):
            return tf.numpy_function(host_noise, [img], tf.float32)

        pics = tf.data.Dataset.from_tensor_slices(np.ones((6, 2), dtype=np.float32))
        a = pics.map(shift)
        b = pics.map(wrapped)
        c = pics.map(lambda img: tf.py_function(host_noise, [img], tf.float32))
        print(gen.beta(2.0, 5.0))
        """
    source = textwrap.dedent(source)
    assert check(source, CODE) == []
    # A name a generator is only one of the bindings of is not known to be a generator.
    mixed = source.replace(
        "def shift(img):", "gen = tf_gen if len(offsets) else gen\n\ndef shift(img):"
    ).replace("tf_gen.normal([2])", "gen.normal([2])")
    assert check(mixed, CODE) == []


# A Beta draw in a mapped function: NumPy's generator draws one number for every batch; the
# recipe the message gives (two Gamma draws) draws a new one for each.
BETA_MAPPED = """\
    import numpy as np
    import tensorflow as tf

    gen = np.random.default_rng(11)

    def weigh(batch):
        mix = gen.beta(0.5, 0.5)
        return batch * tf.cast(mix, tf.float32)

    ds = tf.data.Dataset.from_tensor_slices(np.ones((40, 1), dtype=np.float32)).batch(4)
    print(len({round(float(w[0, 0]), 6) for w in ds.map(weigh)}))
    """


def test_the_beta_recipe_draws_a_new_weight_for_each_batch():
    [finding] = check(BETA_MAPPED, CODE)
    assert "`g = tf.random.gamma([], 0.5)` and `h = tf.random.gamma([], 0.5)`" in finding.message
    recipe = textwrap.dedent(BETA_MAPPED).replace(
        "    mix = gen.beta(0.5, 0.5)\n",
        "    g = tf.random.gamma([], 0.5)\n"
        "    h = tf.random.gamma([], 0.5)\n"
        "    mix = g / (g + h)\n",
    )
    assert check(recipe, CODE) == []
    frozen, drawn = run_tensorflow(BETA_MAPPED, recipe)
    assert (frozen.error, frozen.stdout) == (None, "1\n")  # every batch got the same weight
    assert drawn.error is None and int(drawn.stdout) == 10  # ten batches, ten weights


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

MAPPED_GENERATOR_NOISE = """\
    import numpy as np
    import tensorflow as tf

    noise_gen = np.random.default_rng(8)

    def smear(x):
        return x + noise_gen.normal(0.0, 0.5, size=(3,))

    ds = tf.data.Dataset.from_tensor_slices(np.zeros((5, 3))).map(smear)
    rows = [row.numpy().tolist() for row in ds]
    print(len({tuple(r) for r in rows}) == 5, rows[0][0] != 0.0)
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
    FixCase(
        CODE,
        MAPPED_GENERATOR_NOISE,
        MAPPED_GENERATOR_NOISE.replace(".map(smear)", "").replace(
            "rows = [row.numpy().tolist() for row in ds]",
            "rows = [smear(row).tolist() for row in np.zeros((5, 3))]",
        ),
        "a NumPy generator's draw in a Dataset.map function",
    ),
)
