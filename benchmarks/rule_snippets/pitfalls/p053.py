import tensorflow as tensorflow_lib

target = tensorflow_lib.constant([[0.2, 0.7, 0.1]])
logits = tensorflow_lib.constant([[1.0, 2.0, 0.5]])

# How should the logits move to match the target distribution?
with tensorflow_lib.GradientTape() as tape:
    probs = tensorflow_lib.nn.softmax(logits)
    loss = tensorflow_lib.reduce_sum(tensorflow_lib.square(probs - target))

grad_logits = tape.gradient(loss, logits)
new_logits = logits - 0.5 * grad_logits
