"""Cost of explaining an error (issue #25 budget: <= 50 ms per error).

Runs failing cells of every kind the explainers name (eager and graph, Keras, tf.data,
a user layer, a tf.Module, tapes) in an in-process IPython shell whose namespace also
holds 1,000 plain objects and 200 variables, then times ``errors.explain`` on each
cell's exception (the whole entry: parsing, the failing line read, the family or the
specific explainer, the line facts). Prints the median and max per cell and overall.

    .venv/bin/python benchmarks/bench_error_explain.py [--repeat 20]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

SETUP = """
import numpy as np
import tensorflow as tf
import keras
tf.get_logger().setLevel("ERROR")
plain_objects = [object() for _ in range(1000)]
for _index in range(1000):
    globals()[f"obj_{_index}"] = plain_objects[_index]
for _index in range(200):
    globals()[f"var_{_index}"] = tf.Variable(tf.zeros([4]))
xs = tf.random.normal((32, 1))
ys = 2.0 * xs + 1.0
slope_v = tf.Variable([[0.5]])
shift_v = tf.Variable(0.0)
pics = np.random.rand(20, 10, 10).astype("float32")
table = np.random.rand(9, 5).astype("float32")

class Proj(tf.Module):
    def __init__(self):
        self.m = tf.Variable(tf.ones((5, 2)))

    def __call__(self, rows):
        return tf.matmul(rows, self.m)

proj = Proj()
"""

CELLS = {
    "loss outside the tape": """fitted = xs @ slope_v + shift_v
with tf.GradientTape() as rec:
    cost = tf.reduce_mean((fitted - ys) ** 2)
gs, gb = rec.gradient(cost, [slope_v, shift_v])
slope_v.assign_sub(0.1 * gs)
""",
    "tape used twice": """with tf.GradientTape() as rec2:
    out = tf.reduce_sum(slope_v * 3.0 + shift_v)
dslope = rec2.gradient(out, slope_v)
dshift = rec2.gradient(out, shift_v)
""",
    "matmul rank 1 in a module": "pick = table[2]\nproj(pick)",
    "conv2d input definition": """convnet = keras.Sequential([
    keras.Input(shape=pics.shape[1:]),
    keras.layers.Conv2D(4, 3),
])
""",
    "dtype in a dataset map": """pairs = tf.data.Dataset.from_tensor_slices(
    (np.ones((4, 2)), np.arange(4)))
factor32 = tf.constant([2.0, 3.0])
def rescale(v, lbl):
    return v * factor32, lbl
scaled = pairs.map(rescale)
""",
    "loop variable shape": """@tf.function
def squares_upto(k):
    acc_vals = tf.zeros([0])
    for j in tf.range(k):
        acc_vals = tf.concat([acc_vals, [tf.cast(j * j, tf.float32)]], 0)
    return acc_vals
squares_upto(tf.constant(3))
""",
    "uneven batch": """sentences = [[1, 2], [3, 4, 5], [6]]
word_ds = tf.data.Dataset.from_generator(
    lambda: iter(sentences), output_signature=tf.TensorSpec(shape=(None,), dtype=tf.int32))
for chunk in word_ds.batch(3):
    pass
""",
    "broadcast": "preds = tf.ones((4, 3))\nlabels = tf.ones((4,))\nerr = preds - labels",
    "concat": "pa = tf.ones((4, 3))\npb = tf.ones((5, 3))\nab = tf.concat([pa, pb], 1)",
    "embedding index": "emb = keras.layers.Embedding(10, 4)\nvec = emb(tf.constant([[1, 12]]))",
    "fit x/y lengths": """reg = keras.Sequential([keras.Input((5,)), keras.layers.Dense(1)])
reg.compile("sgd", "mse")
reg.fit(table, np.ones((7,)), epochs=1, verbose=0)
""",
    "ragged lists": "rows = [[1, 2, 3], [4]]\nds = tf.data.Dataset.from_tensor_slices(rows)",
    # Keras's model API misused (errors/families_keras_api.py).
    "no super().__init__()": """class Noisy(keras.layers.Layer):
    def __init__(self, level):
        self.level = level
Noisy(0.1)(table)
""",
    "fit before compile": """raw = keras.Sequential([keras.Input((5,)), keras.layers.Dense(1)])
raw.fit(table, np.ones((9, 1)), verbose=0)
""",
    "validation_split on a dataset": """ones_9 = np.ones((9, 1))
rows_ds = tf.data.Dataset.from_tensor_slices((table, ones_9)).batch(3)
reg.fit(rows_ds, validation_split=0.2, verbose=0)
""",
    "weights assigned": "raw.weights = reg.weights",
    "get_layer unknown name": 'reg.get_layer("dense_99")',
    "train_step returns a tensor": """class Stepper(keras.Model):
    def train_step(self, data):
        return tf.constant(0.0)
step_in = keras.Input((5,))
stepper = Stepper(step_in, keras.layers.Dense(1)(step_in))
stepper.compile(optimizer="sgd")
stepper.fit(table, np.ones((9, 1)), verbose=0)
""",
    "save_weights extension": 'reg.save_weights("reg.h5")',
    "unknown loss name": 'reg.compile(optimizer="adam", loss="mean_sqared_error")\n'
    "reg.fit(table, np.ones((9, 1)), verbose=0)",
    "padding value": 'conv_s = keras.layers.Conv2D(8, 3, padding="smae")',
    "unknown keyword": "rnn_k = keras.layers.LSTM(4, return_sequence=True)",
    "dtype name": 'cast_d = tf.cast(table, "flaot32")',
    "rate out of range": "drop_r = keras.layers.Dropout(1.5)",
    "axis out of range": "mean_a = tf.reduce_mean(tf.constant(table), axis=3)",
    "axis at adapt": "norm_a = keras.layers.Normalization(axis=5)\nnorm_a.adapt(table)",
    "chained batch(0)": "ds_0 = tf.data.Dataset.from_tensor_slices(table).batch(0)",
    "fit keyword": "reg.fit(table, np.ones((9, 1)), epoch=2, verbose=0)",
    "Input counting examples": """whole = keras.Sequential(
    [keras.Input(shape=table.shape), keras.layers.Dense(1)]
)
whole.compile(optimizer="adam", loss="mse")
whole.fit(table, np.ones((9, 1)), verbose=0)
""",
    # What fit/predict or adapt were given (errors/families_model_data.py).
    "validation_data (x_val)": """x_val = table[:3]
