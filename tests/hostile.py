"""Hostile inputs (issue 38): the cases of the reliability sweep, shared by the fast tests
(tests/test_hostile_inputs.py, one or two per defect) and the sweep (tests/test_hostile_sweep.py,
every case and its variants with time limits and totals).

Every case builds its own tree under a temporary directory, with an ``outside`` folder beside
the project standing for the rest of the user's disk: a case passes when rocm-lint exits with
the code it should, prints no traceback, finishes within its time limit, leaves ``outside``
exactly as it was and loses nothing in the project.
"""

import hashlib
import json
import os
import resource
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Dict, List, Optional

HAZARD = "torch.backends.cuda.matmul.allow_tf32 = True"
SOURCE = f"import torch\n{HAZARD}\n"
FIXED_MARK = "if not is_rocm:"
MEMORY_LIMIT = 2 << 30  # bytes of address space a run may take (a /dev/zero shard: ~24 GB)
TIMEOUT = 60


@dataclass
class Run:
    rc: Optional[int]  # None: it hung (killed at the time limit)
    stdout: str
    stderr: str

    @property
    def hung(self) -> bool:
        return self.rc is None

    @property
    def crashed(self) -> bool:
        return "Traceback (most recent call last)" in self.stderr or self.rc in (-9, -11, -6)


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    os.setsid()


def env_for(extra: Optional[Dict[str, str]] = None) -> Dict[str, str]:
    env = dict(os.environ)
    env.pop("NO_COLOR", None)
    env.pop("FORCE_COLOR", None)
    env.pop("ROCM_LINT_CACHE_DIR", None)
    env.update(extra or {})
    return env


def rocm_lint(*args, cwd, env=None, timeout: float = TIMEOUT, stdin: Optional[bytes] = None) -> Run:
    """The real command line in a subprocess, its memory and time bounded."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "rocm_lint", *map(str, args)],
        cwd=cwd,
        env=env_for(env),
        stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=_limit_memory,
    )
    try:
        out, err = proc.communicate(stdin, timeout=timeout)
        return Run(proc.returncode, out.decode("utf-8", "replace"), err.decode("utf-8", "replace"))
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        return Run(None, out.decode("utf-8", "replace"), err.decode("utf-8", "replace"))


def snapshot(root: Path) -> Dict[str, str]:
    """Every entry under ``root``: a file's content hash, a link's target, a folder."""
    out = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = os.path.join(folder, name)
            rel = os.path.relpath(path, root)
            if os.path.islink(path):
                out[rel] = "link:" + os.readlink(path)
            elif os.path.isdir(path):
                out[rel] = "dir"
            elif os.path.isfile(path):
                with open(path, "rb") as fh:
                    out[rel] = hashlib.sha256(fh.read()).hexdigest()
            else:
                out[rel] = "special"
    return out


def tree(tmp: Path) -> Dict[str, Path]:
    """A project (two files with a fixable finding), the disk outside it, a victim file there."""
    project, outside = tmp / "project", tmp / "outside"
    project.mkdir(parents=True)
    outside.mkdir()
    (project / "train.py").write_text(SOURCE)
    (project / "other.py").write_text(SOURCE)
    (outside / "victim.txt").write_text("keep me\n")
    (outside / "victim.py").write_text(SOURCE)
    return {"project": project, "outside": outside, "victim": outside / "victim.txt"}


@dataclass
class Case:
    """One hostile input: ``build`` makes the tree and returns how to run it; the run must end
    with ``rc`` (a set of allowed codes), and ``check`` (optional) says what else must hold."""

    name: str
    build: Callable[[Path], dict]
    rc: tuple
    check: Optional[Callable[[dict, Run], Optional[str]]] = None
    timeout: float = TIMEOUT
    tags: List[str] = field(default_factory=list)


@dataclass
class Verdict:
    case: str
    crash: bool = False
    hang: bool = False
    wrong_exit: bool = False
    outside_written: bool = False
    lost: Optional[str] = None
    run: Optional[Run] = None

    @property
    def ok(self) -> bool:
        return not (self.crash or self.hang or self.wrong_exit or self.outside_written or self.lost)


def judge(case: Case, tmp: Path) -> Verdict:
    setup = case.build(tmp)
    outside = setup.get("outside", tmp / "outside")
    before = snapshot(outside) if outside.exists() else {}
    run = (
        setup["run"]()
        if callable(setup.get("run"))
        else rocm_lint(*setup["args"], cwd=setup["cwd"], env=setup.get("env"), timeout=case.timeout)
    )
    verdict = Verdict(case.name, run=run)
    verdict.crash = run.crashed
    verdict.hang = run.hung
    verdict.wrong_exit = not run.hung and run.rc not in case.rc
    verdict.outside_written = outside.exists() and snapshot(outside) != before
    if case.check is not None and not run.hung:
        verdict.lost = case.check(setup, run)
    return verdict


# -- the cache ---------------------------------------------------------------------------------------
def cache_shards(cache: Path) -> List[Path]:
    return sorted(cache.glob("*/*/*.json"))


def warm_cache(tmp: Path) -> dict:
    """A project and its cache, written by a first run."""
    setup = tree(tmp)
    cache = tmp / "cache"
    first = rocm_lint("check", "--cache-dir", cache, ".", cwd=setup["project"])
    assert first.rc == 1, first.stderr
    setup.update(cache=cache, cwd=setup["project"], args=["check", "--cache-dir", cache, "."])
    return setup


def _reports_the_real_findings(setup: dict, run: Run) -> Optional[str]:
    lines = [ln for ln in run.stdout.splitlines() if "ROC101" in ln]
    if len(lines) != 2 or any("FORGED" in ln for ln in run.stdout.splitlines()):
        return f"not the real findings: {run.stdout!r}"
    if run.stderr.count("\n") > 2:
        return f"more than the summary on stderr: {run.stderr!r}"
    return None


def shard_replaced(make: Callable[[Path], None]) -> Callable[[Path], dict]:
    """Every shard of a warm cache replaced by ``make(path)`` (a FIFO, a link, other JSON)."""

    def build(tmp: Path) -> dict:
        setup = warm_cache(tmp)
        for shard in cache_shards(setup["cache"]):
            shard.unlink()
            make(shard)
        return setup

    return build


def read_shard(shard: Path):
    """(seal line, entries JSON) of a shard."""
    mac, _, body = shard.read_bytes().partition(b"\n")
    return mac, json.loads(body)


def write_shard(shard: Path, mac: bytes, data, reseal: bool) -> None:
    """Write ``data`` as the shard; ``reseal``: sealed with this user's secret (as rocm-lint would
    have: what reaches the entries' shape check), else under the old seal line (a forgery)."""
    body = json.dumps(data).encode()
    if reseal:
        from rocm_lint.cache_entries import seal, secret

        mac = seal(body, secret()).encode()
    shard.write_bytes(mac + b"\n" + body)


