from __future__ import annotations

import textwrap

import pytest

from jupyterlab_tfcoach.analysis.testing import FixCase, check, check_cells, fixed, span
from tests.tf_runner import run_tensorflow

CODE = "TFC018"


def test_softmax_output_sampled_as_logits_gets_the_scores_back():
    source = """\
        import tensorflow as tf

        def choose(scores):
            probs = tf.nn.softmax(scores)
            return tf.random.categorical(probs, 1)
        """
    [finding] = check(source, CODE)
    assert span(finding) == (5, 34, 5, 39)
    assert "`probs` (from `tf.nn.softmax(...)`) holds probabilities" in finding.message
    assert "`tf.random.categorical` takes logits" in finding.message
    assert fixed(source, finding).splitlines()[4] == "    return tf.random.categorical(scores, 1)"


def test_scores_rebound_after_the_softmax_get_the_log_instead():
    source = """\
        import tensorflow as tf

        def choose(scores):
            probs = tf.nn.softmax(scores)
            scores = scores * 0.0
            return tf.random.categorical(probs, 1)
        """
    [finding] = check(source, CODE)
    assert fixed(source, finding).splitlines()[5] == (
        "    return tf.random.categorical(tf.math.log(probs), 1)"
    )


def test_losses_that_take_logits_given_a_sigmoid_or_softmax():
    cells = [
        "import keras\nimport tensorflow as tf\nfrom keras import ops",
        "bce = keras.losses.BinaryCrossentropy(from_logits=True)\n"
        "def loss_a(y, z):\n    return bce(y, ops.sigmoid(z))",
        "def loss_b(y, z):\n"
        "    return tf.nn.softmax_cross_entropy_with_logits(labels=y, logits=tf.nn.softmax(z))",
        "def loss_c(y, z):\n"
        "    p = keras.activations.softmax(z)\n"
        "    return keras.losses.sparse_categorical_crossentropy(y, p, from_logits=True)",
    ]
    findings = check_cells(cells, CODE)
    assert [(f.cell, f.line) for f in findings] == [(1, 3), (2, 2), (3, 3)]
    assert "`bce` (made with `from_logits=True`)" in findings[0].message
    assert "a sigmoid to them again" in findings[0].message
    assert "a softmax to them again" in findings[1].message
    assert [f.fix is not None for f in findings] == [True, True, True]


def test_an_activation_with_other_arguments_gets_no_fix():
    source = """\
        import tensorflow as tf

        def choose(scores):
            return tf.random.categorical(tf.nn.softmax(scores, axis=0), 1)
        """
    [finding] = check(source, CODE)
    assert finding.fix is None


def test_look_alikes_are_silent():
    source = """\
        import keras
        import tensorflow as tf

        ce = keras.losses.SparseCategoricalCrossentropy()  # takes probabilities
        ce_logits = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

        def step(model, x, y):
            logits = model(x)
            probs = tf.nn.softmax(logits)
            a = ce(y, probs)
            b = ce_logits(y, logits)
            c = tf.random.categorical(logits, 1)
            d = tf.random.categorical(tf.math.log(probs), 1)
            e = tf.nn.sigmoid_cross_entropy_with_logits(labels=tf.sigmoid(y), logits=logits)
            f = keras.losses.binary_crossentropy(y, tf.sigmoid(logits))
            return a, b, c, d, e, f

        def rebound(logits):
            probs = tf.nn.softmax(logits)
            probs = tf.math.log(probs)
            return tf.random.categorical(probs, 1)
        """
    assert check(source, CODE) == []


