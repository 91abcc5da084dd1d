# %% [markdown]
# ## Partial derivatives of a two-variable function

# %%
import tensorflow as tf

a = tf.Variable(1.0)
b = tf.Variable(-0.5)

# %%
with tf.GradientTape(persistent=True) as g:
    loss = (a * b - 1.0) ** 2 + 0.1 * (a ** 2 + b ** 2)

# %%
dl_da = g.gradient(loss, a)
dl_db = g.gradient(loss, b)
dl_da, dl_db
