"""Test guard: any attempt to import TensorFlow fails and is logged.

Put this directory first on PYTHONPATH and set TFCOACH_TF_GUARD_LOG to a file.
"""

import os
import sys


class _BlockTensorFlow:
    def find_spec(self, name, path=None, target=None):
        if name == "tensorflow" or name.startswith("tensorflow."):
            log = os.environ.get("TFCOACH_TF_GUARD_LOG")
            if log:
                with open(log, "a", encoding="utf-8") as handle:
                    handle.write(f"{os.getpid()} {name} {' '.join(sys.orig_argv)}\n")
            raise ModuleNotFoundError(f"tfcoach test guard: import of {name!r} blocked", name=name)
        return None


sys.meta_path.insert(0, _BlockTensorFlow())
