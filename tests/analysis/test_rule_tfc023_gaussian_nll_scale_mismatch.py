from __future__ import annotations

from jupyterlab_tfcoach.analysis.testing import FixCase, check, check_cells, fixed, span

CODE = "TFC023"

# Runnable: the mean Gaussian negative log-likelihood of two readings, with the spread as
# a standard deviation (squared in the second term, not in the log).
SCORE = """\
import numpy as np
import tensorflow as tf

def gaussian_nll(y, mean, scale):
    return np.mean(0.5 * np.log(2 * np.pi * scale) + (y - mean) ** 2 / (2 * scale**2))

readings, centres = np.array([1.0, 2.0]), np.array([0.5, 2.5])
print(round(float(gaussian_nll(readings, centres, np.array([2.0, 2.0]))), 6))
"""
# Runnable, TensorFlow, the two terms on separate lines of one function.
LOSS = """\
import math
import tensorflow as tf

def heteroscedastic_loss(target, centre, spread):
    log_part = 0.5 * tf.math.log(2.0 * math.pi * spread)
    fit_part = tf.square(target - centre) / (2.0 * tf.square(spread))
    return tf.reduce_mean(log_part + fit_part)

loss = heteroscedastic_loss(tf.constant([3.0]), tf.constant([1.0]), tf.constant([4.0]))
print(round(float(loss), 5))
"""
FIX_CASES = (
    FixCase(
        CODE,
        SCORE,
        SCORE.replace("np.pi * scale)", "np.pi * scale**2)"),
        "numpy score",
    ),
    FixCase(
        CODE,
        LOSS,
        LOSS.replace("math.pi * spread)", "math.pi * spread**2)"),
        "tensorflow loss on two lines",
    ),
)


def test_a_log_term_taking_the_standard_deviation_for_a_variance():
    source = """\
        import numpy as np
        import tensorflow as tf

        def per_point_nll(obs, loc, sigma):
            return 0.5 * np.log(2 * np.pi * sigma) + 0.5 * (obs - loc) ** 2 / sigma**2
        """
    [finding] = check(source, CODE)
    assert span(finding) == (5, 18, 5, 43)
    assert finding.message == (
        "In `per_point_nll`, `np.log(2 * np.pi * sigma)` takes `sigma` for a variance, but "
        "`0.5 * (obs - loc) ** 2 / sigma**2` squares it in the same formula, so `sigma` is a "
        "standard deviation: the Gaussian log term is "
        "`log(2 * pi * sigma**2)`, and this one is off by a multiple of `log(sigma)` per "
        "example (no error, just a wrong likelihood). Square `sigma` inside the log"
    )
    assert fixed(source, finding).splitlines()[4] == (
        "    return 0.5 * np.log(2 * np.pi * sigma**2) + 0.5 * (obs - loc) ** 2 / sigma**2"
    )


def test_in_a_notebook_cell_with_keras_ops_and_an_indexed_spread():
    cells = [
        "import numpy as np\nfrom keras import ops",
        "score = ops.mean(0.5 * ops.log(2 * np.pi * out[:, 1]) + ops.square(t - out[:, 0])"
        " / (2 * ops.square(out[:, 1])))",
    ]
    [finding] = check_cells(cells, CODE)
    assert (finding.cell, finding.line) == (1, 1)
    assert finding.fix is not None
    assert [edit.new_text for edit in finding.fix.edits] == ["out[:, 1]**2"]


def test_consistent_likelihoods_and_other_logs_stay_quiet():
    source = """\
        import math
        import numpy as np
        import tensorflow as tf

        def with_variance(y, mu, var):
            return np.mean(0.5 * np.log(2 * np.pi * var) + (y - mu) ** 2 / (2 * var))

        def with_std(y, mu, s):
            return np.mean(0.5 * np.log(2 * np.pi * s**2) + (y - mu) ** 2 / (2 * s**2))

        def with_log_std(y, mu, s):
            return tf.reduce_mean(
                0.5 * tf.math.log(2.0 * math.pi) + tf.math.log(s) + tf.square(y - mu) / (2.0 * s**2)
            )

        def laplace(y, mu, b):
            return np.mean(np.log(2 * b) + np.abs(y - mu) / b)

        def unrelated(a, s, t):
            entropy = 0.5 * np.log(2 * np.pi * np.e * s)
            return entropy, a / (2 * t**2)
        """
    assert check(source, CODE) == []
