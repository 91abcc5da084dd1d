"""The generic error entry names the cause from the library itself (issue #25,
``errors/documented_arguments.py``, ``errors/documented_shapes.py``,
``errors/library_checks.py``): errors no family of ``errors/families.py`` knows.

- the documented requirement of the argument the error is about, from the callee's Args
  section, checked against the argument's shape (a letter of the documented shape that
  takes two sizes, across arguments too), or named by the message;
- the message's parameter names read as the learner's arguments;
- the library's own test that failed, its names given the learner's values.

Each entry names the learner's identifiers and no longer ends with "compare them with
what the call expects"; the correct cell beside each stays without an entry."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession
from tests.harness import error_of_failing_cell as failing
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600)]

GENERIC_TAILS = ("what the call expects", "check it against the values listed here")


def _cause_named(text: str) -> None:
    assert not any(tail in text for tail in GENERIC_TAILS), text


def test_documented_shape_the_argument_breaks(kernel: KernelSession) -> None:
    runs_cleanly(kernel, "weights_grid = tf.random.normal((4, 6))\nsquare_ok = tf.eye(3)")
    text = failing(kernel, "inverse = tf.linalg.inv(weights_grid)")["explanation"]
    assert "TensorFlow documents what `tf.linalg.inv` expects" in text
    assert "`input` (your `weights_grid`, a (4, 6) float32 tensor)" in text
    assert "Shape is `[..., M, M]`" in text
    assert "`M` would be both 4 and 6 in `weights_grid`" in text
    _cause_named(text)
    runs_cleanly(kernel, "inverse = tf.linalg.inv(square_ok)")


def test_documented_letters_shared_across_arguments(kernel: KernelSession) -> None:
    runs_cleanly(kernel, "coords = [[0, 0], [1, 1], [2, 2]]\namounts = [1.0, 2.0]")
    cell = (
        "sparse_diag = tf.sparse.SparseTensor(indices=coords, values=amounts, dense_shape=[3, 3])"
    )
    text = failing(kernel, cell)["explanation"]
    assert "`values` (your `amounts`" in text
    assert "shape `[N]`" in text
    assert "`N` is 3 in `coords` but 2 in `amounts`" in text
    _cause_named(text)
    runs_cleanly(
        kernel,
        "sparse_diag = tf.sparse.SparseTensor(indices=coords, values=amounts + [3.0], "
        "dense_shape=[3, 3])",
    )


def test_the_one_argument_that_disagrees_with_all_the_others_is_blamed(
    kernel: KernelSession,
) -> None:
    """Read in call order, coordinates stacked as rows (2, 5) would fix `N` at 2 and make the
    right `values` and `dense_shape` look wrong: the argument that disagrees with every
    other one is the one told."""
    runs_cleanly(
        kernel,
        "import numpy as np\n"
        "heads = np.array([0, 1, 2, 3, 4])\ntails = np.array([1, 2, 3, 4, 0])\n"
        "links = np.stack([heads, tails])\nstrengths = np.ones(5, 'float32')",
    )
    cell = "ring = tf.sparse.SparseTensor(indices=links, values=strengths, dense_shape=[5, 5])"
    text = failing(kernel, cell)["explanation"]
    # Swapping its two axes sets it right: told as swapped (test_errors_swapped_axes.py).
    assert "`links` is (2, 5)" in text, text
    assert "`values` (your `strengths`" not in text, text
    assert "`dense_shape` (your `[5, 5]`" not in text, text
    _cause_named(text)
    runs_cleanly(
        kernel,
        "ring = tf.sparse.SparseTensor(indices=np.stack([heads, tails], axis=1), "
        "values=strengths, dense_shape=[5, 5])",
    )
    # With only two arguments to compare (the values an expression, the dense shape a list of
    # names), the one whose swapped axes make both agree is still the one told.
    runs_cleanly(kernel, "side = 5")
    cell = (
        "ring = tf.sparse.SparseTensor(indices=links, values=np.ones(len(heads), 'float32'), "
        "dense_shape=[side, side])"
    )
    text = failing(kernel, cell)["explanation"]
    assert "`links` is (2, 5)" in text, text
    assert "`dense_shape` (your" not in text, text
    _cause_named(text)
    # Neither argument set right by a swap (a (3, 5) block of coordinates): both are told,
    # each with its documented shape.
    runs_cleanly(kernel, "triples = np.zeros((3, 5), 'int64')")
    cell = (
        "ring = tf.sparse.SparseTensor(indices=triples, values=np.ones(len(heads), 'float32'), "
        "dense_shape=[side, side])"
    )
    text = failing(kernel, cell)["explanation"]
    assert "`indices` (your `triples`" in text, text
    assert "`ndims` is 5 in `triples` but 2 in `[side, side]`" in text, text
    _cause_named(text)


def test_documented_requirement_of_the_argument_the_message_names(
    kernel: KernelSession,
) -> None:
    runs_cleanly(
        kernel,
        "points_t = tf.constant([4.0, 1.0, 7.0, 2.0])\nteam_ids = tf.constant([2, 0, 2, 1])\n"
        "pages = tf.data.Dataset.range(30)",
    )
    text = failing(kernel, "best = tf.math.segment_max(points_t, team_ids)")["explanation"]
    # Unsorted segment ids have their own family now (families_segment_ids.py).
    assert "`team_ids` is not in increasing order" in text
    _cause_named(text)
    text = failing(kernel, "spreads = pages.window(0)")["explanation"]
    assert "`size` (your `0`): \u201cMust be positive.\u201d" in text
    _cause_named(text)
    runs_cleanly(kernel, "best = tf.math.segment_max(points_t, tf.sort(team_ids))")


def test_message_parameters_read_as_the_learner_arguments(kernel: KernelSession) -> None:
    runs_cleanly(
        kernel,
        "poster_t = tf.zeros((20, 20, 3))\nlookup_src = tf.ones((3, 3))\n"
        "where_k = tf.constant([[0, 1, 2]])",
    )
    text = failing(kernel, "tile_t = tf.image.random_crop(poster_t, size=[24, 24, 3])")[
        "explanation"
    ]
    assert "In the message, `value` is your `poster_t` and `size` is your `[24, 24, 3]`" in text
    text = failing(kernel, "picked_k = tf.gather_nd(lookup_src, where_k)")["explanation"]
    assert "In the message, `params` is your `lookup_src`" in text
    runs_cleanly(kernel, "tile_t = tf.image.random_crop(poster_t, size=[16, 16, 3])")


def test_library_check_with_the_learner_values(kernel: KernelSession) -> None:
    runs_cleanly(kernel, "canvas = tf.zeros((32, 48, 3))")
    cell = "piece = tf.image.crop_to_bounding_box(canvas, 20, 0, 16, 48)"
    text = failing(kernel, cell)["explanation"]
    assert (
        "TensorFlow's check `height >= target_height + offset_height` (in "
        "`crop_to_bounding_box`) was false: `height` is 32; `target_height` is your `16`; "
        "`offset_height` is your `20`." in text
    )
    _cause_named(text)
    runs_cleanly(kernel, "piece = tf.image.crop_to_bounding_box(canvas, 10, 0, 16, 48)")


def test_library_line_that_failed_with_a_layer_keyword(kernel: KernelSession) -> None:
    runs_cleanly(kernel, "rows_in = keras.Input(shape=(5, 7))")
    text = failing(kernel, "scaled = keras.layers.BatchNormalization(axis=4)(rows_in)")[
        "explanation"
    ]
    assert "Keras failed on its line `shape = (input_shape[self.axis],)`" in text
    assert "`input_shape` is (None, 5, 7); `self.axis` is your `axis=4`" in text
    _cause_named(text)
    runs_cleanly(kernel, "scaled = keras.layers.BatchNormalization(axis=-1)(rows_in)")


def test_library_line_where_the_argument_meets_a_library_value(
    kernel: KernelSession,
) -> None:
    runs_cleanly(
        kernel,
        "sku_keys = tf.constant([7, 8, 9], dtype=tf.int64)\n"
        "sku_names = tf.constant(['pen', 'ink', 'pad'])",
    )
    cell = (
        "sku_table = tf.lookup.StaticHashTable("
        "tf.lookup.KeyValueTensorInitializer(sku_keys, sku_names), default_value=0)"
    )
    text = failing(kernel, cell)["explanation"]
    assert "ops.convert_to_tensor(default_value, dtype=self._value_dtype)" in text
    assert "`default_value` is your `default_value=0`; `self._value_dtype` is string." in text
    _cause_named(text)
    runs_cleanly(kernel, cell.replace("default_value=0", "default_value='?'"))
    # A library line that only hands the learner's arguments on is not told.
    runs_cleanly(kernel, "left_m = keras.ops.ones((2, 3))\nright_v = keras.ops.ones((3,))")
    text = failing(kernel, "glued = keras.ops.concatenate([left_m, right_v], axis=0)")[
        "explanation"
    ]
    assert "failed on its line" not in text and "documents" not in text
