import tensorflow as tensorflow_lib


@tensorflow_lib.function
def ema_of_batch(values, decay=0.9):
    ema = tensorflow_lib.Variable(0.0, trainable=False)
    for v in values:
        ema.assign(decay * ema + (1.0 - decay) * v)
    return ema.read_value()


smoothed = ema_of_batch(tensorflow_lib.constant([1.0, 2.0, 3.0, 2.5]))
