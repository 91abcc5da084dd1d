import numpy as np
import tensorflow as tensorflow_lib

rng = np.random.default_rng(0)
ratings = rng.integers(1, 6, size=(50, 40)).astype("float32")
mask = (rng.random((50, 40)) < 0.3).astype("float32")

n_factors = 5
user_f = tensorflow_lib.Variable(rng.normal(0.5, 0.1, (50, n_factors)).astype("float32"))
item_f = tensorflow_lib.Variable(rng.normal(0.5, 0.1, (40, n_factors)).astype("float32"))
opt = tensorflow_lib.keras.optimizers.Adam(0.05)


def nmf_step():
    with tensorflow_lib.GradientTape() as tape:
        pred = tensorflow_lib.matmul(user_f, item_f, transpose_b=True)
        loss = tensorflow_lib.reduce_sum(mask * (ratings - pred) ** 2)
    grads = tape.gradient(loss, [user_f, item_f])
    opt.apply_gradients(zip(grads, [user_f, item_f]))
    return loss


for epoch in range(200):
    nmf_step()
    # keep the user factors non-negative
    user_f = tensorflow_lib.clip_by_value(user_f, 0.0, 10.0)
