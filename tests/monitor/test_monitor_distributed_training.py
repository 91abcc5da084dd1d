"""Silent mistakes of a custom loop under tf.distribute, and a checkpoint restored out of
order (issue #25; ``training/replica_loss_scaling.py``, ``training/replica_reductions.py``,
``training/checkpoint_order.py``, and ``symptoms/metric_resets.py`` following the function
a step hands to ``strategy.run``). Each note names the learner's values; its fix is run and
gives the right figure; the same code written right stays quiet."""

from __future__ import annotations

import pytest

from tests.harness import IMPORTS, KernelSession, KernelSetup, checked_report, note_texts, run
from tests.harness import value_of as value_in

pytestmark = [pytest.mark.kernel, pytest.mark.tensorflow, pytest.mark.timeout(400)]

KERNEL = KernelSetup(
    after_load=IMPORTS
    + """
host = tf.config.list_physical_devices("CPU")[0]
tf.config.set_logical_device_configuration(
    host, [tf.config.LogicalDeviceConfiguration(), tf.config.LogicalDeviceConfiguration()])
"""
)

SETUP = """twin = tf.distribute.MirroredStrategy(
    ["/cpu:0", "/cpu:1"], cross_device_ops=tf.distribute.ReductionToOneDevice())
LOCAL_BS = 16
FULL_BS = LOCAL_BS * twin.num_replicas_in_sync
grid = np.random.default_rng(5).normal(size=(128, 6)).astype("float32")
kinds = (grid[:, 0] > 0).astype("int32") + (grid[:, 1] > 0).astype("int32")
chunks = tf.data.Dataset.from_tensor_slices((grid, kinds)).batch(FULL_BS)
shards = twin.experimental_distribute_dataset(chunks)
with twin.scope():
    clf = keras.Sequential([keras.Input((6,)), keras.layers.Dense(3)])
    hits = keras.metrics.SparseCategoricalAccuracy()
xent = keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction=None)
first = next(iter(shards))
whole_x, whole_y = next(iter(chunks))
true_mean = float(tf.reduce_mean(xent(whole_y, clf(whole_x))))
"""


def notes_of(kernel: KernelSession, code: str) -> list[str]:
    return note_texts(checked_report(run(kernel, code)))


LOSS = """def replica_loss(y, logits):
    each = xent(y, logits)
    return tf.nn.compute_average_loss(each, global_batch_size=LOCAL_BS)

summed = float(twin.reduce(
    tf.distribute.ReduceOp.SUM,
    twin.run(lambda b: replica_loss(b[1], clf(b[0])), args=(first,)), axis=None))
"""


def test_a_loss_averaged_over_the_per_replica_batch(kernel: KernelSession) -> None:
    run(kernel, SETUP)
    told = [t for t in notes_of(kernel, LOSS) if "scaled by the replica count" in t]
    assert len(told) == 1, told
    text = told[0]
    assert "(line 3 in `replica_loss`) divides each replica's summed loss by `LOCAL_BS` = 16" in (
        text
    )
    assert "`twin` has 2 replicas and the dataset was batched by `FULL_BS` = 32" in text
    assert "Write `global_batch_size=FULL_BS`." in text
    assert abs(value_in(kernel, "summed / true_mean") - 2.0) < 1e-3
    fixed = LOSS.replace("global_batch_size=LOCAL_BS", "global_batch_size=FULL_BS")
    assert not [t for t in notes_of(kernel, fixed) if "replica count" in t]
    assert abs(value_in(kernel, "summed / true_mean") - 1.0) < 1e-3


SUM_OF_MEANS = """@tf.function
def shard_loss(batch):
    def on_device(batch):
        x, y = batch
        return tf.reduce_mean(xent(y, clf(x)))
    parts = twin.run(on_device, args=(batch,))
    return twin.reduce(tf.distribute.ReduceOp.SUM, parts, axis=None)

held = float(shard_loss(first))
"""


