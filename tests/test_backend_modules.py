"""ROC402 stays silent in a module named for the NVIDIA backend it integrates (users who chose
that backend import it), and reports the same import in any other module."""

import pytest

from rocm_lint.config import Config
from rocm_lint.engine import check_file

IMPORT = "import tensorrt as trt\n\n\ndef build(net):\n    return trt.Builder(net)\n"


@pytest.mark.parametrize(
    "name", ["trt_utils.py", "custom_fx2trt.py", "onnx2trt.py", "export_tensorrt.py", "tensorrt/engine.py"]
)
def test_a_module_named_for_the_backend_is_silent(tmp_path, name):
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(IMPORT)
    assert check_file(str(path), Config()) == []


@pytest.mark.parametrize("name", ["model.py", "strtrim.py", "control.py"])
def test_any_other_module_is_reported(tmp_path, name):
    path = tmp_path / name
    path.write_text(IMPORT)
    assert [f.code for f in check_file(str(path), Config())] == ["ROC402"]
