from __future__ import annotations

from jupyterlab_tfcoach.analysis.testing import FixCase, check, check_cells, fixed, span

CODE = "TFC024"

# Runnable: a layer made with an integer seed adds the same noise on every call; with a
# SeedGenerator two calls differ.
JITTER = """\
import keras
import numpy as np
from keras import ops

class Jitter(keras.layers.Layer):
    def __init__(self, scale, seed=None, **kwargs):
        super().__init__(**kwargs)
        self.scale = scale
        self.seed = seed

    def call(self, x):
        return x + keras.random.normal(ops.shape(x), stddev=self.scale, seed=self.seed)

jitter = Jitter(0.3, seed=5)
first = jitter(np.zeros((2, 3), dtype="float32"))
second = jitter(np.zeros((2, 3), dtype="float32"))
print(bool(ops.any(first != second)))
"""
FIX_CASES = (
    FixCase(
        CODE,
        JITTER,
        JITTER.replace(
            "        self.seed = seed\n",
            "        self.seed = seed\n"
            "        self.noise_seeds = keras.random.SeedGenerator(seed)\n",
        ).replace("seed=self.seed)", "seed=self.noise_seeds)"),
        "a seed given where the layer is made",
    ),
)


def test_a_literal_seed_in_a_layers_call_gets_a_seed_generator():
    source = """\
        import keras
        from keras import layers

        class MaskSome(layers.Layer):
            def __init__(self, rate, **kwargs):
                super().__init__(**kwargs)
                self.rate = rate  # fraction dropped

            def call(self, inputs):
                return keras.random.dropout(inputs, self.rate, seed=1234)
        """
    [finding] = check(source, CODE)
    assert span(finding) == (10, 61, 10, 65)
    assert finding.message == (
        "`keras.random.dropout(...)` with `seed=1234` draws the same numbers on every call of "
        "`MaskSome.call`: in Keras 3 an integer seed makes the draw stateless, so every step "
        "gets the same noise. Create `keras.random.SeedGenerator(1234)` once (in `__init__`) "
        "and pass it as `seed=`: it advances on each draw"
    )
    lines = fixed(source, finding).splitlines()
    assert lines[6:8] == [
        "        self.rate = rate  # fraction dropped",
        "        self.seed_generator = keras.random.SeedGenerator(1234)",
    ]
    assert lines[10] == (
        "        return keras.random.dropout(inputs, self.rate, seed=self.seed_generator)"
    )


def test_module_constants_defaults_loops_and_maps():
    source = """\
        import tensorflow as tf
        from keras import random as kr

        NOISE_SEED = 9

        class Critic(tf.keras.Model):
            def __init__(self, seed=3):
                super().__init__()
                self.seed = seed

            def train_step(self, data):
                return kr.uniform((4,), seed=self.seed)

        def perturb(batch, seed=0):
            return batch + kr.normal(tf.shape(batch), seed=seed)

        @tf.function
        def sample():
            return tf.keras.random.truncated_normal((3,), seed=NOISE_SEED)

        def shuffle_rows(x):
            return kr.shuffle(x, seed=NOISE_SEED)

        for step in range(10):
            perturb(tf.zeros(3))
        pipeline = dataset.map(shuffle_rows)
        critic = Critic()
        """
    findings = check(source, CODE)
    assert [(f.line, f.fix is not None) for f in findings] == [
        (12, True),
        (15, False),
        (19, False),
        (22, False),
    ]
    assert "once (outside `perturb`)" in findings[1].message
    assert "(an integer by default)" in findings[1].message


def test_the_same_layer_in_notebook_cells():
    cells = [
        "import keras\nimport numpy as np",
        "class Shake(keras.layers.Layer):\n"
        "    def __init__(self, amount, seed):\n"
        "        super().__init__()\n"
        "        self.amount = amount\n"
        "        self.seed = seed\n"
        "    def call(self, x):\n"
        "        return x + self.amount * keras.random.uniform(keras.ops.shape(x), seed=self.seed)",
        "shaker = Shake(0.1, 17)",
    ]
    [finding] = check_cells(cells, CODE)
    assert (finding.cell, finding.line) == (1, 7)
    assert "(an integer the object is made with)" in finding.message


def test_generators_none_tf_random_and_one_off_draws_stay_quiet():
    source = """\
        import keras
        import tensorflow as tf

        class Fine(keras.layers.Layer):
            def __init__(self, seed=None):
                super().__init__()
                self.seed = seed
                self.generator = keras.random.SeedGenerator(seed)

            def call(self, x):
                a = keras.random.normal(keras.ops.shape(x), seed=self.generator)
                b = keras.random.normal(keras.ops.shape(x), seed=self.seed)
                c = keras.random.normal(keras.ops.shape(x))
                d = tf.random.normal(tf.shape(x), seed=42)
                return x + a + b + c + d

        class Changing(keras.layers.Layer):
            def __init__(self, seed=1):
                super().__init__()
                self.seed = keras.random.SeedGenerator(seed)

            def call(self, x):
                return keras.random.dropout(x, 0.5, seed=self.seed)

        def make_data(n):
            return keras.random.normal((n, 2), seed=0)

        @tf.function
        def draw(seed_tensor):
            return tf.random.stateless_normal((2,), seed=seed_tensor)

        class Defaulted(keras.layers.Layer):
            def __init__(self, seed=5):
                super().__init__()
                self.seed = seed

            def call(self, x):
                return keras.random.normal(keras.ops.shape(x), seed=self.seed)

        def varied(x, seed=0):
            return x + keras.random.normal((3,), seed=seed)

        for step in range(3):
            varied(0.0, seed=step)
        made = Defaulted(seed=keras.random.SeedGenerator(2))
        data = make_data(100)
        fixed_noise = keras.random.normal((4,), seed=7)
        """
    assert check(source, CODE) == []
