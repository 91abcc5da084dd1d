import numpy as np
import tensorflow as tf


class ToyEnv:
    def reset(self):
        self.t = 0
        return np.zeros(4, dtype="float32")

    def step(self, action):
        self.t += 1
        obs = np.random.rand(4).astype("float32")
        return obs, float(action == 1), self.t >= 20


policy = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(2)])
opt = tf.keras.optimizers.Adam(1e-2)
env = ToyEnv()

obs = env.reset()
done = False
while not done:
    with tf.GradientTape() as tape:
        logits = policy(obs[None, :])
        action = tf.random.categorical(logits, 1)[0, 0]
        logp = tf.nn.log_softmax(logits)[0, action]
    obs, reward, done = env.step(action.numpy())
    grads = tape.gradient(logp, policy.trainable_variables)
    opt.apply_gradients([(-reward * g, v) for g, v in zip(grads, policy.trainable_variables)])