def entries_rewritten(change: Callable[[dict], object], reseal: bool) -> Callable[[Path], dict]:
    """Every entry of a warm cache replaced by ``change(entry)`` (valid JSON, another shape, or
    the same shape with forged findings), the shard resealed or not."""

    def build(tmp: Path) -> dict:
        setup = warm_cache(tmp)
        for shard in cache_shards(setup["cache"]):
            mac, data = read_shard(shard)
            data["entries"] = {k: change(v) for k, v in data["entries"].items()}
            write_shard(shard, mac, data, reseal)
        return setup

    return build


def _forge_message(entry):
    for finding in entry["result"]["findings"]:
        finding["message"] = "FORGED \x1b[2J"
    return entry


def _forge_clean(entry):
    entry["result"] = {"findings": []}
    return entry


def _wrong_types(entry):
    for finding in entry["result"]["findings"]:
        finding["line"] = "two"
        finding["fix"] = {"edits": "nope"}
    return entry


def _deps_not_pairs(entry):
    entry["deps"] = [1, 2, 3]
    return entry


WRONG_SHAPES = {
    "entry-is-a-list": lambda e: [],
    "entry-is-a-number": lambda e: 7,
    "result-is-text": lambda e: dict(e, result="x"),
    "findings-not-a-list": lambda e: dict(e, result={"findings": 3}),
    "finding-fields-wrong-types": _wrong_types,
    "deps-not-pairs": _deps_not_pairs,
    "stat-wrong": lambda e: dict(e, stat="yesterday"),
    "used-is-text": lambda e: dict(e, used="now"),
    "candidates-wrong": lambda e: dict(e, candidates=[1, None]),
    "edits-wrong": lambda e: dict(e, edits={"by_finding": {"k": [["x", [1], [2, 3]]]}}),
    "forged-message": _forge_message,
    "forged-clean": _forge_clean,
}


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _link_to(target: str) -> Callable[[Path], None]:
    return lambda path: path.symlink_to(target)


