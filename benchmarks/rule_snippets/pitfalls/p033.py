import tensorflow as tf


class LogisticRegression:
    def __init__(self, n_features):
        self.w = tf.Variable(tf.zeros([n_features, 1]), name="w")
        self.b = tf.Variable(0.0, name="b")

    def predict_proba(self, x):
        return tf.sigmoid(tf.matmul(x, self.w) + self.b)

    def fit_batch(self, x, y, lr=0.1):
        with tf.GradientTape() as tape:
            p = self.predict_proba(x)
            loss = tf.reduce_mean(tf.keras.losses.binary_crossentropy(y, p))
        dw, db = tape.gradient(loss, [self.w, self.b])
        self.w = tf.subtract(self.w, lr * dw)
        self.b.assign_sub(lr * db)
        return loss


clf = LogisticRegression(n_features=3)
x = tf.random.normal([16, 3])
y = tf.cast(tf.reduce_sum(x, axis=1, keepdims=True) > 0, tf.float32)
clf.fit_batch(x, y)
