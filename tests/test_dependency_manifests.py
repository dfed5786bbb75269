"""The dependency-manifest reader (configfiles/manifests.py, configfiles/pyproject.py) and what the
ROC405-ROC407 rules decide from it: PEP 440 pins, markers, sections, and the files the ROCm install
never reads.  The fixtures (fixtures/config/deps/, fixtures/config/ok/deps/, fixtures/rules/ROC40[567]*)
pin the findings; these tests pin the decisions underneath."""

import pytest

from rocm_lint.config import Config
from rocm_lint.workspace import Workspace
from rocm_lint.configfiles.manifest_platform import (
    names_other_platform,
    nvidia_variant,
    only_nvidia_images_use,
)
from rocm_lint.configfiles.manifests import read_manifest
from rocm_lint.configfiles.scanner import read_unit
from rocm_lint.discovery import language_of
from rocm_lint.engine import check_source
from rocm_lint.rules.dependencies import (
    cuda_index,
    exact_pin,
    marker_excludes_rocm,
    not_for_rocm_section,
    parse_requirement,
    requirement_hazards,
)


@pytest.fixture
def proj(tmp_path):
    """A folder whose name says nothing (pytest's own names hold words such as `nvidia`)."""
    folder = tmp_path / "proj"
    folder.mkdir()
    return folder


def codes(path, text, language=None, workspace=None):
    result = check_source(str(path), text, Config(), language or language_of(path), workspace=workspace)
    assert isinstance(result, list), result
    return sorted((f.line, f.code) for f in result if f.code in ("ROC405", "ROC406", "ROC407"))


def manifest(path, text, language=None):
    return read_manifest(read_unit(str(path), text, Config(), language or language_of(path)))


# -- discovery ---------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "path",
    [
        "requirements.txt",
        "requirements-dev.txt",
        "requirements_rocm.in",
        "test-requirements.txt",
        "constraints.txt",
        "requirements/cuda.txt",
        "requirements/common.in",
        "pyproject.toml",
        "sub/setup.cfg",
    ],
)
def test_manifests_are_discovered_by_name(path):
    assert language_of(path) == "manifest"


@pytest.mark.parametrize(
    "path",
    ["notes.txt", "CMakeLists.txt", "requirements/README.txt", "setup.py", "environment.yml", "LICENSE.txt"],
)
def test_other_files_keep_their_language(path):
    assert language_of(path) != "manifest"


# -- PEP 440: which torch pins replace a ROCm torch --------------------------------------------------------
@pytest.mark.parametrize(
    "text, pin",
    [
        ("torch==2.4.0", ("==", "2.4.0")),  # matches 2.4.0+rocm6.1 only: any other ROCm release is replaced
        ("torch===2.4.0", ("===", "2.4.0")),  # string equality: no ROCm build matches
        ("torchvision == 0.19.0 ; sys_platform == 'linux'", ("==", "0.19.0")),
        ("torch>=2.0,==2.4.0", ("==", "2.4.0")),
        ("torch==2.4.*", None),  # a prefix: every 2.4 ROCm build matches
        ("torch==2.4.0+rocm6.1", None),  # a ROCm pin
        ("torch==2.4.0+cu121", None),  # a CUDA build: ROC405's
        ("torch~=2.4.0", None),
        ("torch>=2.4", None),
        ("torch<2.6", None),
        ("torch", None),
        ("pytorch-lightning==2.4.0", None),
        ("torchmetrics==1.4.0", None),
        # a range that only one release meets acts as that pin
        ("torch>=2.7.0,<2.7.1", ("range", "2.7.0")),
        ("torch>=2.7,<2.7.1", ("range", "2.7.0")),
        ("torch<2.7.1,>=2.7.0", ("range", "2.7.0")),
        ("torch>=2.7.0,<=2.7", ("range", "2.7.0")),
        ("torch>=2.7.0,<2.8", None),  # 2.7.0, 2.7.1 ...
        ("torch>=2.7.1,<2.8", None),
        ("torch>=2,<3", None),
        ("torch>=2.7.0,<2.7.1,!=2.7.0.post1", None),  # three clauses: left open
        ("torch>=2.7.0rc1,<2.7.1", None),  # a pre-release bound: left open
        ("torch>=2.7.0.1,<2.7.0.2", ("range", "2.7.0.1")),
        # Triton: no exact-pin hazard (PyPI's wheels carry the AMD backend; rules/distributions.py)
        ("triton==3.1.0", None),
        ("triton>=3.0", None),
        ("triton>=3.1.0,<3.1.1", None),
        ("pytorch-triton-rocm==3.1.0", None),
    ],
)
def test_exact_pins(text, pin):
    assert exact_pin(parse_requirement(text)) == pin