def _text(text: str) -> Callable[[Path], None]:
    return lambda path: path.write_text(text)


SHARD_KINDS = {
    "fifo": _fifo,
    "dev-zero": _link_to("/dev/zero"),
    "dev-urandom": _link_to("/dev/urandom"),
    "link-out": None,  # a link to a shard-shaped file outside (filled in by the case)
    "directory": lambda path: path.mkdir(),
    "not-json": _text("{{{"),
    "deep-json": _text("[" * 100_000 + "]" * 100_000),
    "json-array": _text("[1, 2, 3]"),
    "wrong-format": _text('{"format": 99, "entries": {}}'),
    "entries-not-dict": _text('{"format": 2, "entries": [1]}'),
}


RESEALED_TEXTS = {
    "not-json": b"{{{",
    "deep-json": b"[" * 100_000 + b"]" * 100_000,
    "json-array": b"[1, 2, 3]",
    "wrong-format": b'{"format": 99, "entries": {}}',
    "entries-not-dict": b'{"format": 3, "entries": [1]}',
    "entries-hold-lists": b'{"format": 3, "entries": {"/x.py": []}}',
}


def shard_resealed(body: bytes) -> Callable[[Path], dict]:
    """Every shard ``body`` under a valid seal: what reaches the shard's shape check."""

    def build(tmp: Path) -> dict:
        from rocm_lint.cache_entries import seal, secret

        setup = warm_cache(tmp)
        for shard in cache_shards(setup["cache"]):
            shard.write_bytes(seal(body, secret()).encode() + b"\n" + body)
        return setup

    return build


def _link_out_shards(tmp: Path) -> dict:
    """Each shard a link to a copy of itself outside: never followed (a planted link could
    point at anything; the cache reads its own files only)."""
    setup = warm_cache(tmp)
    for shard in cache_shards(setup["cache"]):
        copy = setup["outside"] / f"shard-{shard.name}"
        copy.write_bytes(shard.read_bytes())
        shard.unlink()
        shard.symlink_to(copy)
    return setup


def cache_cases() -> List[Case]:
    cases = []
    for kind, make in SHARD_KINDS.items():
        build = _link_out_shards if make is None else shard_replaced(make)
        cases.append(Case(f"cache-shard-{kind}", build, (1,), _reports_the_real_findings, tags=["cache"]))
    for kind, body in RESEALED_TEXTS.items():
        cases.append(
            Case(
                f"cache-shard-{kind}-resealed",
                shard_resealed(body),
                (1,),
                _reports_the_real_findings,
                tags=["cache"],
            )
        )
    for name, change in WRONG_SHAPES.items():
        for reseal in (False, True):
            if reseal and name.startswith("forged"):
                continue  # a forger has no secret: resealed, it is the user's own cache
            cases.append(
                Case(
                    f"cache-entry-{name}" + ("-resealed" if reseal else ""),
                    entries_rewritten(change, reseal),
                    (1,),
                    _reports_the_real_findings,
                    tags=["cache"],
                )
            )
    cases += [
        Case("cache-default-dir-is-a-link", _default_cache_link, (1,), _cache_link_untouched, tags=["cache"]),
        Case(
            "cache-settings-folder-is-a-link",
            _settings_link,
            (1,),
            _reports_the_real_findings,
            tags=["cache"],
        ),
        Case("clean-a-linked-cache-dir", _clean_link, (2,), _clean_said_why, tags=["cache"]),
        Case("clean-a-linked-named-cache-dir", _clean_named_link, (2,), _clean_said_why, tags=["cache"]),
    ]
    return cases


def _default_cache_link(tmp: Path) -> dict:
    setup = tree(tmp)
    (setup["project"] / "pyproject.toml").write_text("[tool.rocm-lint]\n")
    (setup["project"] / ".rocm_lint_cache").symlink_to(setup["outside"])
    setup.update(cwd=setup["project"], args=["check", "."])
    return setup


def _cache_link_untouched(setup: dict, run: Run) -> Optional[str]:
    problem = _reports_the_real_findings(dict(setup), Run(run.rc, run.stdout, ""))
    if problem:
        return problem
    if "symbolic link" not in run.stderr:
        return f"the unused cache is not said: {run.stderr!r}"
    return None


