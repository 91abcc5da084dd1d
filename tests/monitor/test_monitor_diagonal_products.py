"""A matrix multiplied element by element with a diagonal scaling matrix
(``symptoms/diagonal_products.py``): ``S * C * S`` keeps only ``C``'s diagonal where the
matrix product ``S @ C @ S`` was meant. The note names the diagonal matrix, the matrix
whose off-diagonal entries are lost, and gives the statement written with ``@``; the
fixed cell runs and computes the product (a correlation matrix here). A 0/1 identity
used as a mask, two diagonal matrices, and the product written with ``@`` stay silent."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, checked_report, note_texts, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600)]

ELEMENT_WISE = "multiplies element by element"

DATA = (
    "rng = np.random.default_rng(3)\n"
    "samples = rng.normal(size=(200, 4)) @ rng.normal(size=(4, 4))\n"
    "C = np.cov(samples, rowvar=False)\n"
    "S = np.diag(1.0 / np.sqrt(np.diag(C)))"
)


def diagonal_notes(kernel: KernelSession, cell: str) -> list[str]:
    report = checked_report(run(kernel, cell))
    return [text for text in note_texts(report) if ELEMENT_WISE in text]


def test_a_correlation_from_a_covariance_is_told_and_fixed(kernel: KernelSession) -> None:
    run(kernel, DATA)
    cell = "R = S * C * S"
    found = diagonal_notes(kernel, cell)
    assert len(found) == 1, found
    text = found[0]
    assert "`S` is a diagonal matrix" in text
    assert "the product keeps only the diagonal of `C`, whose 12 nonzero entries" in text
    assert "`R` is a diagonal matrix." in text
    fix = text.rsplit("`", 2)[-2]
    assert fix == "R = S @ C @ S"
    assert diagonal_notes(kernel, fix) == []
    corrcoef = "np.corrcoef(samples, rowvar=False)"
    assert value_of(kernel, f"bool(np.allclose(R, {corrcoef}))") is True


def test_tensors_made_by_tf_linalg_diag(kernel: KernelSession) -> None:
    run(
        kernel,
        "gains = tf.linalg.diag(tf.constant([2.0, 0.5, 3.0]))\n"
        "mix = tf.reshape(tf.range(1.0, 10.0), (3, 3))",
    )
    found = diagonal_notes(kernel, "print(tf.reduce_sum(gains * mix))")
    assert len(found) == 1, found
    fix = found[0].rsplit("`", 2)[-2]
    assert fix == "print(tf.reduce_sum(gains @ mix))"
    run(kernel, "scaled = gains @ mix")
    # Row i of mix scaled by gain i.
    assert value_of(kernel, "scaled.numpy()[:, 0].tolist()") == [2.0, 2.0, 21.0]


def test_masks_and_diagonal_pairs_stay_silent(kernel: KernelSession) -> None:
    run(kernel, DATA)
    # The identity as a 0/1 mask keeps the diagonal on purpose.
    assert diagonal_notes(kernel, "variances = C * np.eye(4)") == []
    # Two diagonal matrices: element-wise and matrix products agree.
    assert diagonal_notes(kernel, "S2 = S * S") == []
    assert diagonal_notes(kernel, "R = S @ C @ S") == []
    # A name rebound later in the cell: its value is not the one the product read.
    assert diagonal_notes(kernel, "T = S * C\nS = np.diag(np.full(4, 2.0))") == []
