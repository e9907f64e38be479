import copy
import json
import os
import shutil
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "engine", "worker", "python"))
# The kernels run in Triton's interpreter on the CPU; set before triton is imported.
os.environ.setdefault("TRITON_INTERPRET", "1")

FIXTURES = os.path.join(HERE, "fixtures")
EXAMPLES = os.path.join(ROOT, "experiments", "kernels")

# A valid vector-add task over fixtures/planted.py; tests vary it.
ADD_TASK = {
    "source": "planted.py",
    "kernel": "add_ok",
    "inputs": [
        {"name": "x", "shape": ["N"], "dtype": "float32", "init": "randn"},
        {"name": "y", "shape": ["N"], "dtype": "float32", "init": "rand", "scale": 2.0},
        {"name": "out", "shape": ["N"], "dtype": "float32"},
    ],
    "outputs": [{"name": "out", "atol": 1e-2, "rtol": 1e-2}],
    "launch": {"grid": "(triton.cdiv(N, BLOCK),)", "args": ["x", "y", "out", "N"]},
    "reference": "planted:reference",
    "shapes": {"tune": [{"N": 1 << 20}], "check": [{"N": 1000}]},
    "baseline": {"BLOCK": 128, "num_warps": 4, "num_stages": 1},
    "space": {"params": {"BLOCK": [64, 128, 256], "num_warps": [1, 2, 4]},
              "constraints": ["BLOCK >= 32 * num_warps"]},
}


def pytest_configure(config):
    # Triton 3.6's interpreter converts 1-element arrays to scalars, which NumPy 2.x deprecates
    # (and 2.4 refuses: hence numpy<2.4 in requirements.txt).
    config.addinivalue_line("filterwarnings",
                            "ignore:Conversion of an array with ndim > 0:DeprecationWarning")


@pytest.fixture
def add_task():
    return copy.deepcopy(ADD_TASK)


@pytest.fixture
def write_task(tmp_path):
    """Writes a task dict (and the planted kernels beside it); returns the task file's path."""
    shutil.copy(os.path.join(FIXTURES, "planted.py"), tmp_path / "planted.py")
    counter = iter(range(1000))

    def write(doc):
        path = tmp_path / f"task{next(counter)}.json"
        path.write_text(json.dumps(doc))
        return str(path)
    return write
