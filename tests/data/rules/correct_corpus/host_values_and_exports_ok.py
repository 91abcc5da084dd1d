"""Correct code next to what TFC014 and TFC012 reach: loops that need each value in Python
(an environment, NumPy sampling, a tokenizer), loops that do not train (inference,
evaluation, greedy decoding), and batch-1 signatures made for export."""

import gymnasium as gym
import numpy as np
import tensorflow as tf

N_ACTIONS = 4
env = gym.make("LunarLander-v3")
actor = tf.keras.Sequential(
    [tf.keras.layers.Dense(64, activation="relu"), tf.keras.layers.Dense(N_ACTIONS)]
)
critic = tf.keras.Sequential(
    [tf.keras.layers.Dense(64, activation="relu"), tf.keras.layers.Dense(1)]
)
actor_opt = tf.keras.optimizers.Adam(3e-4)
critic_opt = tf.keras.optimizers.Adam(1e-3)


@tf.function
def update(states, actions, advantages, returns):
    with tf.GradientTape(persistent=True) as tape:
        logits = actor(states)
        picked = tf.gather(tf.nn.log_softmax(logits), actions, batch_dims=1)
        actor_loss = -tf.reduce_mean(picked * advantages)
        critic_loss = tf.reduce_mean((returns - tf.squeeze(critic(states), -1)) ** 2)
    actor_opt.apply_gradients(
        zip(
            tape.gradient(actor_loss, actor.trainable_variables),
            actor.trainable_variables,
            strict=True,
        )
    )
    critic_opt.apply_gradients(
        zip(
            tape.gradient(critic_loss, critic.trainable_variables),
            critic.trainable_variables,
            strict=True,
        )
    )
    del tape
    return actor_loss, critic_loss


def train_agent(steps, rollout=256, gamma=0.99):
    """An advantage actor-critic: the environment needs every sampled action."""
    state, _ = env.reset(seed=0)
    states, actions, rewards = [], [], []
    for _ in range(steps):
        probs = tf.nn.softmax(actor(state[None, :]))
        action = np.random.choice(N_ACTIONS, p=probs.numpy()[0])
        next_state, reward, terminated, truncated, _ = env.step(action)
        states.append(state)
        actions.append(action)
        rewards.append(reward)
        state = next_state
        if terminated or truncated:
            state, _ = env.reset()
        if len(states) == rollout:
            returns = np.cumsum(np.array(rewards)[::-1] * gamma)[::-1].astype(np.float32)
            values = tf.squeeze(critic(np.array(states, np.float32)), -1)
            update(np.array(states, np.float32), np.array(actions), returns - values, returns)
            states, actions, rewards = [], [], []


@tf.function
def predict_fn(images):
    return tf.nn.softmax(actor(images))


def predict_all(dataset):
    """Inference: collecting each batch's predictions on the host is the point."""
    predictions = []
    for images in dataset:
        predictions.append(predict_fn(images).numpy())
    return np.concatenate(predictions)


def greedy_decode(decoder, tokenizer, start_id, max_len=32):
    """Greedy decoding: each step feeds the id read back, the tokenizer gets them all."""
    ids = [start_id]
    state = None
    for _ in range(max_len):
        logits, state = decoder(tf.constant([[ids[-1]]]), state)
        ids.append(int(tf.argmax(logits[0, -1]).numpy()))
    return tokenizer.decode(ids)


# Batch-1 signatures for a phone app: converted to TFLite, or squeezed in the body.
@tf.function(input_signature=[tf.TensorSpec([1, 8], tf.float32)])
def act_on_device(state):
    return tf.argmax(actor(state), axis=-1)


@tf.function(input_signature=[tf.TensorSpec([1, 8], tf.float32)])
def value_of(state):
    return critic(state)[0, 0] + 0.0 * tf.reduce_sum(tf.squeeze(state, axis=0))


converter = tf.lite.TFLiteConverter.from_concrete_functions(
    [act_on_device.get_concrete_function()], actor
)
tflite_bytes = converter.convert()