def _settings_link(tmp: Path) -> dict:
    setup = warm_cache(tmp)
    for folder in sorted(setup["cache"].glob("*/*")):
        if folder.is_dir():
            target = setup["outside"] / folder.name
            target.mkdir()
            for shard in folder.iterdir():  # empty copies outside, their seal kept
                mac, data = read_shard(shard)
                write_shard(target / shard.name, mac, dict(data, entries={}), reseal=False)
            os.rename(folder, tmp / "moved")
            folder.symlink_to(target)
    return setup


def _clean_link(tmp: Path) -> dict:
    setup = tree(tmp)
    (setup["outside"] / "CACHEDIR.TAG").write_text("Signature: 8a477f597d28d172789f06886806bc55\n")
    (setup["project"] / "pyproject.toml").write_text("[tool.rocm-lint]\n")
    (setup["project"] / ".rocm_lint_cache").symlink_to(setup["outside"])
    setup.update(cwd=setup["project"], args=["clean"])
    return setup


def _clean_named_link(tmp: Path) -> dict:
    setup = _clean_link(tmp)
    setup["args"] = ["clean", "--cache-dir", setup["project"] / ".rocm_lint_cache"]
    return setup


def _clean_said_why(setup: dict, run: Run) -> Optional[str]:
    lines = run.stderr.strip().splitlines()
    if len(lines) != 1 or "symbolic link" not in lines[0]:
        return f"not one clear line: {run.stderr!r}"
    if not (setup["project"] / ".rocm_lint_cache").is_symlink():
        return "the link itself was removed"
    return None


# -- reports and baselines ---------------------------------------------------------------------------
def _report_link(option: List[str], target: str) -> Callable[[Path], dict]:
    def build(tmp: Path) -> dict:
        setup = tree(tmp)
        project = setup["project"]
        link = project / "report.out"
        if target == "outside":
            link.symlink_to(setup["victim"])
        elif target == "outside-missing":
            link.symlink_to(setup["outside"] / "new.txt")
        elif target == "dir-link":
            (project / "reports").symlink_to(setup["outside"])
            link = project / "reports" / "victim.txt"
        else:  # a link to a file inside the project: written through, kept
            (project / "kept.out").write_text("old\n")
            link.symlink_to("kept.out")
        args = ["check", "--no-cache", *[a.replace("FILE", str(link)) for a in option], "."]
        setup.update(cwd=project, args=args, link=link, target=target)
        return setup

    return build


def _report_refused_or_written(setup: dict, run: Run) -> Optional[str]:
    if setup["target"] == "inside":
        if not setup["link"].is_symlink():
            return "the link inside the project was replaced"
        if (setup["project"] / "kept.out").read_text() == "old\n":
            return "the report was not written through the link"
        return None
    errors = [ln for ln in run.stderr.splitlines() if "error" in ln]
    if len(errors) != 1 or "symbolic link" not in errors[0]:
        return f"not one clear error line: {run.stderr!r}"
    if setup["target"] != "dir-link" and not setup["link"].is_symlink():
        return "the planted link was replaced"
    return None


REPORT_OPTIONS = {
    "output-file": ["--output-format", "sarif", "-o", "FILE"],
    "output-file-long": ["--output-format", "json", "--output-file", "FILE"],
    "extra-output": ["--extra-output", "sarif=FILE"],
    "write-baseline": ["--write-baseline", "FILE"],
}


def report_cases() -> List[Case]:
    cases = []
    for option, args in REPORT_OPTIONS.items():
        for target in ("outside", "outside-missing", "dir-link", "inside"):
            rc = (1, 0) if target == "inside" else (2,)
            cases.append(
                Case(
                    f"report-{option}-link-{target}",
                    _report_link(args, target),
                    rc,
                    _report_refused_or_written,
                    tags=["reports"],
                )
            )
    return cases


# -- fixes from outside a tree -------------------------------------------------------------------------
def _fix_from(where: str, action: str) -> Callable[[Path], dict]:
    def build(tmp: Path) -> dict:
        setup = tree(tmp)
        project = setup["project"]
        (project / "planted.py").symlink_to(setup["outside"] / "victim.py")
        (project / "sub").mkdir()
        (project / "sub" / "deeper.py").symlink_to(setup["outside"] / "victim.py")
        cwd = {"parent": tmp, "root": Path("/"), "project": project}[where]
        named = project if where != "project" else "."
        setup.update(cwd=cwd, args=["check", "--no-cache", action, named])
        return setup

    return build