def test_per_replica_means_added(kernel: KernelSession) -> None:
    run(kernel, SETUP)
    told = [t for t in notes_of(kernel, SUM_OF_MEANS) if "Per-replica means added" in t]
    assert len(told) == 1, told
    text = told[0]
    assert "(line 7 in `shard_loss`) adds the 2 replicas' values" in text
    assert "`on_device` returns a `reduce_mean`" in text
    assert "times the mean, and so is `held`." in text
    fix = "twin.reduce(tf.distribute.ReduceOp.MEAN, parts, axis=None)"
    assert f"`{fix}`" in text
    fixed = SUM_OF_MEANS.replace("twin.reduce(tf.distribute.ReduceOp.SUM, parts, axis=None)", fix)
    assert not [t for t in notes_of(kernel, fixed) if "means added" in t]
    assert abs(value_in(kernel, "held / true_mean") - 1.0) < 1e-3
    # Sums of the global-batch share added with SUM are right: quiet.
    right = SUM_OF_MEANS.replace(
        "tf.reduce_mean(xent(y, clf(x)))",
        "tf.nn.compute_average_loss(xent(y, clf(x)), global_batch_size=FULL_BS)",
    )
    assert not [t for t in notes_of(kernel, right) if "means added" in t]
    assert abs(value_in(kernel, "held / true_mean") - 1.0) < 1e-3


CHECKPOINTS = """import tempfile
level = tf.Variable(0.0)
keeper = tf.train.CheckpointManager(
    tf.train.Checkpoint(level=level), tempfile.mkdtemp(), max_to_keep=4)
for value in (1.0, 2.0, 3.0):
    level.assign(value)
    keeper.save()
level.assign(0.0)
"""


def test_the_oldest_checkpoint_restored(kernel: KernelSession) -> None:
    run(kernel, CHECKPOINTS)
    restore = "tf.train.Checkpoint(level=level).restore(keeper.checkpoints[0])\n"
    told = [t for t in notes_of(kernel, restore) if "oldest checkpoint restored" in t]
    assert len(told) == 1, told
    text = told[0]
    assert "`keeper` lists its 3 checkpoints from the oldest to the newest" in text
    assert "`keeper.latest_checkpoint`" in text
    assert value_in(kernel, "float(level.numpy())") == 1.0
    fixed = restore.replace("keeper.checkpoints[0]", "keeper.latest_checkpoint")
    assert not [t for t in notes_of(kernel, fixed) if "checkpoint" in t]
    assert value_in(kernel, "float(level.numpy())") == 3.0
    # One checkpoint kept: its first is its latest, quiet.
    single = (
        "only = tf.train.CheckpointManager(tf.train.Checkpoint(level=level), "
        "tempfile.mkdtemp(), max_to_keep=1)\n"
        "only.save()\n"
        "tf.train.Checkpoint(level=level).restore(only.checkpoints[0])\n"
    )
    assert not [t for t in notes_of(kernel, single) if "checkpoint" in t]


STEPS = """def replica_fit(batch):
    x, y = batch
    hits.update_state(y, clf(x))
    return tf.constant(0.0)

@tf.function
def fit_shards(batch):
    return twin.run(replica_fit, args=(batch,))
"""
EPOCHS = """figures = []
for round_ in range(3):
    for batch in shards:
        fit_shards(batch)
    figures.append(float(hits.result()))
"""


def test_a_metric_updated_through_strategy_run_never_reset(kernel: KernelSession) -> None:
    run(kernel, SETUP)
    run(kernel, STEPS)
    run(kernel, "hits.reset_state()")
    told = [t for t in notes_of(kernel, EPOCHS) if "never reset between epochs" in t]
    assert len(told) == 1, told
    assert "`hits.result()` (line 5)" in told[0]
    assert (
        "put `hits.reset_state()` at the start of the body of `for round_ in range(3):`"
        in (told[0])
    )
    fixed = EPOCHS.replace(
        "for round_ in range(3):\n", "for round_ in range(3):\n    hits.reset_state()\n"
    )
    assert not [t for t in notes_of(kernel, fixed) if "never reset" in t]
    assert value_in(kernel, "float(hits.count.numpy())") == 128.0
