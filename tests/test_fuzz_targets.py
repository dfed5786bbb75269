"""Fuzz targets: generated Python programs, mutated C++ and config files through the whole
pipeline (read, check, fix, verify).  Properties: no exception escapes, no input takes long
(a hang is a failure), a fixed file parses, a second fix changes nothing, and a fix never changes
the NVIDIA program.

CI runs a small budget (``FUZZ_EXAMPLES``, default 40 per target); ``make fuzz`` runs the long
mode (``FUZZ_EXAMPLES=35000``, > 100k inputs over the three targets) and prints Hypothesis'
statistics.  Python programs come from hypothesmith (a grammar-based generator, like CSmith);
C++ and config inputs are mutations of the repository's own fixtures.
"""

import os
import time

import pytest
from hypothesis import HealthCheck, event, example, given, settings, strategies as st

from conftest import FIXTURES, is_snapshot
from rocm_lint.config import Config
from rocm_lint.discovery import language_of
from rocm_lint.engine import check_source
from rocm_lint.finding import FileError
from rocm_lint.fix.api import OVERLAPS

hypothesmith = pytest.importorskip("hypothesmith")

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "40"))
# A hang is an input that takes this long (the slowest real files check in well under a second).
HANG_SECONDS = float(os.environ.get("FUZZ_HANG_SECONDS", "20"))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=not os.environ.get("FUZZ_RANDOM"),
    suppress_health_check=list(HealthCheck),
    database=None,
)

PY_HAZARDS = [
    "torch.backends.cuda.matmul.allow_tf32 = True",
    "model = torch.compile(model, mode='reduce-overhead')",
    "torch._inductor.config.triton.cudagraphs = True",
    "os.environ['PYTORCH_CUDA_ALLOC_CONF'] = 'max_split_size_mb:64'",
    "torch.set_float32_matmul_precision('high')",
    "import pynvml",
    "major, minor = torch.cuda.get_device_capability()\nuse_fa3 = major >= 9",
]
CPP_PIECES = [
    '"',
    "'",
    "\\",
    "\\\n",
    "/*",
    "*/",
    "//",
    "\n",
    'R"(',
    ')"',
    "{",
    "}",
    "(",
    ")",
    ";",
    "#if USE_ROCM\n",
    "#ifdef USE_ROCM\n",
    "#ifndef USE_ROCM\n",
    "#else\n",
    "#endif\n",
    "#if CUDA_VERSION >= 11000\n",
    "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800\n",
    "#include <cuda_fp16.h>\n",
    "#define WARP_SIZE 32\n",
    "unsigned mask = __ballot_sync(0xffffffff, p);\n",
    "__shfl_xor_sync(0xffffffff, v, 16)",
    'asm volatile("mov.u32 %0, %%laneid;" : "=r"(x));',
    "\r\n",
    "\r",
    "\f",
    "\0",
]
CONFIG_PIECES = [
    '"',
    "'",
    "\\",
    "\\\n",
    "$(",
    "${",
    "}",
    ")",
    "`",
    "\n",
    "\r\n",
    "\r",
    "\f",
    "\ufeff",
    "#",
    "if [ -d /opt/rocm ]; then\n",
    "else\n",
    "fi\n",
    "case $X in\n",
    "esac\n",
    "export PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:128\n",
    "ENV TORCHINDUCTOR_MAX_AUTOTUNE=1\n",
    "FROM nvidia/cuda:12.4\n",
    "env:\n  TORCH_CUDA_ARCH_LIST: '8.0'\n",
    "set(CMAKE_CUDA_ARCHITECTURES 80)\n",
    "if(USE_ROCM)\n",
    "endif()\n",
    "<<EOF\n",
    "EOF\n",
    '- name: X\n  value: "1"\n',
]


def _corpus(*patterns):
    files = sorted(
        {
            p
            for pat in patterns
            for p in FIXTURES.glob(pat)
            if p.is_file() and not is_snapshot(p) and not p.name.endswith(".fixed")
        }
    )
    return [(p.name, p.read_text("utf-8", errors="replace")) for p in files if language_of(str(p))]


CPP_CORPUS = _corpus("rules/*.cu", "rules/*.cuh", "fixes/*.cu")
CONFIG_CORPUS = _corpus("config/**/*", "config/.env", "config/.github/workflows/*")


