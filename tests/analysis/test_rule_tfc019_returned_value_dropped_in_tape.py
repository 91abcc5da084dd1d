from __future__ import annotations

from jupyterlab_tfcoach.analysis.testing import check, check_cells, span

CODE = "TFC019"


def test_a_kl_term_returned_next_to_the_reconstruction_and_left_out_of_the_loss():
    source = """\
        import tensorflow as tf

        def vae_forward(x):
            mean, log_var = encoder(x)
            kl = -0.5 * tf.reduce_sum(1 + log_var - mean**2 - tf.exp(log_var), axis=-1)
            return decoder(mean), kl

        def step(x):
            with tf.GradientTape() as tape:
                recon, kl = vae_forward(x)
                loss = tf.reduce_mean(tf.square(x - recon))
            grads = tape.gradient(loss, params)
            return loss
        """
    [finding] = check(source, CODE)
    assert span(finding) == (10, 16, 10, 18)
    assert finding.message.startswith(
        "`kl` (the value `vae_forward` returns as `kl`) is computed inside the GradientTape "
        "and never used: the loss leaves it out."
    )
    assert finding.fix is None


def test_notebook_cells_with_a_top_level_tape_and_a_penalty_dropped():
    cells = [
        "import tensorflow as tf",
        "def predict_with_penalty(w, x):\n"
        "    out = x @ w\n"
        "    return out, 0.01 * tf.reduce_sum(w ** 2)",
        "with tf.GradientTape() as g:\n"
        "    y_hat, penalty = predict_with_penalty(weights, features)\n"
        "    cost = tf.reduce_mean((y_hat - targets) ** 2)\n"
        "dw = g.gradient(cost, weights)",
    ]
    [finding] = check_cells(cells, CODE)
    assert (finding.cell, finding.line) == (2, 2)
    assert "`penalty` (the value `predict_with_penalty` returns as `0.01 * tf.reduce_sum(w" in (
        finding.message
    )


def test_the_fixed_loss_and_correct_look_alikes_stay_quiet():
    source = """\
        import tensorflow as tf
        import keras

        def vae_forward(x):
            mean, log_var = encoder(x)
            kl = -0.5 * tf.reduce_sum(1 + log_var - mean**2 - tf.exp(log_var), axis=-1)
            return decoder(mean), kl

        def forward_with_stats(x):
            h = net(x)
            return h, tf.math.reduce_std(h)

        def forward_with_flag(x):
            return net(x), None

        def fixed_step(x):
            with tf.GradientTape() as tape:
                recon, kl = vae_forward(x)
                loss = tf.reduce_mean(tf.square(x - recon)) + tf.reduce_mean(kl)
            return tape.gradient(loss, params)

        def underscore_step(x):
            with tf.GradientTape() as tape:
                recon, _ = vae_forward(x)
                loss = tf.reduce_mean(tf.square(x - recon))
            return tape.gradient(loss, params)

        def logged_step(x):
            with tf.GradientTape() as tape:
                h, spread = forward_with_stats(x)
                loss = tf.reduce_mean(h)
            tf.print("spread", spread)
            return tape.gradient(loss, params)

        def returned_step(x):
            with tf.GradientTape() as tape:
                h, spread = forward_with_stats(x)
                loss = tf.reduce_mean(h)
            return tape.gradient(loss, params), spread

        def constant_step(x):
            with tf.GradientTape() as tape:
                h, flag = forward_with_flag(x)
                loss = tf.reduce_mean(h)
            return tape.gradient(loss, params)

        def model_step(x):
            with tf.GradientTape() as tape:
                logits, features = model(x)
                loss = tf.reduce_mean(logits)
            return tape.gradient(loss, model.trainable_variables)

        def no_tape(x):
            recon, kl = vae_forward(x)
            return recon
        """
    assert check(source, CODE) == []
