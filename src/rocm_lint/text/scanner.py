"""The config-file scanner: shell scripts, Dockerfiles, YAML, .env files and CMake.

These files hold the environment and build settings that reach PyTorch and the compilers
(``PYTORCH_CUDA_ALLOC_CONF``, ``TORCHINDUCTOR_MAX_AUTOTUNE``, arch lists).  They are small, so
the scanner reads them line by line: comments are blanked (a ``#`` that starts a word outside
quotes; never inside ``${#x}``), backslash continuations are joined, and every *setting* —
a name given a value — is extracted with its offsets:

* shell, .env, Dockerfile ``RUN``: ``export X=v``, ``X=v cmd``, ``env X=v``, ``declare -x X=v``;
* Dockerfile: ``ENV X=v Y=w``, legacy ``ENV X v``, ``ARG X=v``;
* YAML: ``X: v`` env maps (GitHub Actions, docker-compose), ``- X=v`` lists (docker-compose),
  Kubernetes ``- name: X`` / ``value: v`` pairs, and shell lines in ``run:`` blocks;
* CMake: ``set(X v ...)``, ``set(ENV{X} v)``, ``list(APPEND X v)``.

Rules (``@source_checker(*CONFIG_LANGUAGES)`` in the family modules) read ``unit.settings``
and ``unit.code``; the scanner converts their hits and applies ``# rocm-lint: ignore[...]`` /
``# noqa: CODE`` comments.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Dict, FrozenSet, List, Optional, Tuple, Union

from rocm_lint import noqa
from rocm_lint.config import Config
from rocm_lint.engine import LineIndex, findings_from_hits
from rocm_lint.finding import FileError, Finding
from rocm_lint.registry import source_checkers


@dataclass(frozen=True)
class Setting:
    name: str
    value: str  # unquoted
    start: int  # offset of the name
    value_start: int
    value_end: int
    how: str = ""  # export, env, ENV, ARG, yaml, set, CACHE (an overridable CMake default) ...


@dataclass
class ConfigUnit:
    path: str
    text: str
    language: str
    config: Config
    code: str  # comments blanked, same length as text
    settings: List[Setting] = field(default_factory=list)
    memo: Dict[str, object] = field(default_factory=dict)

    def anchor(self, setting: "Setting") -> int:
        """Where a finding about ``setting`` starts: its name, or its value when the two are on
        different lines (Kubernetes ``- name: X`` / ``value: v``)."""
        return setting.start if "\n" not in self.text[setting.start:setting.value_start] else setting.value_start

    def settings_of(self, names) -> List[Setting]:
        return [s for s in self.settings if s.name in names]

    def line_text(self, offset: int) -> str:
        start = self.code.rfind("\n", 0, offset) + 1
        end = self.code.find("\n", offset)
        return self.code[start:end if end != -1 else len(self.code)]


# -- comments --------------------------------------------------------------------------------------
def blank_comments(text: str, language: str) -> str:
    """``text`` with ``#`` comments replaced by spaces (quotes respected; CMake ``#[[...]]``)."""
    out = []
    for line in text.split("\n"):
        out.append(_blank_line(line, language))
    return "\n".join(out)


def _blank_line(line: str, language: str) -> str:
    quote = None
    i = 0
    n = len(line)
    while i < n:
        c = line[i]
        if quote:
            if c == "\\" and quote == '"':
                i += 2
                continue
            if c == quote:
                quote = None
        elif c in ("'", '"') and not (language == "yaml" and c == "'" and i > 0 and line[i - 1].isalnum()):
            quote = c
        elif c == "#":
            prev = line[i - 1] if i else " "
            if language == "cmake" or prev in " \t;|&(" or i == 0:
                if not (prev == "{" or (i + 1 < n and line[i + 1] == "{" and language != "cmake")):
                    return line[:i] + " " * (n - i)
        i += 1
    return line


