"""GradientTape patterns that are correct."""

import tensorflow as tf

x = tf.constant(3.0)
with tf.GradientTape() as tape:
    tape.watch(x)
    y = x * x
dy_dx = tape.gradient(y, x)

with tf.GradientTape(persistent=True) as tape:
    tape.watch(x)
    y = x * x
    z = y * y
dz_dx = tape.gradient(z, x)
dy_dx = tape.gradient(y, x)
del tape

v = tf.Variable(2.0)
with tf.GradientTape() as g:
    loss = v * v
grad = g.gradient(loss, v)

with tf.GradientTape() as outer:
    outer.watch(x)
    with tf.GradientTape() as inner:
        inner.watch(x)
        y = x ** 3
    dy = inner.gradient(y, x)
d2y = outer.gradient(dy, x)

c = tf.convert_to_tensor([1.0, 2.0])
with tf.GradientTape(watch_accessed_variables=False) as tape:
    tape.watch([c, v])
    out = tf.reduce_sum(c * v)
grads = tape.gradient(out, [c, v])


def jacobian_of(f, inputs):
    inputs = tf.constant(inputs)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(inputs)
        outputs = f(inputs)
    jac = tape.jacobian(outputs, inputs)
    grad = tape.gradient(outputs, inputs)
    return jac, grad  # the tape is released when the function returns


def two_losses(model, x, y):
    with tf.GradientTape(persistent=True) as tape:
        pred = model(x)
        loss_a = tf.reduce_mean(tf.square(pred - y))
        loss_b = tf.reduce_mean(tf.abs(pred - y))
    grads_a = tape.gradient(loss_a, model.trainable_variables)
    grads_b = tape.gradient(loss_b, model.trainable_variables)
    del tape
    return grads_a, grads_b


def gradient_in_branches(model, x, use_l1):
    with tf.GradientTape() as tape:
        pred = model(x)
        l1 = tf.reduce_mean(tf.abs(pred))
        l2 = tf.reduce_mean(tf.square(pred))
    if use_l1:
        return tape.gradient(l1, model.trainable_variables)
    else:
        return tape.gradient(l2, model.trainable_variables)


def gradient_early_return(model, x, flag):
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(model(x))
    if flag:
        return tape.gradient(loss, model.trainable_variables)
    return tape.gradient(2 * loss, model.trainable_variables)


def fresh_tape_each_step(model, batches, optimizer):
    for xb, yb in batches:
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(xb) - yb))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))


def gradient_wrt_param(f, x):
    # ``x`` is a parameter of unknown type: maybe a variable.
    with tf.GradientTape() as tape:
        y = f(x)
    return tape.gradient(y, x)


def watched_after_cast(values):
    x = tf.constant(values)
    x = tf.cast(x, tf.float32)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.reduce_sum(x ** 2)
    return tape.gradient(y, x)


def gradients_of_list(a, b):
    p = tf.constant(1.0)
    q = tf.constant(2.0)
    with tf.GradientTape() as tape:
        tape.watch([p, q])
        r = p * q + a * b
    return tape.gradient(r, [p, q])


def tape_stop_recording(w, x):
    with tf.GradientTape() as tape:
        y = w * x
        with tape.stop_recording():
            tf.print("not recorded:", y)
    return tape.gradient(y, w)


def manual_tape(w):
    tape = tf.GradientTape()
    with tape:
        loss = w * w
    return tape.gradient(loss, w)


def train_with_warmup(model, dataset, optimizer, warmup_steps):
    for step, (x, y) in enumerate(dataset):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
        if step < warmup_steps:
            grads = tape.gradient(0.1 * loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
            continue  # the second gradient below is for the other steps, on a new tape
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))


def first_negative_gradient(model, batches):
    found = None
    for x in batches:
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(model(x))
        if loss < 0:
            found = tape.gradient(loss, model.trainable_variables)
            break
        tf.print("skipping batch, gradient norm:", tf.linalg.global_norm(
            tape.gradient(loss, model.trainable_variables)))
    return found


def apply_grads(tape, loss, variables, optimizer):
    """A helper that takes the tape: one gradient computation per tape."""
    grads = tape.gradient(loss, variables)
    optimizer.apply_gradients(zip(grads, variables))
    return grads


def two_losses(tape, loss_a, loss_b, variables):
    return tape.gradient(loss_a, variables), tape.gradient(loss_b, variables)


helper_w = tf.Variable(1.0)
helper_opt = tf.keras.optimizers.SGD(0.1)
with tf.GradientTape() as helper_tape:
    helper_loss = helper_w * helper_w
apply_grads(helper_tape, helper_loss, [helper_w], helper_opt)

with tf.GradientTape(persistent=True) as both_tape:
    first_loss, second_loss = helper_w * 2.0, helper_w * helper_w
two_losses(both_tape, first_loss, second_loss, [helper_w])
del both_tape