def _fixed_inside_only(setup: dict, run: Run) -> Optional[str]:
    text = (setup["project"] / "train.py").read_text()
    if ("--fix" in setup["args"] and FIXED_MARK not in text) or (
        "--add-noqa" in setup["args"] and "noqa" not in text
    ):
        return "the project's own file was not fixed"
    if "planted.py" not in run.stderr:
        return f"the refused link is not said: {run.stderr!r}"
    return None


def fix_cases() -> List[Case]:
    return [
        Case(
            f"fix-{action.strip('-')}-from-{where}",
            _fix_from(where, action),
            (2,),
            _fixed_inside_only,
            tags=["fix"],
        )
        for where in ("parent", "root", "project")
        for action in ("--fix", "--add-noqa")
    ]


# -- configuration -----------------------------------------------------------------------------------------
def _nested_config(name: str, depth: int, shape: str) -> Callable[[Path], dict]:
    def build(tmp: Path) -> dict:
        setup = tree(tmp)
        opener, closer = {"array": ("[", "]"), "table": ("{a = ", "}")}[shape]
        body = opener * depth + ("1" if shape == "table" else "") + closer * depth
        header = "[tool.rocm-lint]\n" if name == "pyproject.toml" else ""
        (setup["project"] / name).write_text(f"{header}x = {body}\n")
        setup.update(cwd=setup["project"], args=["check", "--no-cache", "train.py"])
        return setup

    return build


def _one_line_error(setup: dict, run: Run) -> Optional[str]:
    errors = [ln for ln in run.stderr.splitlines() if ln.strip()]
    if len(errors) != 1 or "error" not in errors[0]:
        return f"not one error line: {run.stderr!r}"
    return None


def config_cases() -> List[Case]:
    return [
        Case(
            f"config-{name}-{shape}-{depth}",
            _nested_config(name, depth, shape),
            (2,),
            _one_line_error,
            tags=["config"],
        )
        for name in ("pyproject.toml", "rocm-lint.toml")
        for shape in ("array", "table")
        for depth in (5_000, 100_000)
    ]


# -- line endings and byte-order marks ---------------------------------------------------------------
CUDA_HEADERS = (
    "// a kernel\n#include <vector>\n#include <cuda_runtime.h>\n#include <cuda_fp16.h>\n\n"
    "__global__ void k(float* x) { x[0] = 1; }\n"
)


def _endings(name: str, text: str, convert: Callable[[bytes], bytes]) -> Callable[[Path], dict]:
    def build(tmp: Path) -> dict:
        setup = tree(tmp)
        path = setup["project"] / name
        path.write_bytes(convert(text.encode()))
        setup.update(
            cwd=setup["project"], args=["check", "--no-cache", "--fix", name], path=path, convert=convert
        )
        return setup

    return build


def _fixed_with_its_endings(setup: dict, run: Run) -> Optional[str]:
    data = setup["path"].read_bytes()
    plain = data.replace(b"\xef\xbb\xbf", b"").replace(b"\r\n", b"\n").replace(b"\r", b"\n").decode()
    if FIXED_MARK not in plain and "hip/hip_runtime.h" not in plain:
        return f"not fixed: {run.stderr!r}"
    if not plain.endswith("\n") or setup["convert"](plain.encode()) != data:
        return f"the file's line endings or mark changed: {data[:80]!r}...{data[-20:]!r}"
    return None


ENDINGS = {
    "lf": lambda b: b,
    "crlf": lambda b: b.replace(b"\n", b"\r\n"),
    "cr": lambda b: b.replace(b"\n", b"\r"),
    "bom": lambda b: b"\xef\xbb\xbf" + b,
    "bom-cr": lambda b: b"\xef\xbb\xbf" + b.replace(b"\n", b"\r"),
    "bom-crlf": lambda b: b"\xef\xbb\xbf" + b.replace(b"\n", b"\r\n"),
}


def ending_cases() -> List[Case]:
    cases = []
    for ending, convert in ENDINGS.items():
        cases.append(
            Case(
                f"fix-py-{ending}",
                _endings("a.py", SOURCE, convert),
                (0,),
                _fixed_with_its_endings,
                tags=["endings"],
            )
        )
        cases.append(
            Case(
                f"fix-cu-{ending}",
                _endings("k.cu", CUDA_HEADERS, convert),
                (0,),
                _fixed_with_its_endings,
                tags=["endings"],
            )
        )
    return cases