@pytest.mark.parametrize(
    "text, flagged",
    [
        ("vllm", True),
        ("vllm>=0.6.3", True),
        ("flashinfer-python==0.2.5", True),
        ("flashinfer_python", True),  # PEP 503: the same distribution
        ("sgl-kernel", True),
        ("cuda-python>=12.4", True),
        ("cuda-bindings", True),
        ("nvidia-cudnn-frontend", True),
        ("cuda-toolkit[cublas,curand]==12.8.*", True),
        ("vllm==0.6.3+rocm631", False),  # a ROCm build by its local label
        ("vllm @ https://example.org/whl/rocm6.3/vllm-0.6.3-cp310-linux_x86_64.whl", False),
        ("vllm-flash-attn", False),  # not in the table
        ("hip-python", False),
        ("triton==3.1.0", False),  # ROC407's: PyPI has it with an AMD backend
    ],
)
def test_distributions_without_a_rocm_wheel(text, flagged):
    assert ("ROC406" in [c for c, _ in requirement_hazards(text)]) is flagged


def test_every_table_row_says_why():
    from rocm_lint.rules.distributions import DISTRIBUTIONS

    for name, row in DISTRIBUTIONS.items():
        assert name == name.lower() and "_" not in name, name  # PEP 503 spelling
        assert row.what and row.instead
        assert not row.rocm_wheel_on_pypi or row.rocm_torch_brings, name  # each row decides something


def test_a_pin_installed_from_a_rocm_index_is_the_rocm_build():
    assert [c for c, _ in requirement_hazards("torch==2.4.0")] == ["ROC407"]
    assert not list(requirement_hazards("torch==2.4.0", ("https://download.pytorch.org/whl/rocm6.1",)))
    assert [
        c for c, _ in requirement_hazards("torch==2.4.0", ("https://download.pytorch.org/whl/cu121",))
    ] == ["ROC407"]


@pytest.mark.parametrize(
    "url, cuda",
    [
        ("https://download.pytorch.org/whl/cu121", True),
        ("https://download.pytorch.org/whl/nightly/cu128", True),
        ("https://download.pytorch.org/whl/test/cu118/", True),
        ("https://data.pyg.org/whl/torch-2.4.0+cu121.html", True),
        ("https://storage.googleapis.com/jax-releases/jax_cuda_releases.html", True),
        ("https://download.pytorch.org/whl/rocm6.2", False),
        ("https://download.pytorch.org/whl/cpu", False),
        ("https://pypi.org/simple", False),
        ("https://cuda.example.com/simple", False),  # the host is not read
        ("https://repo.radeon.com/rocm/manylinux/rocm-rel-6.4/", False),
    ],
)
def test_cuda_indexes(url, cuda):
    assert cuda_index(url) is cuda


@pytest.mark.parametrize(
    "text, code",
    [
        ("nvidia-cublas-cu12==12.4.5.8", "ROC406"),
        ("nvidia-cuda-nvcc>=13", "ROC406"),
        ("cupy-cuda12x", "ROC406"),
        ("jax[cuda12]>=0.4.30", "ROC406"),
        ("jax[cuda12-pip]", "ROC406"),
        ("openmm[cuda12]==8.2", "ROC406"),
        ("onnxruntime-gpu", "ROC406"),
        ("tensorrt-llm", "ROC406"),
        ("torch-tensorrt", "ROC406"),
        ("nvidia-dali-cuda120", "ROC406"),
        ("pycuda", "ROC406"),
        ("mxnet-cu112", "ROC406"),
        ("torch==2.4.0+cu121", "ROC405"),
        ("jaxlib==0.4.30+cuda12.cudnn89", "ROC405"),
        (
            "flash_attn @ https://github.com/x/y/releases/download/v2/flash_attn-2.7.4+cu12torch2.4-cp311-linux_x86_64.whl",
            "ROC405",
        ),
        (
            "https://github.com/x/y/releases/download/v1/llama_cpp_binaries-0.1+cu124-py3-none-linux_x86_64.whl",
            "ROC405",
        ),
    ],
)
def test_what_a_requirement_asks_for(text, code):
    assert [c for c, _ in requirement_hazards(text)] == [code]