# Models whose last layer outputs probabilities, compiled with a loss made with
# ``from_logits=True``: each way learners write the activation and the model.
PROBABILITY_MODELS = {
    "a Sequential list, activation=tf.nn.softmax": """\
        net = keras.Sequential([
            keras.Input((5,)),
            keras.layers.Dense(8, activation="relu"),
            keras.layers.Dense(3, activation=tf.nn.softmax),
        ])
        net.compile("sgd", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
        """,
    "add calls ending in a Softmax layer": """\
        net = keras.Sequential()
        net.add(keras.Input((5,)))
        net.add(keras.layers.Dense(3))
        net.add(keras.layers.Softmax())
        xent = keras.losses.CategoricalCrossentropy(from_logits=True)
        net.compile(optimizer="adam", loss=xent)
        """,
    "a functional model ending in Activation('sigmoid')": """\
        inputs = keras.Input((5,))
        score = keras.layers.Dense(1)(inputs)
        chance = keras.layers.Activation("sigmoid")(score)
        net = keras.Model(inputs, chance)
        net.compile("adam", keras.losses.BinaryCrossentropy(from_logits=True))
        """,
    "keras.activations.softmax in a model a function builds": """\
        def build(width):
            return keras.Sequential([
                keras.Input((5,)),
                keras.layers.Dense(width, activation=keras.activations.softmax),
            ])

        net = build(4)
        net.compile(optimizer="adam", loss=keras.losses.CategoricalCrossentropy(from_logits=True))
        """,
}
MODEL_HEAD = "import keras\nimport tensorflow as tf\n"


@pytest.mark.parametrize("case", sorted(PROBABILITY_MODELS))
def test_probability_outputs_compiled_with_a_logits_loss(case: str):
    source = MODEL_HEAD + textwrap.dedent(PROBABILITY_MODELS[case])
    [finding] = check(source, CODE)
    assert finding.message.startswith("the last layer of `net`, ")
    assert (
        "outputs probabilities" in finding.message
        and "(from_logits=True)` is told they are logits" in finding.message
    )
    result = fixed(source, finding)
    assert "from_logits=False" in result and "from_logits=True" not in result


def test_the_message_names_the_layer_and_the_loss():
    source = MODEL_HEAD + textwrap.dedent(
        PROBABILITY_MODELS["a Sequential list, activation=tf.nn.softmax"]
    )
    [finding] = check(source, CODE)
    assert finding.message == (
        "the last layer of `net`, `keras.layers.Dense(3, activation=tf.nn.softmax)`, outputs "
        "probabilities (a softmax), but its loss "
        "`keras.losses.SparseCategoricalCrossentropy(from_logits=True)` is told they are "
        "logits (raw scores): TensorFlow's Keras spots the activation, takes the scores before "
        'it and warns that the output "does not represent logits", so training is right only '
        "by that repair, and the same loss given other probabilities (`net.predict(x)`) applies "
        "a softmax to them again; set `from_logits=False`, or drop the activation from the "
        "last layer and keep `from_logits=True`"
    )
    assert span(finding)[:2] == (8, 80)  # the ``True`` the fix changes


def test_a_loss_object_another_model_shares_gets_no_fix():
    source = MODEL_HEAD + textwrap.dedent(
        """\
        xent = keras.losses.CategoricalCrossentropy(from_logits=True)
        scores = keras.Sequential([keras.Input((5,)), keras.layers.Dense(3)])
        probs = keras.Sequential([keras.Input((5,)), keras.layers.Dense(3, activation="softmax")])
        scores.compile(optimizer="adam", loss=xent)
        probs.compile(optimizer="adam", loss=xent)
        """
    )
    [finding] = check(source, CODE)
    assert (finding.line, finding.fix) == (3, None)
    assert "the last layer of `probs`" in finding.message


def test_model_look_alikes_are_silent():
    source = MODEL_HEAD + textwrap.dedent(
        """\
        probs = keras.Sequential([keras.Input((5,)), keras.layers.Dense(3, activation="softmax")])
        probs.compile("adam", loss=keras.losses.CategoricalCrossentropy(from_logits=False))
        scores = keras.Sequential([keras.Input((5,)), keras.layers.Dense(3)])
        scores.compile("adam", loss=keras.losses.CategoricalCrossentropy(from_logits=True))
        yes_no = keras.Sequential([keras.Input((5,)), keras.layers.Dense(1, activation="sigmoid")])
        yes_no.compile(optimizer="adam", loss=keras.losses.BinaryCrossentropy())
        flag = keras.Sequential([keras.Input((5,)), keras.layers.Dense(1, activation="sigmoid")])
        flag.compile(optimizer="adam", loss=keras.losses.BinaryCrossentropy(from_logits=False))
        gated = keras.Sequential([
            keras.Input((5,)),
            keras.layers.Dense(4, activation="softmax"),
            keras.layers.Dense(2),
        ])
        gated.compile(optimizer="adam", loss=keras.losses.CategoricalCrossentropy(from_logits=True))
        named = keras.Sequential([keras.Input((5,)), keras.layers.Dense(3, activation="softmax")])
        named.compile(optimizer="adam", loss="categorical_crossentropy")
        backbone = keras.applications.MobileNetV2(weights=None, classes=3)
        backbone.compile("adam", loss=keras.losses.CategoricalCrossentropy(from_logits=True))
        """
    )
    assert check(source, CODE) == []