def all_cases() -> List[Case]:
    return cache_cases() + report_cases() + fix_cases() + config_cases() + ending_cases()


# -- a full disk ------------------------------------------------------------------------------------
def mount_tiny_tmpfs(where: Path, kib: int = 64) -> bool:
    """A tmpfs of ``kib`` KiB at ``where`` (root only); False where it cannot be mounted."""
    where.mkdir(parents=True, exist_ok=True)
    if os.geteuid() != 0:
        return False
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={kib}k", "tmpfs", str(where)], capture_output=True, timeout=30
    )
    return done.returncode == 0


def unmount(where: Path) -> None:
    subprocess.run(["umount", "-l", str(where)], capture_output=True, timeout=30)


def full_disk_run(tmp: Path, option: List[str]) -> dict:
    """A report written to a tmpfs too small for it: one error line and exit 2, the old report
    kept, no temporary file left.  None where no tmpfs can be mounted."""
    setup = tree(tmp)
    project = setup["project"]
    for i in range(60):  # a report of ~60 findings: larger than the disk
        (project / f"m{i}.py").write_text(SOURCE)
    disk = tmp / "disk"
    if not mount_tiny_tmpfs(disk, 16):
        return {}
    try:
        old = disk / "report.out"
        old.write_text("old report\n")
        (disk / "filler").write_bytes(b"x" * (16 * 1024 - 4096 - 64))  # leave less than a report
        args = [a.replace("FILE", str(old)) for a in option]
        run = rocm_lint("check", "--no-cache", *args, ".", cwd=project)
        return {
            "run": run,
            "old": old.read_text(),
            "temps": sorted(p.name for p in disk.iterdir() if p.name.endswith(".tmp")),
        }
    finally:
        unmount(disk)


# -- workers and their parent ---------------------------------------------------------------------------
def _children(pid: int) -> List[int]:
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            out.append(int(entry))
    return out


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            state = fh.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


def kill_during_fix(tmp: Path, files: int = 40, wait: float = 30) -> dict:
    """``check --fix -j 2`` on a tree of ``files`` fixable files, its main process killed with
    SIGKILL as soon as its fix workers run: which workers were still alive ``wait`` seconds
    later, and whether every file is whole (the original, or the fixed text that parses)."""
    import ast

    project = tmp / "project"
    project.mkdir(parents=True)
    body = "".join(f"def f{i}(x):\n    return x * {i}\n\n\n" for i in range(300))  # slower to fix
    for i in range(files):
        (project / f"m{i:03d}.py").write_text(f"import torch\n\n{body}{HAZARD}\n")
    proc = subprocess.Popen(
        [sys.executable, "-m", "rocm_lint", "check", "--no-cache", "--fix", "-j", "2", "."],
        cwd=project,
        env=env_for(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    workers: List[int] = []
    deadline = time.monotonic() + 120
    while not workers and proc.poll() is None and time.monotonic() < deadline:
        workers = _children(proc.pid)
        time.sleep(0.01)
    finished_first = proc.poll() is not None
    proc.kill()
    proc.wait()
    end = time.monotonic() + wait
    while any(_alive(w) for w in workers) and time.monotonic() < end:
        time.sleep(0.1)
    alive = [w for w in workers if _alive(w)]
    for w in alive:  # the test's own clean-up of what the defect left
        try:
            os.kill(w, signal.SIGKILL)
        except OSError:
            pass
    broken = []
    for path in sorted(project.glob("*.py")):
        text = path.read_text()
        try:
            ast.parse(text)
        except SyntaxError:
            broken.append(path.name)
    return {"workers": workers, "alive": alive, "broken": broken, "finished_first": finished_first}


# -- the language server's stream -----------------------------------------------------------------------
class Server:
    """``rocm-lint server`` driven over raw JSON-RPC (no client library: the bytes are ours)."""

    def __init__(self, root: Path) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "rocm_lint", "server"],
            cwd=root,
            env=env_for(),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self.buffer = b""

    def send_raw(self, data: bytes) -> None:
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, message: dict) -> None:
        body = json.dumps(message).encode()
        self.send_raw(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def request(self, msg_id, method: str, params=None) -> None:
        message = {"jsonrpc": "2.0", "id": msg_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)

    def notify(self, method: str, params=None) -> None:
        message = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)

    def _fill(self, deadline: float) -> bool:
        import select

        left = deadline - time.monotonic()
        if left <= 0:
            return False
        ready, _, _ = select.select([self.proc.stdout], [], [], left)
        if not ready:
            return False
        chunk = os.read(self.proc.stdout.fileno(), 65536)
        if not chunk:
            return False
        self.buffer += chunk
        return True

    def message(self, timeout: float = 30) -> Optional[dict]:
        deadline = time.monotonic() + timeout
        while b"\r\n\r\n" not in self.buffer:
            if not self._fill(deadline):
                return None
        head, rest = self.buffer.split(b"\r\n\r\n", 1)
        length = int(
            next(ln for ln in head.split(b"\r\n") if ln.lower().startswith(b"content-length")).split(b":")[1]
        )
        while len(rest) < length:
            self.buffer = head + b"\r\n\r\n" + rest
            if not self._fill(deadline):
                return None
            head, rest = self.buffer.split(b"\r\n\r\n", 1)
        self.buffer = rest[length:]
        return json.loads(rest[:length])

    def answer(self, msg_id, timeout: float = 30) -> Optional[dict]:
        """The response to ``msg_id`` (None: none came within ``timeout``); ``msg_id`` None: the
        first response without an id."""
        deadline = time.monotonic() + timeout
        while True:
            message = self.message(max(deadline - time.monotonic(), 0))
            if message is None:
                return None
            if "method" not in message and message.get("id") == msg_id:
                return message

    def initialize(self, root: Path) -> dict:
        self.request(0, "initialize", {"processId": None, "rootUri": root.as_uri(), "capabilities": {}})
        answer = self.answer(0)
        self.notify("initialized", {})
        return answer

    def rss_kib(self) -> int:
        with open(f"/proc/{self.proc.pid}/status") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        return 0

    def exit_code(self, timeout: float = 30) -> Optional[int]:
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout):
            try:
                stream.close()
            except OSError:
                pass