@pytest.mark.parametrize(
    "text",
    [
        "cupy-rocm-5-0",
        "jax[rocm]",
        "onnxruntime-rocm",
        "nvidia-ml-py",
        "cupy",
        "torch==2.4.0+rocm6.1",
        "triton>=3.0",
        "ray[default]",
        "pkg[cudf]",
        "llama_cpp_binaries @ https://x/llama_cpp_binaries-0.1+rocm7.2-py3-none-any.whl",
    ],
)
def test_rocm_builds_and_look_alikes(text):
    assert not list(requirement_hazards(text))


# -- markers and sections -----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "marker, excluded",
    [
        ("sys_platform == 'win32'", True),
        ('platform_system == "Darwin"', True),
        ("platform_machine == 'aarch64'", True),
        ("'linux' not in sys_platform", True),
        ("extra == 'cu124'", True),
        ("sys_platform == 'win32' or platform_system == 'Darwin'", True),
        ("(sys_platform == 'linux') and python_version < '3.9'", False),  # unknown Python: not excluded
        ("sys_platform == 'linux' or sys_platform == 'win32'", False),
        ("'linux' in sys_platform", False),
        ("python_version >= '3.10'", False),
        ("extra == 'serve'", False),
        ("", False),
        ("sys_platform ==", False),
        ("((", False),  # malformed: not excluded, never a crash
    ],
)
def test_markers_that_exclude_a_rocm_host(marker, excluded):
    assert marker_excludes_rocm(marker) is excluded


@pytest.mark.parametrize(
    "section, silent",
    [
        ("cuda", True),
        ("cu121", True),
        ("cuda12_pip", True),
        ("with-cuda", True),
        ("flashattentiontorch260cu12x", True),
        ("trtllm", True),
        ("nvcc", True),
        ("npu", True),
        ("intel-gpu-torch260", True),
        ("colab-ampere", True),
        ("", False),
        ("serve", False),
        ("rocm", False),
        ("amd", False),
        ("torch", False),
        ("dev", False),
    ],
)
def test_sections_named_for_another_platform(section, silent):
    assert not_for_rocm_section(section) is silent


# -- the readers -------------------------------------------------------------------------------------------
def test_requirements_file_options_includes_and_offsets(proj):
    text = (
        "--index-url https://pypi.org/simple\n-r base.txt\n-c constraints.txt\n"
        "-ihttps://download.pytorch.org/whl/cu121\n"
        "torch==2.4.0 --hash=sha256:abc \\\n"
        "  --extra-index-url https://download.pytorch.org/whl/cu118\n"
        "-e ./local\n# torch==1.0 in a comment\nnumpy  # pinned elsewhere\n"
    )
    m = manifest(proj / "requirements.txt", text)
    assert [r.text for r in m.requirements] == ["torch==2.4.0", "numpy"]
    assert m.includes == ["base.txt", "constraints.txt"]
    assert [i.url for i in m.indexes] == [
        "https://pypi.org/simple",
        "https://download.pytorch.org/whl/cu121",
        "https://download.pytorch.org/whl/cu118",
    ]
    torch = m.requirements[0]
    assert text[torch.start : torch.end] == "torch==2.4.0"
    assert all(text[i.start : i.end] == i.url for i in m.indexes)
    assert torch.indexes == tuple(i.url for i in m.indexes)


def test_pip_commands_in_shell(proj):
    text = (
        'sudo -H python3 -m pip --no-cache-dir install -U "torch==2.4.0" -r req.txt -t /opt/x numpy\n'
        "uv pip install --index-url https://download.pytorch.org/whl/rocm6.1 torch==2.4.0\n"
        "pip3.11 install $TORCH_SPEC\n"
        "pip download torch==2.4.0\n"
        "echo pip install torch==2.4.0\n"
        "pip config set global.index-url https://download.pytorch.org/whl/cu121\n"
    )
    m = manifest(proj / "setup_env.sh", text)
    assert [(r.text, r.computed) for r in m.requirements] == [
        ("torch==2.4.0", False),
        ("numpy", False),
        ("torch==2.4.0", False),
        ("$TORCH_SPEC", True),
    ]
    assert m.requirements[2].indexes == ("https://download.pytorch.org/whl/rocm6.1",)
    assert m.requirements[0].indexes == ()  # the other command's index does not apply
    assert [i.how for i in m.indexes] == ["index-url", "setting"]
    assert codes(proj / "setup_env.sh", text) == [(1, "ROC407"), (6, "ROC405")]


