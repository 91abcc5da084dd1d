"""A model the cell calls a probe or frozen whose inner, still trainable model fit changed
(issue #25, ``training/probe_updates.py``): ``keras.Sequential([backbone, Dense(k)])``
fitted with ``backbone`` trainable fine-tunes it. Told in a Sequential and a functional
model, naming the inner model and the fix; the fix, applied (weights restored, the inner
model frozen before compile), leaves it unchanged and the note goes. Look-alikes stay
silent: the same cell with the inner model frozen, a cell that says it fine-tunes, a
model with an inner model and no word saying it is fixed."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, KernelSetup, checked_report, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(600)]

KERNEL = KernelSetup(
    before_load="import numpy as np\nimport tensorflow as tf\nimport keras\n",
    after_load="import warnings\nwarnings.simplefilter('ignore')\n",
)

SETUP = """keras.utils.set_random_seed(5)
rng = np.random.default_rng(5)
leaves = rng.normal(size=(240, 12)).astype("float32")
kinds = rng.integers(0, 3, size=240)
backbone = keras.Sequential([keras.Input((12,)), keras.layers.Dense(20, activation="relu"),
                             keras.layers.Dense(8)], name="backbone")
backbone.compile("adam", "mse")
backbone.fit(leaves, leaves[:, :8], epochs=2, verbose=0)
trained = backbone.get_weights()
def same():
    return all(np.allclose(a, b) for a, b in zip(trained, backbone.get_weights()))
"""

SEQUENTIAL = """frozen_readout = keras.Sequential([backbone, keras.layers.Dense(3)])
frozen_readout.compile(optimizer=keras.optimizers.SGD(0.05),
                       loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
frozen_readout.fit(leaves, kinds, epochs=2, verbose=0)
"""

FUNCTIONAL = """# the backbone is a feature extractor: only the new layer learns
entry = keras.Input((12,))
scores = keras.layers.Dense(3)(backbone(entry))
classifier = keras.Model(entry, scores)
classifier.compile("rmsprop", keras.losses.SparseCategoricalCrossentropy(from_logits=True))
classifier.fit(leaves, kinds, epochs=1, verbose=0)
"""


def probe_notes(report: dict) -> list[str]:
    return [n["text"] for n in report["notes"] if "the model inside" in n["text"]]


def test_a_frozen_readout_that_fine_tunes_its_backbone(kernel: KernelSession) -> None:
    run(kernel, SETUP)
    [text] = probe_notes(checked_report(run(kernel, SEQUENTIAL)))
    assert text.startswith(
        "`frozen_readout.fit` changed 4 of the 4 trainable weights of `backbone`, the model "
        "inside `frozen_readout`: `backbone` is still trainable"
    ), text
    assert '("frozen")' in text
    assert (
        "set `backbone.trainable = False` before `frozen_readout.compile(...)` (line 2 of "
        "this cell) and fit again"
    ) in text, text
    assert value_of(kernel, "same()") is False
    fixed = "backbone.set_weights(trained)\nbackbone.trainable = False\n" + SEQUENTIAL
    assert probe_notes(checked_report(run(kernel, fixed))) == []
    assert value_of(kernel, "same()") is True


def test_a_feature_extractor_in_a_functional_model(kernel: KernelSession) -> None:
    run(kernel, SETUP)
    [text] = probe_notes(checked_report(run(kernel, FUNCTIONAL)))
    assert "of `backbone`, the model inside `classifier`" in text
    assert '("extractor")' in text
    fixed = FUNCTIONAL.replace(
        "classifier.compile", "backbone.trainable = False\nclassifier.compile"
    )
    run(kernel, "backbone.set_weights(trained)\n")
    assert probe_notes(checked_report(run(kernel, fixed))) == []
    assert value_of(kernel, "same()") is True


def test_look_alikes_stay_silent(kernel: KernelSession) -> None:
    run(kernel, SETUP)
    quiet = [
        "backbone.trainable = False\n" + SEQUENTIAL + "backbone.trainable = True\n",
        # Fine-tuning on purpose, said so.
        "# fine-tune the whole network, frozen head first is not needed here\n" + SEQUENTIAL,
        # A freeze aimed at the InputLayer by index: empty_freezes names what it missed.
        FUNCTIONAL.replace(
            "classifier.compile", "classifier.layers[0].trainable = False\nclassifier.compile"
        ),
        # An inner model and no word saying it stays fixed.
        SEQUENTIAL.replace("frozen_readout", "stacked"),
    ]
    for cell in quiet:
        assert probe_notes(checked_report(run(kernel, cell))) == [], cell
