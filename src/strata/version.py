"""``strata.version``: the build facts PyTorch's generated ``torch/version.py`` holds, for
strata itself (``import strata as torch; torch.version.cuda`` is None, as on a CPU build).

Under the torch alias, ``torch.version`` reports the PyTorch API level instead (Note [Two
version numbers] in ``torch_alias.py``).
"""

__version__ = "0.1.0"
git_version = f"strata-{__version__}"
debug = False
cuda = hip = xpu = None
