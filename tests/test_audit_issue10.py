"""Issue 10 as a user meets it without the opencl extra: ``strata.opencl.is_available()`` is
False, ``device_count()`` 0, and using the device says what to install (it only said that no
device exists). Runs in a fresh process that cannot import pyopencl."""

import subprocess
import sys

PROGRAM = """
import sys

class NoPyOpenCL:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == "pyopencl":
            raise ImportError(f"No module named {name!r}")

sys.meta_path.insert(0, NoPyOpenCL())
import strata
print(strata.opencl.is_available(), strata.opencl.device_count())
for use in (lambda: strata.zeros(1, device="opencl"), strata.opencl.get_device_name):
    try:
        use()
    except RuntimeError as e:
        print(e)
"""


def test_without_pyopencl_the_device_says_what_to_install():
    out = subprocess.run([sys.executable, "-c", PROGRAM], capture_output=True, text=True,
                         timeout=120, check=True).stdout.splitlines()
    assert out[0] == "False 0"
    message = "the opencl device needs pyopencl and an OpenCL driver: pip install 'strata[opencl]'"
    assert out[1:] == [message] * 2
