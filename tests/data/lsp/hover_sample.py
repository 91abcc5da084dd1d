import tensorflow as T
from tensorflow import GradientTape as Recorder
from tensorflow import cast
from helpers import tf_alias

my_var_ = T.Variable(1.0)  # a name with Markdown characters in it
x = T.constant([1.0, 2.0])
spec = T.TensorSpec([None, 3], T.float32)

with Recorder(persistent=True) as tape_ü:
    tape_ü.watch(x)
    y = my_var_ * cast(x, T.float32)
grads = tape_ü.gradient(y, [my_var_, x])
my_var_.assign_add(1.0)
my_var_.assign(2.0)
T.print("done")  # T.print in a comment is not hovered
message = "T.function in a string"


class Model:
    def __init__(self):
        self.w = T.Variable(0.0)

    @T.function
    def step(self, g):
        self.w.assign_sub(g)


my_var_ = my_var_ * 2
my_var_.assign(3.0)
tf_alias.function


def rescale(my_var_):
    my_var_.assign(0.5)  # the parameter, not the module's variable


kept = T.Variable(5.0)
also_kept = kept
also_kept.assign(6.0)
