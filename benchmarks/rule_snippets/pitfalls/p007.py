import numpy as np
from keras import Variable, ops

# %% Magnitude pruning of one weight matrix
rng = np.random.default_rng(42)
weights = Variable(rng.normal(size=(64, 32)).astype("float32"), name="dense_kernel")

magnitudes = np.abs(ops.convert_to_numpy(weights))
threshold = np.quantile(magnitudes, 0.8)
keep = ops.cast(ops.abs(weights) > threshold, "float32")

# %% apply the mask
weights = weights * keep
print("kept fraction:", float(ops.mean(keep)))