# -- settings ----------------------------------------------------------------------------------------
_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
_VALUE = r"(\"(?:[^\"\\]|\\.)*\"|'[^']*'|[^\s;&|)]*)"
_SHELL_ASSIGN = re.compile(r"(?:^|(?<=[\s;&|(`]))(?:(export|declare\s+-x|env|local|readonly)\s+)?(" + _NAME + r")=" + _VALUE, re.M)
_DOCKER_ENV = re.compile(r"^[ \t]*(ENV|ARG)[ \t]+(.*)$", re.M | re.I)
_YAML_PAIR = re.compile(r"^[ \t]*(?:-[ \t]+)?(" + _NAME + r")[ \t]*:[ \t]*(\"[^\"\n]*\"|'[^'\n]*'|[^\n#]*?)[ \t]*$", re.M)
_K8S_NAME = re.compile(r"^([ \t]*)-?[ \t]*name[ \t]*:[ \t]*[\"']?(" + _NAME + r")[\"']?[ \t]*$", re.M)
_K8S_VALUE = re.compile(r"^[ \t]*value[ \t]*:[ \t]*(\"[^\"\n]*\"|'[^'\n]*'|[^\n#]*?)[ \t]*$", re.M)
_CMAKE_SET = re.compile(r"\b(set|list\s*\(\s*APPEND)\s*\(\s*(?:ENV\{(" + _NAME + r")\}|(" + _NAME + r"))\s+([^)]*)\)", re.I)
_CMAKE_LIST_APPEND = re.compile(r"\blist\s*\(\s*APPEND\s+(" + _NAME + r")\s+([^)]*)\)", re.I)


def _unquote(value: str) -> Tuple[str, int]:
    """(value without quotes, offset of its first character within ``value``)."""
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return value[1:-1], 1
    return value, 0


def _joined(code: str) -> str:
    """Backslash-newline continuations become two spaces (offsets kept)."""
    return code.replace("\\\r\n", "   ").replace("\\\n", "  ")


def _shell_settings(code: str, how_default: str = "") -> List[Setting]:
    out = []
    for m in _SHELL_ASSIGN.finditer(code):
        raw = m.group(3)
        value, skip = _unquote(raw)
        out.append(Setting(m.group(2), value, m.start(2), m.start(3) + skip, m.start(3) + skip + len(value),
                           (m.group(1) or how_default or "assign").split()[0]))
    return out


def _docker_settings(code: str) -> List[Setting]:
    out = []
    for m in _DOCKER_ENV.finditer(code):
        kind, body, base = m.group(1).upper(), m.group(2), m.start(2)
        pairs = list(re.finditer(r"(" + _NAME + r")=(\"(?:[^\"\\]|\\.)*\"|'[^']*'|\S*)", body))
        if pairs:
            for p in pairs:
                value, skip = _unquote(p.group(2))
                out.append(Setting(p.group(1), value, base + p.start(1), base + p.start(2) + skip,
                                   base + p.start(2) + skip + len(value), kind))
        elif kind == "ENV":  # legacy `ENV NAME value with spaces`
            legacy = re.match(r"(" + _NAME + r")\s+(.+?)\s*$", body)
            if legacy:
                value, skip = _unquote(legacy.group(2))
                out.append(Setting(legacy.group(1), value, base + legacy.start(1), base + legacy.start(2) + skip,
                                   base + legacy.start(2) + skip + len(value), kind))
    return out


def _yaml_settings(code: str) -> List[Setting]:
    out = []
    for m in _YAML_PAIR.finditer(code):
        value, skip = _unquote(m.group(2))
        out.append(Setting(m.group(1), value, m.start(1), m.start(2) + skip, m.start(2) + skip + len(value), "yaml"))
    for m in _K8S_NAME.finditer(code):
        nxt = _K8S_VALUE.match(code, m.end() + 1) if m.end() < len(code) else None
        if nxt:
            value, skip = _unquote(nxt.group(1))
            out.append(Setting(m.group(2), value, m.start(2), nxt.start(1) + skip,
                               nxt.start(1) + skip + len(value), "yaml"))
    # docker-compose `- X=v` lists and `run:` scripts: shell assignments
    out.extend(s for s in _shell_settings(code) if s.how != "local")
    return out