GREEDY_POLICY = """\
    import tensorflow as tf

    tf.random.set_seed(0)
    scores = tf.constant([[6.0, 0.0]])
    probs = tf.nn.softmax(scores)
    actions = tf.random.categorical(probs, 2000)
    print(float(tf.reduce_mean(tf.cast(actions == 0, tf.float32))) > 0.95)
    """

SIGMOID_LOSS = """\
    import tensorflow as tf

    labels = tf.constant([1.0, 0.0, 1.0])
    z = tf.constant([4.0, -4.0, 3.0])
    per_example = tf.nn.sigmoid_cross_entropy_with_logits(labels=labels, logits=tf.sigmoid(z))
    loss = tf.reduce_mean(per_example)
    print(round(float(loss), 3))
    """

# Four separate clusters, one-hot labels, a model ending in a softmax, its loss made with
# ``from_logits=True``. Printed: whether fit's loss fell, whether Keras warned that the output
# "does not represent logits" (its repair: it took the scores before the softmax), and whether
# the same loss object given the model's predictions agrees with `evaluate` (without the
# repair it applies a second softmax: its loss cannot go below log(1 + 3 / e) = 0.74).
SOFTMAX_MODEL = """\
    import warnings
    import numpy as np
    import keras
    import tensorflow as tf

    keras.utils.set_random_seed(3)
    centres = np.array([[4.0, 4.0], [-4.0, 4.0], [4.0, -4.0], [-4.0, -4.0]], dtype="float32")
    kinds = np.arange(240) % 4
    points = centres[kinds] + np.random.default_rng(3).normal(0, 0.5, (240, 2)).astype("float32")
    onehot = keras.utils.to_categorical(kinds, 4)
    clf = keras.Sequential([
        keras.Input((2,)),
        keras.layers.Dense(16, activation="relu"),
        keras.layers.Dense(4, activation="softmax"),
    ])
    clf.compile(optimizer=keras.optimizers.Adam(0.05),
                loss=keras.losses.CategoricalCrossentropy(from_logits=True))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        history = clf.fit(points, onehot, epochs=40, batch_size=32, verbose=0)
        evaluated = clf.evaluate(points, onehot, verbose=0)
    repaired = any("does not represent logits" in str(w.message) for w in caught)
    again = float(clf.loss(onehot, clf.predict(points, verbose=0)))
    print(history.history["loss"][-1] < 0.3, repaired, abs(again - evaluated) < 1e-3)
    """


def test_keras_repairs_the_double_softmax_in_fit_only_and_the_fix_needs_no_repair():
    [finding] = check(SOFTMAX_MODEL, CODE)
    repaired = fixed(SOFTMAX_MODEL, finding)
    broken, fixed_run = run_tensorflow(SOFTMAX_MODEL, repaired)
    assert (broken.error, broken.stdout) == (None, "True True False\n")
    assert (fixed_run.error, fixed_run.stdout) == (None, "True False True\n")


# Proven by tests/analysis/test_fixes_proven.py: fixed, the sampler picks the preferred action
# as often as the scores say (not about 73% of the time), and the loss is the small loss of
# confident right predictions (not 0.5 and more).
FIX_CASES = (
    FixCase(
        CODE,
        GREEDY_POLICY,
        GREEDY_POLICY.replace(
            "tf.random.categorical(probs, 2000)", "tf.random.categorical(scores, 2000)"
        ),
        "a policy sampled from its probabilities",
    ),
    FixCase(
        CODE,
        SIGMOID_LOSS,
        SIGMOID_LOSS.replace("logits=tf.sigmoid(z)", "logits=z"),
        "a sigmoid given to a loss that takes logits",
    ),
    FixCase(
        CODE,
        SOFTMAX_MODEL,
        SOFTMAX_MODEL.replace("from_logits=True", "from_logits=False"),
        "a softmax model compiled with a logits loss",
    ),
)