def test_pyproject_tables(proj):
    text = """
[project]
dependencies = ["torch==2.4.0", 'numpy']
optional-dependencies.serve = ["onnxruntime-gpu"]

[dependency-groups]
dev = ["pytest", {include-group = "lint"}]

[tool.pdm.dev-dependencies]
test = ["cupy-cuda12x"]

[[tool.pdm.source]]
name = "torch"
url = "https://download.pytorch.org/whl/cu121"

[tool.uv]
extra-index-url = ["https://download.pytorch.org/whl/cu118"]
"""
    m = manifest(proj / "pyproject.toml", text)
    assert [(r.text, r.section) for r in m.requirements] == [
        ("torch==2.4.0", ""),
        ("numpy", ""),
        ("onnxruntime-gpu", "serve"),
        ("pytest", "dev"),
        ("cupy-cuda12x", "test"),
    ]
    assert all(text[r.start : r.end] == r.text for r in m.requirements)
    assert codes(proj / "pyproject.toml", text) == [
        (3, "ROC407"),
        (4, "ROC406"),
        (10, "ROC406"),
        (14, "ROC405"),
        (17, "ROC405"),
    ]


def test_uv_explicit_indexes_count_where_a_source_uses_them(proj):
    text = """
[tool.uv.sources]
torch = [{ index = "cu124", marker = "sys_platform == 'linux'" }, { index = "cu126", extra = "cu126" }]
torchvision = { index = "cu118", marker = "sys_platform == 'win32'" }

[[tool.uv.index]]
name = "cu124"
url = "https://download.pytorch.org/whl/cu124"
explicit = true

[[tool.uv.index]]
name = "cu126"
url = "https://download.pytorch.org/whl/cu126"
explicit = true

[[tool.uv.index]]
name = "cu118"
url = "https://download.pytorch.org/whl/cu118"
explicit = true

[[tool.uv.index]]
name = "unused"
url = "https://download.pytorch.org/whl/cu121"
explicit = true

[[tool.uv.index]]
name = "everything"
url = "https://download.pytorch.org/whl/cu130"
"""
    assert codes(proj / "pyproject.toml", text) == [(8, "ROC405"), (28, "ROC405")]


def test_poetry(proj):
    text = """
[tool.poetry.dependencies]
python = "^3.10"
torch = "2.3.1"
torchvision = "^0.18"
cupy-cuda12x = { version = "^13", optional = true }
onnxruntime-gpu = { version = "*", markers = "sys_platform == 'win32'" }

[tool.poetry.extras]
cuda = ["cupy-cuda12x"]

[tool.poetry.group.dev.dependencies]
torchaudio = { version = "==2.3.1", source = "cu121" }

[[tool.poetry.source]]
name = "cu121"
url = "https://download.pytorch.org/whl/cu121"
priority = "explicit"
"""
    assert codes(proj / "pyproject.toml", text) == [(4, "ROC407"), (13, "ROC407"), (17, "ROC405")]


def test_setup_cfg_and_conda(proj):
    cfg = "[options]\ninstall_requires =\n    torch==2.2.2\n    numpy\n[options.extras_require]\ncu12 = cupy-cuda12x\n"
    assert codes(proj / "setup.cfg", cfg) == [(3, "ROC407")]
    env = (
        "name: x\ndependencies:\n  - pip\n  - pytorch-cuda=12.1\n  - pip:\n      - 'torch==2.1.2+cu121'  # cuda\n"
        "      - --extra-index-url https://download.pytorch.org/whl/cu121\nvariables:\n  - torch==9.9\n"
    )
    assert codes(proj / "env.yml", env) == [(6, "ROC405"), (7, "ROC405")]


def test_bad_input_gives_nothing(proj):
    for text in (
        "[project\ndependencies = [",
        "\x00\x01",
        "[project]\ndependencies = 3\n",
        "[tool.poetry.dependencies]\ntorch = [1, {version = 2}]\n",
    ):
        assert codes(proj / "pyproject.toml", text) == []
    assert codes(proj / "requirements.txt", "-r\n--index-url\n-i\ntorch==\n[extra]\n@ x\n") == []


