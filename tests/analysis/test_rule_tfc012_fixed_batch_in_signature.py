from __future__ import annotations

import re
import textwrap

import pytest

from jupyterlab_tfcoach.analysis.findings import Severity
from jupyterlab_tfcoach.analysis.rules import rule_by_code
from jupyterlab_tfcoach.analysis.testing import FixCase, check, check_cells, fixed, span

CODE = "TFC012"


def test_fixed_leading_dimension_in_decorator():
    source = """\
        import tensorflow as tf

        @tf.function(input_signature=[tf.TensorSpec(shape=[32, 784], dtype=tf.float32)])
        def predict(x):
            return x
        """
    [finding] = check(source, CODE)
    assert finding.severity is Severity.HINT
    assert span(finding) == (3, 52, 3, 54)
    assert "to 32" in finding.message
    assert "TensorSpec(shape=[None, 784]" in fixed(source, finding)


def test_wrapping_call_under_alias_with_tuple_shape():
    # This used `TensorSpec((8,))`, a rank-1 spec, which is now deliberately silent (see
    # test_rank_one_specs_are_silent); the rank-2 `(8, 5)` keeps the alias case covered.
    source = """\
        import tensorflow as t
        from tensorflow import TensorSpec

        def f(x, y):
            return x
        g = t.function(f, input_signature=(TensorSpec((8, 5)), t.TensorSpec([None, 3])))
        """
    [finding] = check(source, CODE)
    assert span(finding) == (6, 48, 6, 49)
    assert "TensorSpec((None, 5))" in fixed(source, finding)


def test_signature_bound_to_a_name_reports_the_spec_inside_it():
    source = """\
        import tensorflow as tf

        SIG = [tf.TensorSpec((32, 28, 28), tf.float32)]

        def f(x):
            return x

        g = tf.function(f, input_signature=SIG)

        @tf.function(input_signature=SIG)
        def h(x):
            return x
        """
    [finding] = check(source, CODE)  # one spec, one finding, however many users
    assert span(finding) == (3, 23, 3, 25)
    assert "to 32" in finding.message
    after = fixed(source, finding)
    assert "SIG = [tf.TensorSpec((None, 28, 28), tf.float32)]" in after
    assert check(after, CODE) == []


def test_named_specs_and_signature_in_another_cell():
    cells = [
        "import tensorflow as tf\nIMAGE = tf.TensorSpec([16, 224, 224, 3], tf.float32)\n"
        "SIG = (IMAGE, tf.TensorSpec([None], tf.int32))",
        "@tf.function(input_signature=SIG)\ndef f(x, y):\n    return x",
    ]
    [finding] = check_cells(cells, CODE)
    assert (finding.cell, *span(finding)) == (0, 2, 24, 2, 26)
    assert [edit.new_text for edit in finding.fix.edits] == ["None"]


def test_rank_one_specs_are_silent():
    # A rank-1 spec is one vector whose length is part of its meaning (an image size,
    # a pair of indices): it has no batch axis to free.
    source = """\
        import tensorflow as tf

        SIZE_SIG = [tf.TensorSpec([2], tf.int32)]

        @tf.function(input_signature=[tf.TensorSpec((3,), tf.float32), tf.TensorSpec([2])])
        def resize(mean, size):
            return mean

        g = tf.function(resize, input_signature=SIZE_SIG)
        """
    assert check(source, CODE) == []


def test_rank_two_and_more_still_reported():
    source = """\
        import tensorflow as tf

        @tf.function(input_signature=[tf.TensorSpec((32, 224, 224, 3)), tf.TensorSpec([32, 10])])
        def f(images, labels):
            return images
        """
    findings = check(source, CODE)
    assert [span(f) for f in findings] == [(3, 46, 3, 48), (3, 80, 3, 82)]


def test_leading_dimension_from_a_module_constant():
    source = """\
        import tensorflow as tf
        BATCH = 64

        @tf.function(input_signature=[tf.TensorSpec([BATCH, 3])])
        def f(x):
            return x
        """
    [finding] = check(source, CODE)
    assert span(finding) == (4, 46, 4, 51)
    assert "`BATCH` = 64" in finding.message
    assert "tf.TensorSpec([None, 3])" in fixed(source, finding)


