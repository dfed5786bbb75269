"""ROC504's evaluation of a build function as a ROCm install runs it: shapes of its own (an early
return, an assert, a nested branch, an undecided test, a loop first), and the NVIDIA-only gate of
every CUDAExtension (through a bound name, a ternary, a ROCm path elsewhere)."""

import textwrap

import pytest

from rocm_lint.config import Config
from rocm_lint.engine import check_source

HEAD = "import os\nimport torch\nfrom torch.utils.cpp_extension import CUDA_HOME, CUDAExtension\n"


def _lines(body):
    text = HEAD + textwrap.dedent(body)
    return sorted(f.line - 3 for f in check_source("setup.py", text, Config(select=("ROC504",))))


@pytest.mark.parametrize(
    "body, lines",
    [
        (
            "def need():\n    if CUDA_HOME is not None:\n        return\n    raise RuntimeError('nvcc')\nneed()\n",
            [5],
        ),
        ("def need():\n    assert CUDA_HOME is not None, 'nvcc'\nneed()\n", [3]),
        (
            "def need():\n    if CUDA_HOME is None:\n        if True:\n            pass\n        raise SystemExit(1)\nneed()\n",
            [6],
        ),
        # three deep: the raise sits under two branches ROCm takes
        (
            "def need():\n    x = 1\n    if CUDA_HOME is None:\n        if 'cu' in torch.__version__:\n"
            "            return\n        else:\n            raise RuntimeError('x')\nneed()\n",
            [8],
        ),
        ("def need():\n    if os.environ.get('X'):\n        raise RuntimeError('x')\nneed()\n", []),
        ("def need():\n    for _ in range(2):\n        pass\n    raise RuntimeError('x')\nneed()\n", []),
        ("def need():\n    if CUDA_HOME is not None:\n        raise RuntimeError('x')\nneed()\n", []),
        ("def need():\n    if CUDA_HOME is None:\n        print('no nvcc')\nneed()\n", []),
        ("def need():\n    raise RuntimeError('x')\nif CUDA_HOME is not None:\n    need()\n", []),
        ("def need():\n    raise RuntimeError('x')\ndef main():\n    need()\n", []),
    ],
)
def test_a_module_level_call_that_raises_on_rocm(body, lines):
    assert _lines(body) == lines


@pytest.mark.parametrize(
    "body, lines",
    [
        ("exts = []\nif CUDA_HOME is not None:\n    exts.append(CUDAExtension('a', ['a.cu']))\n", [2]),
        (
            "BUILD = CUDA_HOME is not None\nexts = []\nif BUILD:\n    exts.append(CUDAExtension('a', ['a.cu']))\n",
            [3],
        ),
        ("exts = [CUDAExtension('a', ['a.cu'])] if 'cu' in torch.__version__ else []\n", [1]),
        # a path ROCm reaches too, or a module that names the ROCm build
        ("exts = []\nif torch.cuda.is_available():\n    exts.append(CUDAExtension('a', ['a.cu']))\n", []),
        (
            "exts = []\nif CUDA_HOME is not None:\n    exts.append(CUDAExtension('a', ['a.cu']))\n"
            "else:\n    exts.append(CUDAExtension('a', ['a.hip']))\n",
            [],
        ),
        (
            "from torch.utils.cpp_extension import ROCM_HOME\nexts = []\nif CUDA_HOME is not None:\n"
            "    exts.append(CUDAExtension('a', ['a.cu']))\n",
            [],
        ),
        ("exts = []\nif CUDA_HOME is not None:\n    exts.append('a.cu')\n", []),
    ],
)
def test_every_cuda_extension_behind_an_nvidia_gate(body, lines):
    assert _lines(body) == lines
