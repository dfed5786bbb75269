"""ROC801 on a dtype bound to a name: reported when the name is read, silent when nothing reads it."""

from rocm_lint.config import Config
from rocm_lint.engine import check_file


def _lines(tmp_path, text):
    path = tmp_path / "quant.py"
    path.write_text(text)
    return [(f.line, f.code) for f in check_file(str(path), Config())]


def test_a_binding_that_is_read_picks_the_format(tmp_path):
    text = "import torch\n\n\ndef cast(x):\n    dtype = torch.float8_e4m3fn\n    return x.to(dtype)\n"
    assert _lines(tmp_path, text) == [(5, "ROC801")]


def test_a_binding_nothing_reads_picks_nothing(tmp_path):
    text = (
        "import torch\n\n\ndef check(x, ref):\n    dtype = torch.float8_e4m3fn\n"
        "    # assert_close(x.view(dtype), ref.view(dtype))\n    return x\n"
    )
    assert _lines(tmp_path, text) == []
    # a module-level name may be imported elsewhere: still reported
    assert _lines(tmp_path, "import torch\n\nFP8 = torch.float8_e4m3fn\n") == [(3, "ROC801")]