def test_notebook_cells():
    cells = [
        "import tensorflow as tf",
        "spec = 1\n@tf.function(input_signature=[tf.TensorSpec([4, 2])])\ndef f(x):\n    return x",
    ]
    [finding] = check_cells(cells, CODE)
    assert (finding.cell, *span(finding)) == (1, 2, 46, 2, 47)


def test_none_batch_and_scalars_are_silent():
    source = """\
        import tensorflow as tf

        @tf.function(input_signature=[tf.TensorSpec([None, 10]), tf.TensorSpec([])])
        def f(x, k):
            return x

        spec = tf.TensorSpec([32, 10])   # not in an input_signature

        @tf.function(input_signature=[tf.TensorSpec([n, 10])])
        def g(x):
            return x

        SIG = [tf.TensorSpec((None, 28, 28), tf.float32)]
        OTHER = [tf.TensorSpec((32, 28, 28), tf.float32)]   # never used as a signature

        @tf.function(input_signature=SIG)
        def named(x):
            return x
        """
    assert check(source, CODE) == []


def test_fixed_size_parameter_beside_a_free_batch_input_is_silent():
    source = """\
        import tensorflow as tf

        num_tags = 10
        sig = (
            tf.TensorSpec([None, None, num_tags]),
            tf.TensorSpec([num_tags, num_tags]),
            tf.TensorSpec([None], tf.int32),
        )

        @tf.function(input_signature=sig)
        def decode(potentials, transitions, lengths):
            return tf.einsum("btn,nm->btm", potentials, transitions)
        """
    assert check(source, CODE) == []
    # Without an input whose batch is free, the fixed leading size is still reported.
    fixed_batch = source.replace(
        "tf.TensorSpec([None, None, num_tags])", "tf.TensorSpec([4, None, num_tags])"
    )
    assert [f.line for f in check(fixed_batch, CODE)] == [5, 6]


# A batch-1 serving function, then what the file does with it (line 8 on). Each case
# exports it (silent) beside a look-alike that exports nothing of it (reported).
SERVE = """\
    import keras
    import numpy as np
    import tensorflow as tf
    model = keras.models.load_model("pets.keras")
    @tf.function(input_signature=[tf.TensorSpec([1, 96, 96, 3], tf.float32)])
    def serve(image):
        return tf.nn.softmax(model(image))
"""
EXPORTS = {
    "TFLite from its concrete function": (
        "converter = tf.lite.TFLiteConverter.from_concrete_functions(\n"
        "    [serve.get_concrete_function()], model)\n"
        "tflite_bytes = converter.convert()",
        "concrete = serve.get_concrete_function()\nprint(concrete.structured_outputs)",
    ),
    "a concrete function passed on through names": (
        "concrete = serve.get_concrete_function()\n"
        'signatures = {"serving_default": concrete}\n'
        'tf.saved_model.save(model, "export/pets", signatures=signatures)',
        "concrete = serve.get_concrete_function()\n"
        'signatures = {"serving_default": concrete}\n'
        "print(signatures)",
    ),
    "SavedModel signatures": (
        'tf.saved_model.save(model, "export/pets", signatures=serve)',
        'tf.saved_model.save(model, "export/pets", signatures=model.signatures)',
    ),
    "a frozen graph": (
        "from tensorflow.python.framework.convert_to_constants import (\n"
        "    convert_variables_to_constants_v2)\n"
        "frozen = convert_variables_to_constants_v2(serve.get_concrete_function())",
        'np.save("probs.npy", serve(np.zeros([1, 96, 96, 3], np.float32)))',
    ),
    "a Keras export archive": (
        "archive = keras.export.ExportArchive()\n"
        "archive.track(model)\n"
        'archive.add_endpoint(name="serve", fn=serve)',
        "archive = keras.export.ExportArchive()\n"
        "archive.track(model)\n"
        'archive.add_endpoint(name="serve", fn=model.call)',
    ),
    "an ONNX converter": (
        "import tf2onnx\nonnx_model, _ = tf2onnx.convert.from_function(serve, opset=13)",
        "import tf2onnx\nonnx_model, _ = tf2onnx.convert.from_keras(model, opset=13)",
    ),
}


