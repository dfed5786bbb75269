"""Dependency manifests: what pip (or uv, Poetry, PDM, conda) is asked to install, and from where.

:class:`Requirement` and :class:`IndexUse` records with offsets (``rules/dependencies.py`` decides
what is a hazard) from: requirements files (requirement lines, ``-r``/``-c`` includes, ``-i``/
``--index-url``/``--extra-index-url``/``-f``/``--find-links``, also after a requirement on its line);
``pyproject.toml`` (``configfiles/pyproject.py``); ``setup.cfg`` (``install_requires``,
``setup_requires``, ``[options.extras_require]``); the ``- pip:`` section of a conda environment
(YAML with a top-level ``dependencies:``); ``pip``/``pip3``/``python -m pip``/``uv pip`` ``install``
commands of scripts, Dockerfile ``RUN`` and YAML ``run:``/``script:`` (the shell reader's commands,
with their branch's gate), ``pip config set global.index-url`` and ``PIP_INDEX_URL``/``UV_INDEX``...
settings.  A requirement's ``section`` is its extra or group (``""``: always installed).
``setup.py`` literals are read by the rules' Python checker (``ast``)."""

from __future__ import annotations

import os
import re
from dataclasses import replace
from typing import List, Optional, Tuple

from rocm_lint.configfiles.shell import NVIDIA, Word
from rocm_lint.configfiles.unit import ConfigUnit, IndexUse, Manifest, Requirement


# -- which files ------------------------------------------------------------------------------------
def manifest_kind(path: str) -> Optional[str]:
    """``requirements``, ``pyproject``, ``setup.cfg`` for the manifest files discovery hands over."""
    name = os.path.basename(path).lower()
    if name == "pyproject.toml":
        return "pyproject"
    if name == "setup.cfg":
        return "setup.cfg"
    return "requirements"


_CONDA_ENV = re.compile(r"(?m)^dependencies[ \t]*:[ \t]*(?:#.*)?$")
_CONDA_PIP = re.compile(r"(?m)^([ \t]*)-[ \t]+pip[ \t]*:[ \t]*(?:#.*)?$")


def read_manifest(unit: ConfigUnit) -> Manifest:
    """The unit's dependencies (once per unit)."""
    cached = unit.memo.get("manifest")
    if cached is None:
        cached = unit.memo["manifest"] = _read(unit)
    return cached  # type: ignore[return-value]


def _read(unit: ConfigUnit) -> Manifest:
    m = Manifest()
    if unit.language == "manifest":
        kind = manifest_kind(unit.path)
        if kind == "pyproject":
            from rocm_lint.configfiles.pyproject import read_pyproject

            return read_pyproject(unit.code)
        if kind == "setup.cfg":
            _read_setup_cfg(unit.code, m)
        else:
            _read_requirements(unit.code, 0, len(unit.code), m)
        return _with_indexes(m, 0)
    if unit.language == "yaml" and _CONDA_ENV.search(unit.code):
        _read_conda_pip(unit.code, m)
        _with_indexes(m, 0)
    for cmd in unit.commands:
        before = len(m.requirements), len(m.indexes)
        # `if [[ $CUDA_VERSION == cu13* ]]; then ... else ... fi`: both arms pick between CUDA releases
        gate = NVIDIA if any(_CUDA_RELEASE_TEST.search(c) for c in cmd.conditions) else cmd.gate
        _read_command(cmd.words, gate, m)
        _with_indexes(m, *before)
    for s in unit.settings:
        if s.name in _INDEX_SETTINGS and s.value and not s.computed:
            for url in s.value.split():
                at = unit.code.find(url, s.value_start, max(s.value_end, s.value_start + len(url)))
                a = at if at >= 0 else s.value_start
                m.indexes.append(
                    IndexUse(url, a, a + len(url) if at >= 0 else s.value_end, s.gate, "setting")
                )
    return m


_CUDA_RELEASE_TEST = re.compile(r"\bcu1\d{1,2}\b|\bCUDA_VERSION\w*|\bCUDA_MAJOR\w*", re.I)
_INDEX_SETTINGS = frozenset(
    {
        "PIP_INDEX_URL",
        "PIP_EXTRA_INDEX_URL",
        "PIP_FIND_LINKS",
        "UV_INDEX_URL",
        "UV_EXTRA_INDEX_URL",
        "UV_INDEX",
        "UV_DEFAULT_INDEX",
        "UV_FIND_LINKS",
    }
)


def _with_indexes(m: Manifest, first: int, first_index: int = 0) -> Manifest:
    """Give the requirements from ``first`` on the index URLs read from ``first_index`` on."""
    urls = tuple(i.url for i in m.indexes[first_index:])
    if urls:
        m.requirements[first:] = [replace(r, indexes=r.indexes + urls) for r in m.requirements[first:]]
    return m


