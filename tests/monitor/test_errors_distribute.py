"""A custom loop under tf.distribute (issue #25, ``errors/families_distribute.py``): a
per-replica batch given to a step function called directly, ``.numpy()`` on what
``strategy.run`` returns, ``strategy.run(fn, batch)`` and a distributed dataset of single
examples each get an entry naming the learner's values and a fix that runs; the same
steps written right raise nothing."""

from __future__ import annotations

import pytest

from tests.harness import IMPORTS, KernelSession, KernelSetup
from tests.harness import error_of_failing_cell as failing
from tests.harness import fix_in as fix_of
from tests.harness import runs_without_error_entry as runs_cleanly

pytestmark = [pytest.mark.kernel, pytest.mark.tensorflow, pytest.mark.timeout(400)]

# Two logical CPU devices, set before TensorFlow initialises its devices.
KERNEL = KernelSetup(
    after_load=IMPORTS
    + """
host = tf.config.list_physical_devices("CPU")[0]
tf.config.set_logical_device_configuration(
    host, [tf.config.LogicalDeviceConfiguration(), tf.config.LogicalDeviceConfiguration()])
"""
)

SETUP = """mirror = tf.distribute.MirroredStrategy(
    ["/cpu:0", "/cpu:1"], cross_device_ops=tf.distribute.ReductionToOneDevice())
features = np.random.default_rng(1).normal(size=(96, 5)).astype("float32")
targets = (features.sum(axis=1) > 0).astype("float32")
pairs = tf.data.Dataset.from_tensor_slices((features, targets)).batch(24)
pair_shards = mirror.experimental_distribute_dataset(pairs)
with mirror.scope():
    inputs = keras.Input((5,))
    regressor = keras.Model(inputs, keras.layers.Dense(1)(inputs))
    sgd = keras.optimizers.SGD(0.05)
    sgd.build(regressor.trainable_variables)

def replica_update(pair):
    rows, wanted = pair
    with tf.GradientTape() as tape:
        guess = tf.squeeze(regressor(rows), axis=-1)
        loss = tf.nn.compute_average_loss(tf.square(guess - wanted), global_batch_size=24)
    grads = tape.gradient(loss, regressor.trainable_variables)
    sgd.apply_gradients(zip(grads, regressor.trainable_variables))
    return loss

@tf.function
def sharded_update(pair):
    losses = mirror.run(replica_update, args=(pair,))
    return mirror.reduce(tf.distribute.ReduceOp.SUM, losses, axis=None)
"""


def test_a_per_replica_batch_given_to_the_step_function_directly(
    kernel: KernelSession,
) -> None:
    runs_cleanly(kernel, SETUP)
    cell = "first = next(iter(pair_shards))\nstep_loss = replica_update(first)\n"
    error = failing(kernel, cell)
    text = error["explanation"]
    assert error["course"]["section"] == "devices-placement"
    assert "`rows` holds per-replica values (`PerReplica`" in text
    assert "through `mirror.run(fn, args=(...,))`" in text
    assert "call `sharded_update`, which runs `replica_update` on each replica" in text
    fix = fix_of(text)
    assert fix == "step_loss = sharded_update(first)"
    runs_cleanly(kernel, cell.replace("step_loss = replica_update(first)", fix))


def test_numpy_on_what_strategy_run_returns(kernel: KernelSession) -> None:
    runs_cleanly(kernel, SETUP)
    cell = (
        "one = next(iter(pair_shards))\n"
        "sizes = mirror.run(lambda p: tf.shape(p[0])[0], args=(one,))\n"
        "print(sizes.numpy())\n"
    )
    error = failing(kernel, cell)
    text = error["explanation"]
    assert (
        "`sizes` holds per-replica values (`PerReplica`, one tensor per replica, as "
        "`mirror.run` returns them)" in text
    )
    assert "`mirror.reduce(tf.distribute.ReduceOp.MEAN, sizes, axis=None)`" in text
    assert "spelling" not in text
    fix = fix_of(text)
    assert fix == "print(mirror.experimental_local_results(sizes))"
    runs_cleanly(kernel, cell.replace("print(sizes.numpy())", fix))


def test_strategy_run_given_the_batch_as_its_arguments(kernel: KernelSession) -> None:
    runs_cleanly(kernel, SETUP)
    cell = "for chunk in pair_shards:\n    out = mirror.run(replica_update, chunk)\n"
    error = failing(kernel, cell)
    text = error["explanation"]
    assert "`mirror.run(fn, args=...)` calls `fn(*args)`" in text
    assert "`chunk` (a tuple of 2 items) was unpacked into 2 arguments of `replica_update`" in (
        text
    )
    fix = fix_of(text)
    assert fix == "out = mirror.run(replica_update, args=(chunk,))"
    runs_cleanly(kernel, cell.replace("out = mirror.run(replica_update, chunk)", fix))


def test_a_distributed_dataset_of_single_examples(kernel: KernelSession) -> None:
    runs_cleanly(kernel, SETUP)
    cell = (
        "singles = tf.data.Dataset.from_tensor_slices(features[:6])\n"
        "single_shards = mirror.experimental_distribute_dataset(singles)\n"
        "for rows in single_shards:\n"
        "    scores = mirror.gather(mirror.run(regressor, args=(rows,)), axis=0)\n"
    )
    error = failing(kernel, cell)
    text = error["explanation"]
    assert "`singles`'s elements are single examples of shape (5,), with no batch axis" in text
    assert "Batch the dataset before distributing it" in text
    fix = fix_of(text)
    assert fix == (
        "single_shards = mirror.experimental_distribute_dataset("
        "singles.batch(8 * mirror.num_replicas_in_sync))"
    )
    runs_cleanly(kernel, cell.replace(cell.splitlines()[1], fix))


def test_the_same_steps_written_right_are_quiet(kernel: KernelSession) -> None:
    runs_cleanly(kernel, SETUP)
    runs_cleanly(
        kernel,
        "for chunk in pair_shards:\n"
        "    out = mirror.run(replica_update, args=(chunk,))\n"
        "    total = mirror.reduce(tf.distribute.ReduceOp.SUM, out, axis=None)\n"
        "print(mirror.experimental_local_results(out), float(total))\n",
    )


def test_a_shape_error_in_a_step_run_right_is_not_blamed_on_replicas(
    kernel: KernelSession,
) -> None:
    """A variable made under the scope is a distributed value too: a shape error it meets
    inside a step run through the strategy is not called a per-replica operand."""
    runs_cleanly(kernel, SETUP)
    runs_cleanly(kernel, "with mirror.scope():\n    wrong_w = tf.Variable(tf.ones((4, 1)))\n")
    error = failing(
        kernel,
        "def tilted(pair):\n"
        "    rows, _ = pair\n"
        "    return tf.matmul(rows, wrong_w)\n"
        "for chunk in pair_shards:\n"
        "    out = mirror.run(tilted, args=(chunk,))\n",
    )
    assert "per-replica" not in error["explanation"]
    assert error["course"]["section"] != "devices-placement"
