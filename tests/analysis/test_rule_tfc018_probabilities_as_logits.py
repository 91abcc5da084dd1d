from __future__ import annotations

from jupyterlab_tfcoach.analysis.testing import FixCase, check, check_cells, fixed, span

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
)
