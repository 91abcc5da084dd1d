from __future__ import annotations

from jupyterlab_tfcoach.analysis.testing import FixCase, check, check_cells, fixed, span

CODE = "TFC022"

# Runnable: with both terms 1 and keep = 0.36 the balanced mix is 0.6 + 0.8 = 1.4; the
# unrooted complement gives 0.6 + 0.64.
BLEND = """\
import tensorflow as tf

def blend(signal, noise, keep):
    return tf.sqrt(keep) * signal + (1.0 - keep) * noise

print(round(float(blend(tf.constant(1.0), tf.constant(1.0), tf.constant(0.36))), 4))
"""
# Runnable, the mirror image in NumPy: the square root on the complement, the bare share
# on the other term.
CORRUPT = """\
import numpy as np
import tensorflow as tf

def corrupt(clean, eps, frac):
    return np.sqrt(1 - frac) * clean + frac * eps

print(round(float(corrupt(2.0, 1.0, 0.25)), 4))
"""
FIX_CASES = (
    FixCase(
        CODE,
        BLEND,
        BLEND.replace("(1.0 - keep) * noise", "tf.sqrt(1.0 - keep) * noise"),
        "complement left unrooted",
    ),
    FixCase(
        CODE,
        CORRUPT,
        CORRUPT.replace("frac * eps", "np.sqrt(frac) * eps"),
        "share left unrooted",
    ),
)


def test_a_rooted_share_mixed_with_an_unrooted_complement():
    source = """\
        import tensorflow as tf
        from keras import ops

        def forward_noise(images, eps, step, schedule):
            kept = ops.take(schedule, step)[:, None, None, None]
            return ops.sqrt(kept) * images + (1 - kept) * eps
        """
    [finding] = check(source, CODE)
    assert span(finding) == (6, 39, 6, 47)
    assert finding.message == (
        "In `forward_noise`, one term is weighted by `ops.sqrt(kept)` and the other by "
        "`1 - kept`, its complement without a square root "
        "(`kept = ops.take(schedule, step)[:, None, None, None]`): a mix that keeps the "
        "variance weights its terms by the square roots of `c` and `1 - c`, and this one gives "
        "the term weighted by `1 - kept` a variance of `(1 - kept)**2` instead of `1 - kept`. "
        "Write `ops.sqrt(1 - kept)`"
    )
    assert fixed(source, finding).splitlines()[5] == (
        "    return ops.sqrt(kept) * images + ops.sqrt(1 - kept) * eps"
    )


def test_in_notebook_cells_with_an_indexed_share_and_more_terms():
    cells = [
        "import numpy as np\nimport tensorflow as tf",
        "xt = offset + eps_t * np.sqrt(1.0 - gamma[k]) + gamma[k] * x_start / 1.0",
    ]
    [finding] = check_cells(cells, CODE)
    assert (finding.cell, finding.line) == (1, 1)
    assert "`np.sqrt(gamma[k])`" in finding.message
    assert finding.fix is not None
    assert [edit.new_text for edit in finding.fix.edits] == ["np.sqrt(gamma[k])"]


def test_balanced_mixes_interpolations_and_other_roots_stay_quiet():
    source = """\
        import numpy as np
        import tensorflow as tf

        def balanced(x0, noise, ab):
            return tf.sqrt(ab) * x0 + tf.sqrt(1.0 - ab) * noise

        def lerp(a, b, t):
            return t * a + (1 - t) * b

        def correlated(z1, z2, rho):
            return np.sqrt(1 - rho**2) * z1 + rho * z2

        def langevin(x, grad, step, z):
            return x + 0.5 * step * grad + np.sqrt(step) * z

        def ema(avg, value, decay):
            return decay * avg + (1 - decay) * value

        def two_schedules(x, eps, a, b):
            return tf.sqrt(a) * x + (1 - b) * eps

        def rms(v, g, rho):
            return np.sqrt(rho * v + (1 - rho) * g**2)
        """
    assert check(source, CODE) == []