def position(line: int, character: int) -> dict:
    return {"line": line, "character": character}


def text_document(uri: str) -> dict:
    return {"textDocument": {"uri": uri}}


def position_requests(uri: str, line: int, character: int) -> List[tuple]:
    """(method, params) of every request that takes a position or range, at (line, character)."""
    here = position(line, character)
    rng = {"start": here, "end": here}
    return [
        ("textDocument/hover", dict(text_document(uri), position=here)),
        ("textDocument/codeAction", dict(text_document(uri), range=rng, context={"diagnostics": []})),
    ]


# -- git and a repository's own configuration -----------------------------------------------------------
def hostile_repository(tmp: Path) -> dict:
    """A repository whose local configuration names programs (fsmonitor, a clean filter, a
    textconv, an external diff, an index hook): each one, if run, leaves a marker in ``marks``."""
    repo, marks = tmp / "repo", tmp / "marks"
    repo.mkdir(parents=True)
    marks.mkdir()
    script = tmp / "mark.sh"
    script.write_text(f'#!/bin/sh\ntouch "{marks}/$1"\ncat\n')
    script.chmod(0o755)

    def git(*args):
        subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, timeout=60)

    git("init", "-q")
    git("config", "user.email", "a@b.c")
    git("config", "user.name", "a")
    (repo / "a.py").write_text("import torch\n")
    (repo / ".gitattributes").write_text("*.py filter=evil diff=evil\n")
    git("add", ".")
    git("commit", "-qm", "init")
    git("config", "core.fsmonitor", f"{script} fsmonitor")
    git("config", "filter.evil.clean", f"{script} clean")
    git("config", "filter.evil.smudge", f"{script} smudge")
    git("config", "filter.evil.process", f"{script} process")
    git("config", "diff.evil.textconv", f"{script} textconv")
    git("config", "diff.evil.command", f"{script} diffcommand")
    git("config", "diff.external", f"{script} external")
    git("config", "core.pager", f"{script} pager")
    git("config", "core.sshCommand", f"{script} ssh")
    hooks = repo / ".git" / "hooks"
    hooks.mkdir(exist_ok=True)
    for hook in ("post-index-change", "post-checkout", "pre-commit"):
        (hooks / hook).write_text(f'#!/bin/sh\ntouch "{marks}/hook-{hook}"\n')
        (hooks / hook).chmod(0o755)
    (repo / "a.py").write_text(SOURCE)
    old = time.time() - 3600  # older than git's racy window: the index is refreshed (fsmonitor asked)
    os.utime(repo / "a.py", (old, old))
    return {"repo": repo, "marks": marks}