@st.composite
def mutated(draw, corpus, pieces):
    """A fixture with a few random edits: pieces inserted, spans deleted or duplicated."""
    name, text = draw(st.sampled_from(corpus))
    for _ in range(draw(st.integers(1, 6))):
        at = draw(st.integers(0, len(text)))
        op = draw(st.sampled_from(["insert", "insert", "delete", "duplicate", "repeat"]))
        if op == "insert":
            text = text[:at] + draw(st.sampled_from(pieces)) + text[at:]
        elif op == "repeat":  # a long run of one piece: where a regex could backtrack
            text = text[:at] + draw(st.sampled_from(pieces)) * draw(st.integers(2, 400)) + text[at:]
        else:
            end = draw(st.integers(at, min(len(text), at + 200)))
            text = text[:at] + (text[at:end] * 2 if op == "duplicate" else "") + text[end:]
    return name, text


def _timed(fn, *args, **kwargs):
    start = time.perf_counter()
    result = fn(*args, **kwargs)
    elapsed = time.perf_counter() - start
    assert elapsed < HANG_SECONDS, f"took {elapsed:.1f} s: a hang"
    return result


def _check_and_fix(path, text, verify):
    """Check; fix (safe only, then with unsafe); verify the result; fixing again changes nothing."""
    from rocm_lint.fix.api import fix_text

    findings = _timed(check_source, path, text, Config())
    assert isinstance(findings, (list, FileError))
    if isinstance(findings, FileError):
        event("not analysable (one error line)")
        return
    event("with findings" if findings else "no finding")
    if not any(f.fix is not None for f in findings):
        return
    for unsafe in (False, True):
        result = _timed(fix_text, path, text, Config(), unsafe=unsafe)
        if isinstance(result, FileError) or result.text == text:
            continue
        event("fixed with --unsafe-fixes, verified" if unsafe else "fixed, verified")
        verify(text, result, unsafe)
        if any(why == OVERLAPS for _, why in result.dropped):
            event("more fixes than passes on one spot: left for the next --fix, as reported")
            continue
        again = _timed(fix_text, path, result.text, Config(), unsafe=unsafe)
        assert isinstance(again, FileError) or again.text == result.text, "a second fix changed the file"


def _verify_python(old, result, unsafe):
    """The independent checker (it never sees the fixer's plan): safe fixes keep the NVIDIA
    program; unsafe ones too, reading ROC401's try/except ImportError as an import that succeeds."""
    import ast

    from rocm_lint.fix.nvidia_path import check_nvidia_path

    ast.parse(result.text)
    why = check_nvidia_path(old, result.text, path="fuzz.py", assume_imports_succeed=unsafe)
    assert why is None, f"the NVIDIA program changed: {why}"


def _verify_cpp(old, result, unsafe):
    """Every C++ fix, safe or unsafe, lives behind a ROCm macro."""
    from rocm_lint.cpp.nvidia_view import same_on_nvidia

    assert same_on_nvidia(old, result.text), "the NVIDIA translation unit changed"


@FUZZ
@given(
    program=hypothesmith.from_grammar(),
    hazards=st.lists(st.sampled_from(PY_HAZARDS), min_size=1, max_size=3),
    first=st.booleans(),
)
def test_fuzz_python(program, hazards, first):
    block = "\n".join(hazards)
    text = (
        f"import os\nimport torch\n{block}\n{program}\n"
        if first
        else f"import os\nimport torch\n{program}\n{block}\n"
    )
    try:
        compile(text, "fuzz.py", "exec")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        event("does not compose with the hazard lines")
        return
    _check_and_fix("fuzz.py", text, _verify_python)


@pytest.mark.skipif(not CPP_CORPUS, reason="no C++ fixtures")
@FUZZ
@given(case=mutated(CPP_CORPUS, CPP_PIECES))
# Found by the long campaign (benchmarks/fuzz_campaign.py): a comment swallows the ballot call's
# `, p);`, the call ran into the next function and the fix rewrote both (not idempotent).
@example(
    case=(
        "cuda_ballot_unsafe.cu",
        "__device__ int count_votes(bool p) {\n  unsigned mask = __ballot_sync(//__activemask(), p);\n"
        "  int n = __popc(mask);\n  return n;\n}\n\n__device__ int highest(bool p) {\n"
        "  uint32_t m = __ballot(p);  // no automatic fix\n  return 31 - __clz(m);\n}\n",
    )
)
# The same shape through ROC602's fix: `0xffffffff//, v, 16)` leaves the shuffle call open (the
# statement's lines must hold whole brackets: cpp.gates.whole_statement_lines).
@example(
    case=(
        "cuda_ballot_unsafe.cu",
        "__device__ int f(bool p, int v) {\n  int n = 0;\n"
        "__shfl_xor_sync(0xffffffff//, v, 16)__shfl_xor_sync(0xffffffff, v, 16)  return n;\n}\n\n"
        "__device__ int highest(bool p) {\n  uint32_t m = __ballot(p);  // no automatic fix\n"
        "  return 31 - __clz(m);\n}\n",
    )
)
def test_fuzz_cpp(case):
    name, text = case
    _check_and_fix(name, text, _verify_cpp)


