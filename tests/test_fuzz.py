"""Property tests guarding the engine: it never crashes, and gates behave like gates."""

import ast
import textwrap

from hypothesis import HealthCheck, given, settings, strategies as st

from rocm_lint.config import Config
from rocm_lint.engine import check_python_source, decode_source
from rocm_lint.finding import FileError

HAZARDS = [
    "torch.backends.cuda.matmul.allow_tf32 = True",
    "model = torch.compile(model, mode='reduce-overhead')",
    "torch._inductor.config.triton.cudagraphs = True",
    "torch._inductor.config.max_autotune = True",
    "torch._inductor.config.memory_planning = True",
    "os.environ['PYTORCH_CUDA_ALLOC_CONF'] = 'max_split_size_mb:64'",
]
CODES = ["ROC101", "ROC201", "ROC203", "ROC204", "ROC205", "ROC301"]
GATES = [
    ("if not is_rocm:", "gated"),
    ("if torch.version.cuda:", "gated"),
    ("if torch.version.hip is None:", "gated"),
    ("if torch.cuda.is_available():", "open"),
    ("if torch.version.hip:", "gated"),  # ROCm-only: explicitly handled
    ("if x > 1:", "open"),
]
FILLER = ["x = 1", "print(x)", "y = [i for i in range(3)]", "def f():\n    return 2", "pass"]

settings.register_profile("ci", max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("ci")


@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=400))
def test_never_crashes_on_arbitrary_text(text):
    text = "allow_tf32 reduce-overhead max_split_size_mb pynvml\n" + text
    result = check_python_source("fuzz.py", text, Config())
    assert isinstance(result, (list, FileError))


@given(st.binary(max_size=300))
def test_never_crashes_on_arbitrary_bytes(data):
    text = decode_source("fuzz.py", data)
    if isinstance(text, str):
        assert isinstance(check_python_source("fuzz.py", text, Config()), (list, FileError))


@given(
    hazard=st.sampled_from(list(zip(HAZARDS, CODES))),
    gate=st.sampled_from(GATES),
    before=st.lists(st.sampled_from(FILLER), max_size=4),
    after=st.lists(st.sampled_from(FILLER), max_size=4),
    in_function=st.booleans(),
)
def test_gate_decides_whether_a_hazard_is_reported(hazard, gate, before, after, in_function):
    (stmt, code), (test, kind) = hazard, gate
    block = "\n".join(before + [f"{test}\n    {stmt}"] + after)
    if in_function:
        block = "def main(model, x):\n" + textwrap.indent(block, "    ")
    src = (
        "import os\nimport torch\nis_rocm = torch.version.hip is not None\nx = 0\nmodel = None\n"
        + block
        + "\n"
    )
    ast.parse(src)
    result = check_python_source("gen.py", src, Config())
    assert isinstance(result, list)
    codes = [f.code for f in result]
    assert codes == ([] if kind == "gated" else [code])


@given(hazard=st.sampled_from(list(zip(HAZARDS, CODES))), lines=st.integers(0, 30))
def test_finding_points_at_the_hazard(hazard, lines):
    stmt, code = hazard
    src = "import os\nimport torch\n" + "x = 1\n" * lines + stmt + "\n"
    (finding,) = check_python_source("gen.py", src, Config())
    assert finding.code == code
    assert finding.line == 3 + lines