# -- requirements files -----------------------------------------------------------------------------
_INDEX_OPTIONS = {
    "-i": "index-url",
    "--index-url": "index-url",
    "--extra-index-url": "extra-index-url",
    "-f": "find-links",
    "--find-links": "find-links",
    "--index": "index-url",
    "--default-index": "index-url",
}
_INCLUDE_OPTIONS = frozenset({"-r", "--requirement", "-c", "--constraint", "--requirements", "--constraints"})
# requirements-file options that take a value (the value is not a requirement)
_VALUE_OPTIONS = frozenset(
    {
        "-e",
        "--editable",
        "--no-binary",
        "--only-binary",
        "--trusted-host",
        "--use-feature",
        "--hash",
        "--global-option",
        "--config-settings",
        "-C",
        "--install-option",
        "--progress-bar",
        "--upgrade-strategy",
        "-t",
        "--target",
        "--prefix",
        "--root",
        "--platform",
        "--python-version",
        "--implementation",
        "--abi",
        "--src",
        "--log",
        "--cache-dir",
        "--proxy",
        "--retries",
        "--timeout",
        "--exists-action",
        "--python",
        "-p",
        "--extra",
        "--group",
        "--report",
        "--index-strategy",
        "--keyring-provider",
        "--resolution",
        "--prerelease",
        "--exclude-newer",
        "--link-mode",
        "-P",
        "--upgrade-package",
        "--no-build-isolation-package",
        "--override",
        "--excludes",
        "--torch-backend",
    }
)
_WORD = re.compile(r"\S+")


def _read_requirements(
    code: str, start: int, end: int, m: Manifest, gate: Optional[str] = None, section: str = ""
) -> None:
    pos = start
    while pos < end:
        nl = code.find("\n", pos, end)
        line_end = end if nl < 0 else nl
        _requirements_line(code, pos, line_end, m, gate, section)
        pos = line_end + 1


def _requirements_line(code: str, a: int, b: int, m: Manifest, gate: Optional[str], section: str) -> None:
    line = code[a:b]
    hash_at = re.search(r"(?:^|[ \t])#", line)
    if hash_at:
        line = line[: hash_at.start()]
    if line.rstrip().endswith("\\"):
        line = line.rstrip()[:-1]
    words = [(w.group(0), a + w.start()) for w in _WORD.finditer(line)]
    _read_words(words, m, gate, section, requirements_file=True)


def _read_words(
    words: List[Tuple[str, int]],
    m: Manifest,
    gate: Optional[str],
    section: str,
    requirements_file: bool = False,
    computed: Tuple[bool, ...] = (),
) -> None:
    """Options and requirements of a requirements-file line or of ``pip install``'s arguments:
    (word, offset) pairs."""
    k = 0
    pending: List[Tuple[str, int, int]] = []  # a requirement line's words up to its first option
    in_requirement = requirements_file
    while k < len(words):
        w, at = words[k]
        is_computed = bool(computed and computed[k])
        if w.startswith("-") and not is_computed:
            in_requirement = False
            name, eq, value = w.partition("=")
            if len(w) > 2 and w[1] in "ifrce" and not eq:
                name, eq, value = w[:2], "=", w[2:]  # -ihttps://... / -rfile.txt
                v_at = at + 2
            if name in _INDEX_OPTIONS or name in _INCLUDE_OPTIONS or name in _VALUE_OPTIONS:
                if eq:
                    v_at = at + len(w) - len(value)
                elif k + 1 < len(words):
                    k += 1
                    value, v_at = words[k]
                    if computed and computed[k]:
                        k += 1
                        continue
                else:
                    break
                if name in _INDEX_OPTIONS:
                    m.indexes.append(
                        IndexUse(value, v_at, v_at + len(value), gate, _INDEX_OPTIONS[name], section)
                    )
                elif name in _INCLUDE_OPTIONS:
                    m.includes.append(value)
            k += 1
            continue
        if requirements_file and in_requirement:
            pending.append((w, at, at + len(w)))
        elif not requirements_file:
            m.requirements.append(Requirement(w, at, at + len(w), gate, section, is_computed))
        k += 1
    if pending:
        text = " ".join(p[0] for p in pending)
        m.requirements.append(Requirement(text, pending[0][1], pending[-1][2], gate, section))


# -- setup.cfg --------------------------------------------------------------------------------------
_CFG_SECTION = re.compile(r"[ \t]*\[([^\]\n]+)\][ \t]*$")
_CFG_KEY = re.compile(r"([A-Za-z0-9_.-]+)[ \t]*[=:][ \t]*(.*)$")


