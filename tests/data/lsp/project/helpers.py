import tensorflow as tf_alias

__all__ = ["tf_alias"]