@pytest.mark.skipif(not CONFIG_CORPUS, reason="no config fixtures")
@FUZZ
@given(case=mutated(CONFIG_CORPUS, CONFIG_PIECES))
def test_fuzz_config(case):
    name, text = case
    result = _timed(check_source, name, text, Config())
    assert isinstance(result, (list, FileError))
    event(
        "not analysable (one error line)"
        if isinstance(result, FileError)
        else "with findings"
        if result
        else "no finding"
    )


def test_corpora_cover_every_language():
    assert {language_of(n) for n, _ in CPP_CORPUS} >= {"cuda"}
    assert {language_of(n) for n, _ in CONFIG_CORPUS} >= {"shell", "dockerfile", "yaml", "dotenv", "cmake"}


# -- the cache reader -----------------------------------------------------------------------------------
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)
ENTRY_KEYS = ["hash", "triggers", "used", "stat", "deps", "result", "candidates", "edits", "mac", "findings"]


@pytest.fixture(scope="module")
def warm_cache(tmp_path_factory):
    """A file, its check stored in a cache and saved: (cache dir, path, its result, the shard)."""
    from rocm_lint.cache import Cache, content_hash, shard_of

    root = tmp_path_factory.mktemp("fuzz-cache")
    path = root / "a.py"
    path.write_text(f"import torch\n{PY_HAZARDS[0]}\n")
    result = check_source(str(path), path.read_text(), Config())
    cache = Cache(str(root / "cache"), Config())
    digest = content_hash(path.read_bytes())
    cache._hashes[str(path)] = digest
    cache.store(str(path), digest, "t", [], result)
    cache.save()
    shard = cache.entries.file(shard_of(str(path)))
    return root / "cache", str(path), digest, result, shard


@st.composite
def shard_bytes(draw, base: bytes):
    """A shard: random JSON; the real shard with an entry, a field or a finding replaced by
    random JSON; or its bytes mutated.  Sealed with the user's secret (what reaches the shape
    checks) or under the old seal (a forgery)."""
    import json

    from rocm_lint.cache_entries import seal, secret

    mac, _, body = base.partition(b"\n")
    kind = draw(st.sampled_from(["json", "entry", "field", "finding", "bytes"]))
    if kind == "json":
        body = json.dumps(draw(JSON_VALUES)).encode()
    elif kind == "bytes":
        data = bytearray(base)
        for _ in range(draw(st.integers(1, 8))):
            at = draw(st.integers(0, max(len(data) - 1, 0)))
            data[at : at + 1] = draw(st.binary(min_size=0, max_size=4))
        return bytes(data)
    else:
        data = json.loads(body)
        [(key, entry)] = list(data["entries"].items())
        if kind == "entry":
            data["entries"][key] = draw(JSON_VALUES)
        elif kind == "field":
            entry[draw(st.sampled_from(ENTRY_KEYS))] = draw(JSON_VALUES)
        else:
            findings = entry["result"]["findings"]
            field = draw(
                st.sampled_from(["line", "col", "code", "message", "fix", "end_line", "cell", "severity"])
            )
            findings[0][field] = draw(JSON_VALUES)
        body = json.dumps(data).encode()
    if draw(st.booleans()):
        mac = seal(body, secret()).encode()
        event("resealed")
    return mac + b"\n" + body