def _cmake_settings(code: str) -> List[Setting]:
    out = []
    for m in _CMAKE_SET.finditer(code):
        name = m.group(2) or m.group(3)
        args = m.group(4)
        how = "set"
        if re.search(r"\bCACHE\b", args):
            how = "CACHE"  # a default the user overrides with -D
            args = args[:re.search(r"\bCACHE\b", args).start()]
        value, skip = _unquote(args.strip())
        start = m.start(4) + (len(m.group(4)) - len(m.group(4).lstrip())) + skip
        out.append(Setting(name, value, m.start(2) if m.group(2) else m.start(3), start, start + len(value), how))
    return out


def extract_settings(code: str, language: str) -> List[Setting]:
    code = _joined(code)
    if language in ("shell", "dotenv"):
        return _shell_settings(code)
    if language == "dockerfile":
        # shell assignments count only in RUN instructions (ENV/ARG have their own syntax)
        runs = re.sub(r"(?m)^(?![ \t]*RUN\b).*$", lambda m: " " * len(m.group(0)), code)
        return _docker_settings(code) + _shell_settings(runs)
    if language == "yaml":
        return _yaml_settings(code)
    if language == "cmake":
        return _cmake_settings(code)
    return []


def check_config_source(path: str, text: str, config: Config, codes: FrozenSet[str],
                        language: str) -> Union[List[Finding], FileError]:
    checkers = source_checkers(language, codes)
    if not checkers:
        return []
    code = blank_comments(text, language).replace("\r", " ")  # CRLF files: same offsets
    unit = ConfigUnit(path, text, language, config, code, extract_settings(code, language))
    hits = [h for c in checkers for h in c.fn(unit) if h.code in codes]
    findings = findings_from_hits(path, hits, LineIndex(text))
    return noqa.filter_comment_findings(findings, text, hash_comments=True)


def is_literal(value: str) -> bool:
    """A value written out, not computed (``$VAR``, ``${X:-d}``, ``$(cmd)``, ``${{ matrix.x }}``)."""
    return "$" not in value and "{{" not in value and "`" not in value


def overridable_default(unit: ConfigUnit, setting: Setting) -> bool:
    """A default the user can override: CMake ``CACHE`` sets, sets under
    ``if(NOT DEFINED X)``/``if(NOT X)``, Dockerfile ``ARG``."""
    if setting.how in ("CACHE", "ARG"):
        return True
    if unit.language == "cmake":
        # the innermost if()/elseif() before the set: does it test that the variable is unset?
        before = unit.code[:setting.start]
        branches = list(re.finditer(r"\b(?:else)?if\s*\(([^)]*)\)", before, re.I))
        if branches and not re.search(r"\b(?:endif|else)\s*\(", before[branches[-1].end():], re.I):
            condition = branches[-1].group(1)
            if re.search(r"\bNOT\s+(?:DEFINED\s+)?(?:ENV\{)?" + re.escape(setting.name) + r"\b", condition, re.I):
                return True
    return False


_NVIDIA_IMAGE = re.compile(r"^[ \t]*FROM[ \t]+(?:--\S+[ \t]+)*(\S+)", re.M | re.I)


def nvidia_only_file(unit: ConfigUnit) -> bool:
    """A file that only ever runs on NVIDIA: a Dockerfile whose every base image is NVIDIA's
    (``nvidia/cuda``, ``nvcr.io/...``), or one named for CUDA (``Dockerfile.cuda``)."""
    cached = unit.memo.get("nvidia_only")
    if cached is None:
        name = re.split(r"[\\/]", unit.path)[-1].lower()
        cached = bool(re.search(r"(?:^|[._-])(?:cuda|nvidia|nv)(?:[._-]|$)", name)) and "rocm" not in name
        if unit.language == "dockerfile" and not cached:
            images = [m.group(1).lower() for m in _NVIDIA_IMAGE.finditer(unit.code)]
            stages = {m.group(0).split()[-1].lower() for m in re.finditer(r"\bAS\s+\S+", unit.code, re.I)}
            bases = [i for i in images if i not in stages]
            cached = bool(bases) and all(i.startswith(("nvidia/", "nvcr.io/")) for i in bases)
        unit.memo["nvidia_only"] = cached
    return cached  # type: ignore[return-value]


def truthy(value: str) -> Optional[bool]:
    v = value.strip().lower()
    if v in ("1", "true", "yes", "on"):
        return True
    if v in ("", "0", "false", "no", "off"):
        return False
    return None
