"""An IPython kernel in which ``jupyterlab_tfcoach`` cannot be imported.

Used as a kernel spec's argv (``python blocked_kernel.py -f {connection_file}``)
to stand for a Python environment that lacks the package.
"""

import sys


class _HideTfcoach:
    def find_spec(self, name, path=None, target=None):
        if name == "jupyterlab_tfcoach" or name.startswith("jupyterlab_tfcoach."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


sys.meta_path.insert(0, _HideTfcoach())

from ipykernel.kernelapp import launch_new_instance  # noqa: E402

launch_new_instance()