@pytest.mark.parametrize("case", sorted(EXPORTS))
def test_signatures_used_for_export_are_silent(case: str):
    exported, look_alike = EXPORTS[case]
    source = textwrap.dedent(SERVE)
    assert check(source + exported + "\n", CODE) == []
    assert [(f.line, f.column) for f in check(source + look_alike + "\n", CODE)] == [(5, 46)]


def test_module_exported_with_its_signature_and_inline_export_are_silent():
    source = """\
        import tensorflow as tf

        class Detector(tf.Module):
            def __init__(self, model):
                self.model = model

            @tf.function(input_signature=[tf.TensorSpec([1, 320, 320, 3], tf.uint8)])
            def detect(self, image):
                return self.model(tf.cast(image, tf.float32) / 255.0)

        def encode(token_ids):
            return encoder(token_ids)

        detector = Detector(model)
        tf.saved_model.save(detector, "export/detector")
        tf.saved_model.save(
            encoder,
            "export/encoder",
            signatures=tf.function(
                encode, input_signature=[tf.TensorSpec([8, 128], tf.int32)]
            ).get_concrete_function(),
        )
        """
    assert check(source, CODE) == []
    # The twin: neither the detector nor the encoder's signature is exported.
    twin = source.replace("tf.saved_model.save(detector", "print(detector").replace(
        "tf.saved_model.save(\n", "describe(\n"
    )
    assert [f.line for f in check(twin, CODE)] == [7, 20]


def test_leading_axis_squeezed_in_the_body_is_silent():
    source = """\
        import tensorflow as tf

        @tf.function(
            input_signature=[
                tf.TensorSpec([1, 224, 224, 3], tf.float32),
                tf.TensorSpec([1, 4], tf.float32),
                tf.TensorSpec([1, 10], tf.float32),
            ]
        )
        def crop_and_score(image, box, logits):
            box = tf.squeeze(box, axis=0)
            probs = tf.squeeze(tf.nn.softmax(logits))
            return tf.image.crop_to_bounding_box(image[0], 0, 0, 32, 32), box, probs

        class Scorer(tf.Module):
            @tf.function(input_signature=[tf.TensorSpec([1, 16], tf.float32)])
            def score(self, features):
                return tf.reduce_sum(tf.squeeze(features, [0]))
        """
    # ``logits`` is squeezed only after softmax: its leading axis is not dropped from it.
    assert [f.line for f in check(source, CODE)] == [7]
    # The twin: nothing squeezed or indexed, every spec is reported.
    twin = (
        source.replace("tf.squeeze(box, axis=0)", "box")
        .replace("image[0]", "image")
        .replace("tf.squeeze(features, [0])", "features")
    )
    assert [f.line for f in check(twin, CODE)] == [5, 6, 7, 16]


def test_plain_squeeze_excuses_only_a_leading_one():
    source = """\
        import tensorflow as tf

        @tf.function(input_signature=[tf.TensorSpec([1, 3], tf.float32)])
        def one(x):
            return tf.squeeze(x)

        @tf.function(input_signature=[tf.TensorSpec([4, 3], tf.float32)])
        def four(x):
            return tf.squeeze(x)
        """
    assert [f.line for f in check(source, CODE)] == [7]


def test_batch_one_documented_at_the_function_is_silent():
    source = """\
        import tensorflow as tf

        @tf.function(input_signature=[tf.TensorSpec([1, 128], tf.int32)])
        def embed_sentence(token_ids):
            \"\"\"Embeds a single sentence for the search index.\"\"\"
            return encoder(token_ids)

        # Batch-1 signature for the phone app.
        @tf.function(input_signature=[tf.TensorSpec([1, 240, 320, 3], tf.float32)])
        def segment(frame):
            return segmenter(frame)

        @tf.function(
            input_signature=[tf.TensorSpec([1, 16000], tf.float32)]  # batch of 1
        )
        def transcribe(audio):
            return recognizer(audio)
        """
    assert check(source, CODE) == []
    undocumented = (
        source.replace("a single sentence", "sentences")
        .replace("Batch-1 signature", "Signature")
        .replace("  # batch of 1", "")
    )
    assert [f.line for f in check(undocumented, CODE)] == [3, 9, 14]
    # A comment saying one example does not excuse a leading size other than 1.
    larger = source.replace("TensorSpec([1, 128]", "TensorSpec([32, 128]")
    assert [f.line for f in check(larger, CODE)] == [3]


