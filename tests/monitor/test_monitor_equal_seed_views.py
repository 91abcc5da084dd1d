"""Two views made by two calls of one stateless-seeded function given the same seed
(issue #25, ``symptoms/constant_seeds.py``, ``equal_seed_view_notes``): both calls return
the same tensor. The note names the function, the callee, its seed parameter and the seed
passed; its fix (a pair of seeds drawn per call), applied, gives two different views.
Look-alikes stay silent: two different seeds, a callee that also draws statefully, a seed
drawn inline in each call."""

from __future__ import annotations

import pytest

from tests.harness import KernelSession, KernelSetup, checked_report, note_texts, run, value_of

pytestmark = [pytest.mark.kernel, pytest.mark.tensorflow, pytest.mark.timeout(300)]

KERNEL = KernelSetup(after_load="import numpy as np\nimport tensorflow as tf")

_CALLEE = (
    "def perturb(signal, key):\n"
    "    signal = signal + tf.random.stateless_normal(tf.shape(signal), seed=key, stddev=0.1)\n"
    "    return signal * tf.random.stateless_uniform([], seed=key, minval=0.8, maxval=1.2)\n"
)

_PAIR = (
    "def noisy_pair(signal):\n"
    "    key = tf.constant([11, 5])\n"
    "    return perturb(signal, key), perturb(signal, key)\n"
)


def _view_notes(kernel: KernelSession, cell: str) -> list[str]:
    texts = note_texts(checked_report(run(kernel, cell)))
    return [t for t in texts if "one view twice" in t]


def test_equal_seeds_for_two_views_are_named_and_fixed(kernel: KernelSession) -> None:
    told = _view_notes(kernel, _CALLEE + _PAIR)
    assert len(told) == 1
    text = told[0]
    assert "`noisy_pair` returns `perturb(signal, key), perturb(signal, key)` (line 6" in text
    assert "`perturb` draws only with stateless random ops seeded by its parameter `key`" in text
    assert "both calls pass `key`" in text
    fixed_return = "return perturb(signal, seeds[0]), perturb(signal, seeds[1])"
    assert "add `seeds = tf.random.uniform([2, 2], maxval=2**31 - 1, dtype=tf.int32)`" in text
    assert f"write it `{fixed_return}`" in text
    run(kernel, "left, right = noisy_pair(tf.ones((3, 4)))")
    assert value_of(kernel, "bool(np.array_equal(left.numpy(), right.numpy()))") is True
    fixed = (
        "def noisy_pair(signal):\n"
        "    key = tf.constant([11, 5])\n"
        "    seeds = tf.random.uniform([2, 2], maxval=2**31 - 1, dtype=tf.int32)\n"
        f"    {fixed_return}\n"
    )
    assert _view_notes(kernel, fixed) == []
    run(kernel, "left, right = noisy_pair(tf.ones((3, 4)))")
    assert value_of(kernel, "bool(np.array_equal(left.numpy(), right.numpy()))") is False


def test_look_alikes_are_quiet(kernel: KernelSession) -> None:
    run(kernel, _CALLEE)
    two_seeds = (
        "def noisy_pair(signal):\n"
        "    return perturb(signal, tf.constant([1, 2])), perturb(signal, tf.constant([3, 4]))\n"
    )
    assert _view_notes(kernel, two_seeds) == []
    inline_draw = (
        "def noisy_pair(signal):\n"
        "    return perturb(signal, tf.random.uniform([2], maxval=99, dtype=tf.int32)), "
        "perturb(signal, tf.random.uniform([2], maxval=99, dtype=tf.int32))\n"
    )
    assert _view_notes(kernel, inline_draw) == []
    stateful = (
        "def shaken(signal, key):\n"
        "    signal = tf.image.stateless_random_flip_left_right(signal, seed=key)\n"
        "    return signal + tf.random.normal(tf.shape(signal))\n"
        "def shaken_pair(signal):\n"
        "    key = tf.constant([4, 4])\n"
        "    return shaken(signal, key), shaken(signal, key)\n"
    )
    assert _view_notes(kernel, stateful) == []