def _read_setup_cfg(code: str, m: Manifest) -> None:
    section, key = "", None
    pos = 0
    for line in code.split("\n"):
        a, pos = pos, pos + len(line) + 1
        stripped = line.strip()
        if not stripped or stripped[0] in "#;":
            continue
        head = _CFG_SECTION.match(line)
        if head:
            section, key = head.group(1).strip().lower(), None
            continue
        if line[0] in " \t":
            if key is not None:
                _cfg_value(line, a, m, key)
            continue
        kv = _CFG_KEY.match(line)
        key = None
        if kv is None:
            continue
        name = kv.group(1).lower().replace("-", "_")
        if section == "options" and name in ("install_requires", "setup_requires", "tests_require"):
            key = ""
        elif section == "options.extras_require":
            key = kv.group(1)
        elif section == "options" and name == "dependency_links":
            key = "\0links"
        if key is not None and kv.group(2).strip():
            _cfg_value(line, a, m, key, a + kv.start(2))


def _cfg_value(line: str, a: int, m: Manifest, key: str, at: Optional[int] = None) -> None:
    start = at if at is not None else a + len(line) - len(line.lstrip())
    text = line[start - a :]
    cut = re.search(r"(?:^|[ \t])[#;]", text)
    if cut:
        text = text[: cut.start()]
    for part in re.finditer(r"[^,]+" if key == "\0links" else r".+", text):
        item = part.group(0).strip()
        if not item:
            continue
        s = start + part.start() + part.group(0).find(item)
        if key == "\0links":
            m.indexes.append(IndexUse(item, s, s + len(item), None, "find-links"))
        else:
            m.requirements.append(Requirement(item, s, s + len(item), None, key))


# -- conda environment files ------------------------------------------------------------------------
def _read_conda_pip(code: str, m: Manifest) -> None:
    for head in _CONDA_PIP.finditer(code):
        indent = len(head.group(1).expandtabs())
        pos = head.end() + 1
        while pos < len(code):
            nl = code.find("\n", pos)
            line_end = len(code) if nl < 0 else nl
            line = code[pos:line_end]
            body = line.strip()
            if body and not body.startswith("#"):
                if len(line) - len(line.lstrip()) <= indent or not body.startswith("- "):
                    break
                item = body[2:].strip()
                item_at = pos + line.find(body) + 2 + (len(body[2:]) - len(body[2:].lstrip()))
                if item[:1] in "\"'" and item.find(item[0], 1) > 0:  # a quoted scalar, then maybe a comment
                    item, item_at = item[1 : item.find(item[0], 1)], item_at + 1
                shifted = Manifest()
                _requirements_line(item, 0, len(item), shifted, None, "")
                _shift(shifted, item_at, m)
            pos = line_end + 1


def _shift(part: Manifest, by: int, into: Manifest) -> None:
    for r in part.requirements:
        into.requirements.append(Requirement(r.text, r.start + by, r.end + by, r.gate, r.section, r.computed))
    for i in part.indexes:
        into.indexes.append(
            IndexUse(i.url, i.start + by, i.end + by, i.gate, i.how, i.section, i.used, i.marker)
        )
    into.includes.extend(part.includes)


# -- pip commands ----------------------------------------------------------------------------------
_PIP = re.compile(r"pip(?:3(?:\.\d+)?)?$")
_PYTHON = re.compile(r"python(?:\d(?:\.\d+)?)?$")
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
_SKIP_HEADS = frozenset({"sudo", "env", "time", "nohup", "exec", "command", "eatmydata"})


def _read_command(words: List[Word], gate: Optional[str], m: Manifest) -> None:
    """``[sudo] [env X=1] (pip|pip3|python -m pip|uv pip) [global options] install ARGS``."""
    k = 0
    n = len(words)
    while k < n and (
        _ASSIGNMENT.match(words[k].value)
        or words[k].value in _SKIP_HEADS
        or (k and words[k - 1].value in ("sudo", "env") and words[k].value.startswith("-"))
    ):
        k += 1
    if k >= n or words[k].computed:
        return
    head = words[k].value.replace("\\", "/").rsplit("/", 1)[-1]
    if _PYTHON.match(head):
        while k + 1 < n and words[k + 1].value.startswith("-") and words[k + 1].value != "-m":
            k += 1
        if k + 2 < n and words[k + 1].value == "-m" and _PIP.match(words[k + 2].value):
            k += 2
        else:
            return
    elif head == "uv" and k + 1 < n and words[k + 1].value == "pip":
        k += 1
    elif not _PIP.match(head):
        return
    k += 1
    while k < n and words[k].value.startswith("-") and words[k].value not in ("install",):
        k += 1  # pip's global options (`pip -q install`, `pip --no-cache-dir install`)
    if k < n and words[k].value == "config" and k + 3 < n and words[k + 1].value == "set":
        key, url = words[k + 2], words[k + 3]
        if key.value.endswith(("index-url", "find-links")) and not url.computed:
            m.indexes.append(IndexUse(url.value, url.start, url.end, gate, "setting"))
        return
    if k >= n or words[k].value != "install":
        return
    rest = words[k + 1 :]
    _read_words([(w.value, w.start) for w in rest], m, gate, "", computed=tuple(w.computed for w in rest))


__all__ = ["IndexUse", "Manifest", "NVIDIA", "Requirement", "manifest_kind", "read_manifest"]