@FUZZ
@given(data=st.data())
def test_fuzz_cache_reader(warm_cache, data):
    """Whatever a shard holds, a run's lookups never raise and never take long: a miss, or (the
    shard sealed with the user's own secret and of the right shape) a result as the engine makes
    one; under another seal, never a hit other than the stored result."""
    from rocm_lint.cache import Cache
    from rocm_lint.cache_entries import seal, secret
    from rocm_lint.finding import Finding

    directory, path, digest, result, shard = warm_cache
    with open(shard, "rb") as fh:
        base = fh.read()
    try:
        new = data.draw(shard_bytes(base))
        with open(shard, "wb") as fh:
            fh.write(new)
        cache = Cache(str(directory), Config())
        got_digest, _ = _timed(cache.digest, path, 1 << 20)
        assert got_digest == digest
        hit = _timed(cache.lookup, path, digest, "t")
        mac, _, body = new.partition(b"\n")
        if mac != seal(body, secret()).encode():
            assert hit is None  # not sealed with the user's secret: never believed
        elif new == base:
            assert hit == result
        assert hit is None or isinstance(hit, FileError) or all(isinstance(f, Finding) for f in hit)
        assert cache.lookup_edits(path) is None or isinstance(cache.lookup_edits(path), dict)
        event("hit (the seal held)" if hit is not None else "miss")
        cache.save()  # writing back what it read never raises either
    finally:
        with open(shard, "wb") as fh:
            fh.write(base)


# -- the language server's JSON-RPC stream ----------------------------------------------------------------
RPC_METHODS = [
    "textDocument/hover",
    "textDocument/codeAction",
    "textDocument/diagnostic",
    "shutdown",
    "nonsense/x",
]


@st.composite
def rpc_stream(draw):
    """A byte stream to the server: frames of well-formed requests and notifications (random
    positions and ids), of random JSON, of random bytes, with honest or lying lengths.  Returns
    (stream, ids of the requests every one of which must be answered)."""
    import json

    uri = "file:///fuzz/a.py"
    frames, answered, honest = [], [], True
    opened = {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": "import torch\n"}}
    frames.append(json.dumps({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": opened}).encode())
    positions = st.integers(-(2**40), 2**40) | st.integers(-2, 5)
    shut = False
    for msg_id in range(1, draw(st.integers(1, 8)) + 1):
        kind = draw(st.sampled_from(["request", "request", "json", "bytes", "lie"]))
        if kind == "request":
            method = draw(st.sampled_from(RPC_METHODS))
            here = {"line": draw(positions), "character": draw(positions)}
            params = {"textDocument": {"uri": uri}, "position": here, "range": {"start": here, "end": here}}
            params["context"] = {"diagnostics": []}
            frames.append(
                json.dumps({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params}).encode()
            )
            if honest:
                answered.append(msg_id)
        elif kind == "json":
            frames.append(json.dumps(draw(JSON_VALUES)).encode())
        elif kind == "bytes":
            frames.append(draw(st.binary(max_size=40)))
        else:  # a length that lies: what follows may be read as its body
            frames.append(b"LIE" + str(draw(st.integers(0, 2**64))).encode())
            honest = False
    stream = b""
    for frame in frames:
        if frame.startswith(b"LIE"):
            stream += b"Content-Length: " + frame[3:] + b"\r\n\r\n"
        else:
            stream += b"Content-Length: %d\r\n\r\n" % len(frame) + frame
    return stream, answered, shut


def _run_server(stream: bytes) -> bytes:
    import io
    import logging

    from rocm_lint.server import create_server
    from rocm_lint.server_stream import BoundedStdin

    class Out(io.BytesIO):
        def close(self):  # ``exit`` closes it: keep what was written
            pass

    logging.getLogger("pygls").setLevel(logging.CRITICAL)
    initialize = (
        b'{"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"processId": null, '
        b'"rootUri": null, "capabilities": {}}}'
    )
    head = b"Content-Length: %d\r\n\r\n" % len(initialize) + initialize
    out = Out()
    server = create_server()
    server.start_io(stdin=BoundedStdin(io.BytesIO(head + stream)), stdout=out)
    return out.getvalue()


def _responses(data: bytes):
    import json

    out = []
    while data:
        head, _, rest = data.partition(b"\r\n\r\n")
        length = int(head.split(b"Content-Length: ")[1].split(b"\r\n")[0])
        out.append(json.loads(rest[:length]))
        data = rest[length:]
    return out


@FUZZ
@given(case=rpc_stream())
@example(case=(b"Content-Length: 1000000000000\r\n\r\n{}", [], False))
def test_fuzz_server_stream(case):
    """Whatever the client sends, the server never raises out of its loop, never hangs, holds
    no more than its bounds, and answers every well-formed request before a length that lied."""
    pytest.importorskip("pygls")
    stream, must_answer, _ = case
    written = _timed(_run_server, stream)
    responses = _responses(written)
    ids = [r.get("id") for r in responses if "method" not in r]
    for msg_id in must_answer:
        assert ids.count(msg_id) == 1, (msg_id, responses)
    event("every request answered" if must_answer else "no request to answer")
