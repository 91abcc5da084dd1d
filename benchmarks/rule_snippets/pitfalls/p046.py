import tensorflow as tensorflow_lib


@tensorflow_lib.function
def taylor_exp(x):
    # truncated Taylor series of exp(x)
    term = tensorflow_lib.ones_like(x)
    total = tensorflow_lib.ones_like(x)
    for k in range(20):
        term = term * x / (k + 1)
        total = total + term
    return total


xs = tensorflow_lib.linspace(-1.0, 1.0, 5)
approx = taylor_exp(xs)
