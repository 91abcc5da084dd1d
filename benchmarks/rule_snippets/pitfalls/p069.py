import tensorflow as tf

def discounted_return(rewards):
    horizon = tf.shape(rewards)[0]
    discounts = 0.99 ** tf.range(horizon)
    return tf.reduce_sum(discounts * rewards)


episode_rewards = tf.constant([0.0, 0.0, 1.0, 0.0, 5.0])
print(discounted_return(episode_rewards))