y_val = np.ones((3, 1))
reg.compile(optimizer="sgd", loss="mse")
reg.fit(table, np.ones((9, 1)), verbose=0, validation_data=(x_val))
""",
    "text to a model of ids": """texts = ["a b", "b c", "c d"]
vec = keras.layers.TextVectorization(max_tokens=10, output_sequence_length=5)
vec.adapt(texts)
reg.predict(["a b"], verbose=0)
""",
    "adapt on pairs": """words = keras.layers.TextVectorization()
words.adapt(tf.data.Dataset.from_tensor_slices((texts, [0, 1, 0])).batch(2))
""",
    "another feature count": "reg.fit(np.ones((9, 6)), np.ones((9, 1)), verbose=0)",
    # Raising cells whose cause the learner wrote elsewhere (issue #25, wt-raise2).
    "reduction without keepdims": """row_means = table.mean(axis=1)
centred = tf.constant(table) - row_means
""",
    "stacked GRUs, one kind": """gru_stack = keras.Sequential([keras.Input(shape=(6, 2)),
    keras.layers.GRU(8), keras.layers.GRU(4)])
""",
    "one image indexed": """cnn_in = keras.Input(shape=(10, 10, 1))
cnn_m = keras.Model(cnn_in, keras.layers.Conv2D(2, 3)(cnn_in))
cnn_m.predict(pics[0][..., None], verbose=0)
""",
    "load_weights unbuilt": """class TwoDense(keras.Model):
    def __init__(self):
        super().__init__()
        self.a = keras.layers.Dense(3)
    def call(self, x):
        return self.a(x)
first_net = TwoDense()
first_net(table)
import os, tempfile
two_path = os.path.join(tempfile.mkdtemp(), "two.weights.h5")
first_net.save_weights(two_path)
second_net = TwoDense()
second_net.load_weights(two_path)
""",
    "save without get_config": """class Widthed(keras.Model):
    def __init__(self, width):
        super().__init__()
        self.width = width
        self.d = keras.layers.Dense(width)
    def call(self, x):
        return self.d(x)
widthed = Widthed(3)
widthed(table)
widthed.save(os.path.join(tempfile.mkdtemp(), "widthed.keras"))
""",
    "attention on its query alone": """att = keras.layers.MultiHeadAttention(num_heads=2, key_dim=2)
att(tf.ones((2, 4, 6)))
""",
    "int labels in a library loss": """bits = np.array([0, 1, 1], "int32")
tf.nn.sigmoid_cross_entropy_with_logits(labels=bits, logits=tf.zeros([3]))
""",
    "signature given one example": """spec5 = tf.TensorSpec([None, 5], tf.float32)
@tf.function(input_signature=[spec5])
def row_sum(r):
    return tf.reduce_sum(r, axis=1)
row_sum(tf.constant(table)[0])
""",
    # Errors no family knows: the library's documentation and its own check (issue #25).
    "documented shape broken": "tf.linalg.inv(tf.constant(table))",
    "library check that failed": "tf.image.crop_to_bounding_box(pics[..., None], 2, 0, 12, 10)",
    "a layer's line that failed": "keras.layers.BatchNormalization(axis=3)(keras.Input((5,)))",
    # Last: it leaves the global policy mixed for the cells after it.
    "mixed policy output": """keras.mixed_precision.set_global_policy("mixed_float16")
half_net = keras.Sequential([keras.Input((5,)), keras.layers.Dense(2)])
half_net(table) + tf.ones((9, 2))
""",
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()

    from IPython.core.interactiveshell import InteractiveShell
    from traitlets.config import Config

    config = Config()
    config.HistoryManager.enabled = False
    shell = InteractiveShell.instance(config=config)
    shell.run_cell(SETUP, store_history=True).raise_error()

    from jupyterlab_tfcoach.monitor.errors import explain

    everything: list[float] = []
    for label, cell in CELLS.items():
        # IPython prints each failing cell's traceback: not part of the measure.
        with contextlib.redirect_stdout(io.StringIO()):
            result = shell.run_cell(cell, store_history=True, silent=True)
        exception = result.error_in_exec
        if exception is None:
            print(f"{label}: did not raise")
            continue
        times = []
        entry = None
        for _ in range(args.repeat):
            started = time.perf_counter()
            entry = explain(exception, shell)
            times.append((time.perf_counter() - started) * 1000.0)
        everything.extend(times)
        named = "entry" if entry is not None else "NO ENTRY"
        print(
            f"  {label:<28} median {statistics.median(times):6.2f} ms   "
            f"max {max(times):6.2f} ms   ({named})"
        )
    print(
        f"all: median {statistics.median(everything):.2f} ms, max {max(everything):.2f} ms; "
        f"target <= 50 ms: {'met' if max(everything) <= 50.0 else 'NOT met'}"
    )


if __name__ == "__main__":
    main()
