import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(2)])


@tf.function
def mean_logit(x, split):
    logits = model(x, training=(split == "train"))
    return tf.reduce_mean(logits)


data = {"train": tf.random.normal([32, 4]), "validation": tf.random.normal([8, 4])}
summary = {}
for split in ["train", "validation"]:
    summary[split] = mean_logit(data[split], split)
