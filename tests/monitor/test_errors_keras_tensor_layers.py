"""A TensorFlow function called on a functional model's KerasTensors (issue #25,
``errors/families_keras_tensors.py``): the fix names ``keras.ops``'s function of the same
work when the kernel's Keras has one (found by the TensorFlow name's last part too:
``tf.nn.space_to_depth`` is ``keras.ops.space_to_depth``), else wraps the learner's own
call in a ``Lambda`` layer (one symbolic name: the lambda's parameter takes it; several:
they are passed as a list). Each printed fix is applied: the model builds, runs, and
gives what the TensorFlow function gives on real tensors. The same calls on real tensors,
or inside a ``Lambda`` already, raise nothing."""

from __future__ import annotations

import pytest

from tests.harness import IMPORTS, KernelSession, KernelSetup, value_of
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600)]
# Keras's layers under the learner's own alias: a Lambda fix is written with it.
KERNEL = KernelSetup(after_load=IMPORTS + "\nfrom keras import layers as kl")


def test_a_dotted_tensorflow_name_gets_its_keras_ops_namesake(kernel: KernelSession) -> None:
    runs_cleanly(
        kernel,
        "tiles = np.random.default_rng(4).random((3, 6, 6, 2)).astype('float32')\n"
        "def folded_encoder():\n"
        "    board = keras.Input((6, 6, 2))\n"
        "    stem = kl.Conv2D(4, 1, use_bias=False)(board)\n"
        "    packed = tf.nn.space_to_depth(stem, 3)\n"
        "    return keras.Model(board, packed)",
    )
    cell = "encoder = folded_encoder()"
    error = failing(kernel, cell)
    text = error["explanation"]
    assert error["course"]["section"] == "functional-api"
    assert "`stem` holds Keras symbolic tensors" in text
    assert "`keras.ops.space_to_depth` is Keras's function of the same work" in text
    fix = fix_of(text)
    assert fix == "packed = keras.ops.space_to_depth(stem, 3)"
    runs_cleanly(
        kernel,
        "def folded_encoder():\n"
        "    board = keras.Input((6, 6, 2))\n"
        "    stem = kl.Conv2D(4, 1, use_bias=False)(board)\n"
        f"    {fix}\n"
        "    return keras.Model(board, packed)\n"
        "encoder = folded_encoder()\n"
        "got = encoder(tiles)\n"
        "want = tf.nn.space_to_depth(encoder.layers[1](tiles), 3)",
    )
    assert value_of(kernel, "list(got.shape)") == [3, 2, 2, 36]
    assert value_of(kernel, "bool(np.allclose(got, want))") is True


def test_a_function_keras_ops_lacks_is_wrapped_in_a_lambda_layer(kernel: KernelSession) -> None:
    runs_cleanly(
        kernel,
        "swatches = np.random.default_rng(8).random((5, 4, 4, 3)).astype('float32')\n"
        "colour_in = keras.Input((4, 4, 3))",
    )
    cell = (
        "chroma = tf.image.rgb_to_yuv(colour_in)\n"
        "to_yuv = keras.Model(colour_in, keras.layers.Dense(2)(chroma))"
    )
    text = failing(kernel, cell)["explanation"]
    assert "`tf.image.rgb_to_yuv` is TensorFlow's function" in text
    assert "`keras.ops` has no function of the same work for `tf.image.rgb_to_yuv`" in text
    assert "of the same work where it has one" not in text
    fix = fix_of(text)
    assert fix == (
        "chroma = kl.Lambda(lambda colour_in: tf.image.rgb_to_yuv(colour_in))(colour_in)"
    )
    runs_cleanly(kernel, cell.replace(cell.splitlines()[0], fix))
    runs_cleanly(kernel, "yuv_part = keras.Model(colour_in, chroma)(swatches)")
    assert value_of(kernel, "list(yuv_part.shape)") == [5, 4, 4, 3]
    assert (
        value_of(kernel, "bool(np.allclose(yuv_part, tf.image.rgb_to_yuv(swatches), atol=1e-6))")
        is True
    )


def test_a_call_of_two_symbolic_names_gets_them_as_a_list(kernel: KernelSession) -> None:
    runs_cleanly(
        kernel,
        "probe_a = keras.Input((7,))\n"
        "probe_b = keras.Input((7,))\n"
        "rows_a = np.random.default_rng(1).random((6, 7)).astype('float32')\n"
        "rows_b = np.random.default_rng(2).random((6, 7)).astype('float32')",
    )
    cell = (
        "gapsq = tf.math.squared_difference(probe_a, probe_b) * 0.5\n"
        "halfsq = keras.Model([probe_a, probe_b], gapsq)"
    )
    text = failing(kernel, cell)["explanation"]
    assert "`probe_a`, `probe_b` hold Keras symbolic tensors" in text
    fix = fix_of(text)
    assert fix == (
        "gapsq = kl.Lambda(lambda t: tf.math.squared_difference(t[0], t[1]))"
        "([probe_a, probe_b]) * 0.5"
    )
    runs_cleanly(kernel, cell.replace(cell.splitlines()[0], fix))
    runs_cleanly(kernel, "halved = halfsq([rows_a, rows_b])")
    assert (
        value_of(kernel, "bool(np.allclose(halved, 0.5 * (rows_a - rows_b) ** 2, atol=1e-6))")
        is True
    )


def test_a_keyword_spelt_otherwise_in_keras_ops_keeps_the_tensorflow_call(
    kernel: KernelSession,
) -> None:
    # ``data_format="NHWC"`` is TensorFlow's spelling; keras.ops says "channels_last".
    runs_cleanly(kernel, "grid_in = keras.Input((4, 4, 8))")
    cell = "spread = tf.nn.depth_to_space(grid_in, 2, data_format='NHWC')"
    fix = fix_of(failing(kernel, cell)["explanation"])
    assert fix == (
        "spread = kl.Lambda(lambda grid_in: "
        "tf.nn.depth_to_space(grid_in, 2, data_format='NHWC'))(grid_in)"
    )
    runs_cleanly(kernel, fix)
    assert value_of(kernel, "list(spread.shape)") == [None, 8, 8, 2]


def test_the_same_functions_on_real_tensors_or_in_a_lambda_are_silent(
    kernel: KernelSession,
) -> None:
    runs_cleanly(
        kernel,
        "hue_in = keras.Input((4, 4, 3))\n"
        "hue_out = keras.layers.Lambda(lambda z: tf.image.rgb_to_yuv(z))(hue_in)\n"
        "hue_model = keras.Model(hue_in, hue_out)\n"
        "direct = tf.image.rgb_to_yuv(tf.zeros((1, 4, 4, 3)))\n"
        "packed_now = tf.nn.space_to_depth(tf.zeros((1, 6, 6, 1)), 3)",
    )