# -- files the ROCm install never reads ----------------------------------------------------------------------
def test_a_file_with_a_rocm_twin_is_the_nvidia_variant(proj):
    (proj / "requirements.txt").write_text("--extra-index-url https://download.pytorch.org/whl/cu121\n")
    (proj / "requirements_linux.txt").write_text("torch==2.4.0\n")
    (proj / "requirements_amd.txt").write_text("torch==2.4.0+rocm6.1\n")
    (proj / "requirements_linux_amd64.txt").write_text("torch==2.4.0\n")  # amd64 is an architecture
    assert nvidia_variant(Workspace(), str(proj / "requirements.txt"))
    assert not nvidia_variant(Workspace(), str(proj / "requirements_linux.txt"))
    assert not nvidia_variant(Workspace(), str(proj / "requirements_amd.txt"))
    shared = proj / "shared"
    shared.mkdir()
    (shared / "requirements.txt").write_text("torch==2.4.0\n")
    (shared / "requirements-rocm.txt").write_text("-r requirements.txt\n")  # the twin installs it too
    assert not nvidia_variant(Workspace(), str(shared / "requirements.txt"))


def test_a_twin_created_later_is_a_cache_dependency(proj):
    """The twin decides the file's findings, so the check records it (present or not): a cached
    result is not reused once `requirements_rocm.txt` appears beside `requirements.txt`."""
    text = "--extra-index-url https://download.pytorch.org/whl/cu121\n"
    (proj / "requirements.txt").write_text(text)
    workspace = Workspace()
    with workspace.recording_reads() as reads:
        assert codes(proj / "requirements.txt", text, workspace=workspace) == [(1, "ROC405")]
    assert str(proj / "requirements_rocm.txt") in reads and str(proj / "requirements-amd.txt") in reads
    (proj / "requirements_rocm.txt").write_text("torch==2.4.0+rocm6.1\n")
    assert codes(proj / "requirements.txt", text) == []


@pytest.mark.parametrize(
    "path, other",
    [
        ("requirements/npu.txt", True),
        ("requirements_intel.txt", True),
        ("docker/xpu/requirements.txt", True),
        ("requirements-cpu.txt", True),
        ("requirements_macos_amd64.txt", True),
        ("requirements-rocm.txt", False),
        ("requirements_cuda131.txt", True),
        ("env-cu12x.yml", True),
        ("requirements.txt", False),
        ("requirements_windows.txt", False),
    ],
)
def test_files_named_for_another_platform(path, other):
    assert names_other_platform(path) is other


def test_container_files_only_nvidia_images_use(proj):
    (proj / "requirements_docker.txt").write_text("torch==2.1.0\n")
    (proj / "requirements.txt").write_text("torch==2.1.0\n")
    (proj / "Dockerfile").write_text(
        "ARG CUDA=12.4.1\nFROM nvidia/cuda:${CUDA}-base-ubuntu22.04\n"
        "COPY requirements_docker.txt requirements.txt /tmp/\n"
    )
    assert only_nvidia_images_use(Workspace(), str(proj / "requirements_docker.txt"))
    assert not only_nvidia_images_use(
        Workspace(), str(proj / "requirements.txt")
    )  # not a container-build file
    assert codes(proj / "requirements_docker.txt", "torch==2.1.0\n") == []
    (proj / "Dockerfile.rocm").write_text("FROM rocm/pytorch:latest\nCOPY requirements_docker.txt /tmp/\n")
    assert not only_nvidia_images_use(
        Workspace(), str(proj / "requirements_docker.txt")
    )  # a new file: a new listing


def test_nvidia_branches_stages_and_ci(proj):
    script = (
        "if command -v nvidia-smi; then pip install onnxruntime-gpu; fi\n"
        "if [[ $CUDA_VERSION == 13* ]]; then pip install nvidia-nccl-cu13;\n"
        "else pip install nvidia-nccl-cu12; fi\n"
        "pip install onnxruntime-gpu\n"
    )
    assert codes(proj / "setup_env.sh", script) == [(4, "ROC406")]
    docker = (
        "FROM nvidia/cuda:12.4.1-devel AS build\nRUN pip install cupy-cuda12x\n"
        "FROM ubuntu:22.04\nRUN pip install cupy-cuda12x\n"
    )
    assert codes(proj / "Dockerfile", docker) == [(4, "ROC406")]
    ci = proj / ".github" / "workflows"
    ci.mkdir(parents=True)
    job = "jobs:\n  t:\n    runs-on: ubuntu-latest\n    steps:\n      - run: pip install cupy-cuda12x\n"
    assert codes(ci / "test.yml", job) == []  # CI runners are not ROCm hosts unless the file says so
    assert codes(ci / "rocm.yml", job.replace("ubuntu-latest", "[self-hosted, mi300x]")) == [(5, "ROC406")]