def test_what_a_comment_must_say():
    says_one = ["batch of 1", "Batch size 1", "batch_size=1", "batch-1", "a single image"]
    says_one += ["one example at a time", "batch size of one"]
    says_other = ["batch of 16", "batches of images", "one-hot labels", "single-precision"]
    template = """\
        import tensorflow as tf

        # {comment}
        @tf.function(input_signature=[tf.TensorSpec([1, 64], tf.float32)])
        def f(x):
            return x
        """
    for comment in says_one:
        assert check(template.format(comment=comment), CODE) == [], comment
    for comment in says_other:
        assert len(check(template.format(comment=comment), CODE)) == 1, comment


def test_shared_signature_is_reported_when_one_user_is_not_exported():
    source = """\
        import tensorflow as tf

        SIG = [tf.TensorSpec([1, 32], tf.float32)]

        @tf.function(input_signature=SIG)
        def serve(x):
            return model(x)

        @tf.function(input_signature=SIG)
        def train_step(x):
            return model(x)

        tf.saved_model.save(model, "export/m", signatures=serve)
        """
    [finding] = check(source, CODE)
    assert finding.line == 3
    assert check(source.replace("signatures=serve", "signatures=[serve, train_step]"), CODE) == []


def test_docs_examples():
    blocks = re.findall(r"```python\n(.*?)```", rule_by_code(CODE).docs, re.S)
    example, corrected, exported, per_example = blocks
    prelude = "import tensorflow as tf\n"
    assert len(check(prelude + example, CODE)) == 1
    assert check(prelude + corrected, CODE) == []
    assert check(prelude + exported, CODE) == []
    # The export is what keeps the batch-1 signature silent.
    assert len(check(prelude + exported.split("converter =")[0], CODE)) == 1
    # Mapped before ``.batch``, the signature describes one image; after it, a batch.
    assert check(prelude + per_example, CODE) == []
    batched_first = per_example.replace(".map(to_float).batch(64)", ".batch(64).map(to_float)")
    assert len(check(prelude + batched_first, CODE)) == 1


# Functions mapped over a tf.data pipeline: each case is silent, and its twin (the
# ``old`` -> ``new`` edit) maps over batches of any size, where the spec on ``line`` is
# reported.
MAPPED = {
    "a per-example function mapped before batch": (
        """\
        @tf.function(
            input_signature=[tf.TensorSpec([64, 64, 3], tf.uint8), tf.TensorSpec([], tf.int64)]
        )
        def normalise(photo, label):
            return tf.cast(photo, tf.float32) / 255.0, label

        photos = tf.data.Dataset.from_tensor_slices((pixels, species))
        train = photos.shuffle(1000).map(normalise, num_parallel_calls=4).batch(16)
        """,
        (".map(normalise, num_parallel_calls=4).batch(16)", ".batch(16).map(normalise)"),
        3,
    ),
    "a tf.function called in the lambda given to map, the dataset bound to names": (
        """\
        def spectrogram(clip):
            return tf.abs(tf.signal.stft(tf.squeeze(clip, -1), 256, 128))

        to_spectrogram = tf.function(
            spectrogram, input_signature=[tf.TensorSpec([16000, 1], tf.float32)]
        )
        clips = tf.data.TFRecordDataset(files).map(parse_clip)
        windows = clips.cache()
        spectra = windows.map(lambda clip, word: (to_spectrogram(clip), word)).batch(8)
        """,
        ("windows = clips.cache()", "windows = clips.batch(8)"),
        6,
    ),
    "a plain function given to map that calls the tf.function, after unbatch": (
        """\
        @tf.function(input_signature=[tf.TensorSpec([12, 40], tf.float32)])
        def standardise(frames):
            return (frames - tf.reduce_mean(frames)) / tf.math.reduce_std(frames)

        def prepare(frames, speaker):
            return standardise(frames), speaker

        utterances = tf.data.Dataset.load("utterances").batch(4).unbatch().map(prepare)
        """,
        (".batch(4).unbatch()", ".padded_batch(4)"),
        2,
    ),
    "batches that all have the signature's size": (
        """\
        @tf.function(input_signature=[tf.TensorSpec([32, 10], tf.float32)])
        def jitter(rows):
            return rows + tf.random.normal([32, 10], stddev=0.01)

        noisy = tf.data.Dataset.range(640).map(make_row).batch(32, drop_remainder=True)
        noisy = noisy.map(jitter)
        """,
        ("drop_remainder=True", "drop_remainder=False"),
        2,
    ),
    "single images from a Keras directory loader": (
        """\
        @tf.function(input_signature=[tf.TensorSpec([96, 96, 3], tf.float32)])
        def augment(leaf):
            return tf.image.random_flip_left_right(leaf)

        leaves = tf.keras.utils.image_dataset_from_directory("leaves", batch_size=None)
        augmented = leaves.map(lambda leaf, disease: (augment(leaf), disease))
        """,
        ('"leaves", batch_size=None', '"leaves", image_size=(96, 96)'),
        2,
    ),
    "a method mapped after unbatch (tensorflow/examples' audio model spec)": (
        """\
        class AudioSpec:
            @tf.function(input_signature=[tf.TensorSpec([1, 16000], tf.float32)])
            def _preprocess(self, wav):
                return tf.squeeze(self._embed(wav), axis=0)

            def preprocess_ds(self, ds):
                ds = ds.map(self._split).unbatch()
                return ds.map(self._preprocess)
        """,
        (".map(self._split).unbatch()", ".map(self._split).batch(8)"),
        3,
    ),
}


@pytest.mark.parametrize("case", sorted(MAPPED))
def test_functions_mapped_over_single_examples_are_silent(case: str):
    body, (old, new), line = MAPPED[case]
    source = "import tensorflow as tf\n" + textwrap.dedent(body)
    assert check(source, CODE) == []
    twin = source.replace(old, new)
    assert twin != source
    assert [f.line for f in check(twin, CODE)] == [line]


def test_mapped_over_a_dataset_of_unknown_origin_is_silent():
    # The function that gets ``records`` is not shown: not known to be batched, so the
    # rule says nothing.
    source = """\
        import tensorflow as tf

        @tf.function(input_signature=[tf.TensorSpec([50, 8], tf.float32)])
        def smooth(track):
            return tf.nn.avg_pool1d(track[None], 5, 1, "SAME")[0]

        def pipeline(records):
            return records.map(smooth).batch(10)
        """
    assert check(source, CODE) == []


def test_model_functions_beside_a_mapped_one_are_still_reported():
    # ``scale`` maps single rows; ``predict`` serves the batched dataset, and ``evaluate``
    # is only mapped after ``.batch``: both their batch-sized signatures are reported.
    source = """\
        import tensorflow as tf

        @tf.function(input_signature=[tf.TensorSpec([20], tf.float32)])
        def scale(row):
            return row / 10.0

        @tf.function(input_signature=[tf.TensorSpec([32, 20], tf.float32)])
        def predict(features):
            return regressor(features)

        @tf.function(input_signature=[tf.TensorSpec([32, 20], tf.float32)])
        def evaluate(features):
            return regressor(features)

        table = tf.data.Dataset.from_tensor_slices(readings).map(scale).batch(32)
        for rows in table:
            predict(rows)
        scores = table.map(evaluate)
        """
    assert [f.line for f in check(source, CODE)] == [7, 11]


# Proven by tests/analysis/test_fixes_proven.py: each fix applied and re-checked with every
# rule and, the runnable ones, run against code that does what the source means to do.
ROW_SUMS = """\
    import tensorflow as tf

    @tf.function(input_signature=[tf.TensorSpec(shape=[4, 3], dtype=tf.float32)])
    def row_sums(x):
        return tf.reduce_sum(x, axis=1)

    print(row_sums(tf.ones([4, 3])).numpy().tolist(), row_sums(tf.ones([2, 3])).numpy().tolist())
    """
FIX_CASES = (
    FixCase(
        CODE,
        ROW_SUMS,
        ROW_SUMS.replace(
            "@tf.function(input_signature=[tf.TensorSpec(shape=[4, 3], dtype=tf.float32)])",
            "@tf.function",
        ),
        "a batch of another size",
    ),
)
