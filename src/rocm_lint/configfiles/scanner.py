"""The config-file scanner: shell scripts, Dockerfiles, YAML, .env files and CMake.

These files hold the environment and build settings that reach PyTorch and the compilers
(``PYTORCH_CUDA_ALLOC_CONF``, ``TORCHINDUCTOR_MAX_AUTOTUNE``, arch lists and arch flags).
Each language has a small hand-written reader (no YAML or shell library is needed); together
they give a :class:`ConfigUnit`:

* ``settings``: every name given a value, with offsets into the text —
  shell ``export X=v`` / ``X=v cmd`` / ``env X=v cmd`` / ``declare -x X=v`` / ``docker run -e X=v``;
  Dockerfile ``ENV X=v``, ``ENV X v``, ``ARG X=v`` and the shell of ``RUN``/``CMD``/``ENTRYPOINT``;
  YAML ``env:``/``environment:``/``variables:`` maps and lists and the shell of ``run:``/``script:``;
  ``.env`` lines; CMake ``set(X ...)``, ``set(ENV{X} ...)``, ``list(APPEND X ...)``, target
  properties; and ``-DX=v`` defines anywhere in a command line;
* ``tool_args``: the words of every command that hands arguments to a tool (compilers, build
  tools, CMake commands) — never the words of ``echo``/``printf``/``grep``..., ``message()``, tests,
  comments or here-document bodies;
* where each of them runs: ``gate`` is ``"nvidia"`` for code that never runs on ROCm (an
  NVIDIA-only base image, job, ``if``/``case`` branch, or a file named for CUDA) and ``"rocm"``
  for code that only runs there.

Rules (``@source_checker(*CONFIG_LANGUAGES)`` in the family modules) read the unit; this module
turns their hits into findings and applies ``# rocm-lint: ignore[CODE]`` / ``# noqa: CODE``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Dict, Iterable, Iterator, List, Optional, Sequence, Tuple, Union

from rocm_lint import noqa
from rocm_lint.config import Config
from rocm_lint.finding import FileError, Finding
from rocm_lint.lines import LineIndex
from rocm_lint.rule import SourceChecker, findings_from_hits
from rocm_lint.configfiles.shell import NVIDIA, ROCM, ShellReader, Word, shell_facts

__all__ = ["NVIDIA", "ROCM", "ConfigUnit", "Setting", "ToolArgs", "check_config_source", "read_unit", "truthy"]


@dataclass(frozen=True)
class Setting:
    name: str
    value: str  # quotes removed; expansions kept as written
    start: int  # offset of the name
    value_start: int  # offset of the value in the text
    value_end: int
    how: str  # export, assign, prefix, env, declare, docker-env, build-arg, define, ENV, ARG, yaml,
    #           dotenv, set, set-env, list, property
    computed: bool = False  # holds an expansion ($X, ${X:-v}, $(cmd), ${{ matrix.x }}, ${X} in CMake)
    default: bool = False  # a default the user can override (ARG, CMake CACHE, a branch that tests X)
    gate: Optional[str] = None  # NVIDIA, ROCM or None
    conditions: Tuple[str, ...] = ()  # the tests of the branches around it
    branches: Tuple[Tuple[int, int], ...] = ()  # (if/case id, branch number) around it


@dataclass(frozen=True)
class ToolArgs:
    """The words one command hands to a tool (``nvcc -gencode ...``, ``target_compile_options``)."""

    words: Tuple[Word, ...]
    gate: Optional[str] = None


@dataclass
class ConfigUnit:
    path: str
    text: str
    language: str
    config: Config
    code: str  # the text for matching: CRLF as " \n" (same length, same offsets)
    settings: List[Setting] = field(default_factory=list)
    tool_args: List[ToolArgs] = field(default_factory=list)
    memo: Dict[str, object] = field(default_factory=dict)

    def settings_of(self, names: Iterable[str]) -> List[Setting]:
        names = set(names)
        return [s for s in self.settings if s.name in names]

    def anchor(self, setting: Setting) -> int:
        """Where a finding about ``setting`` starts: its name, or its value when that is on a
        later line (Kubernetes ``- name: X`` / ``value: v``)."""
        if "\n" in self.code[setting.start:setting.value_start]:
            return setting.value_start
        return setting.start

    def never_on_rocm(self, gate: Optional[str]) -> bool:
        return gate == NVIDIA or self.nvidia_only_file

    @property
    def nvidia_only_file(self) -> bool:
        """A file named for NVIDIA (``Dockerfile.cuda``, ``nv-build.yml``, ``build_cu121.sh``,
        ``docker/cuda/Dockerfile``) and not for ROCm."""
        cached = self.memo.get("nvidia_only")
        if cached is None:
            parts = re.split(r"[\\/]", self.path.lower())
            tokens = set(re.split(r"[^a-z0-9]+", " ".join(parts[-2:])))
            cached = bool(tokens & {"cuda", "nvidia", "nv"} or any(re.fullmatch(r"cu1\d{1,2}", t) for t in tokens)) \
                and not (tokens & {"rocm", "hip", "amd"} or "rocm" in parts[-1])
            self.memo["nvidia_only"] = cached
        return cached  # type: ignore[return-value]

    @property
    def ci_config(self) -> bool:
        """A CI definition or a script kept with one (``.github/``, ``.gitlab-ci.yml``, ``.buildkite/``,
        ``.circleci/``, ``.ci/``, ``azure-pipelines.yml``): it builds for the runners' own GPUs."""
        parts = re.split(r"[\\/]", self.path.lower())
        return any(p in (".github", ".gitlab", ".buildkite", ".circleci", ".ci", ".jenkins", ".azure-pipelines")
                   for p in parts[:-1]) or parts[-1].startswith((".gitlab-ci", "azure-pipelines"))

    def matches(self, key: str, pattern: "re.Pattern[str]") -> bool:
        cached = self.memo.get(key)
        if cached is None:
            cached = bool(pattern.search(self.code))
            self.memo[key] = cached
        return cached  # type: ignore[return-value]

    def flag_matches(self, pattern: "re.Pattern[str]") -> Iterator[Tuple[int, int, str, Optional[str]]]:
        """(start, end, flag text, gate) of each match of ``pattern`` in the words handed to a
        tool and in setting values (``NVCC_FLAGS="-gencode ..."``); matches that hold an
        expansion are skipped (computed, not hard-coded)."""
        groups = [(a.words, a.gate) for a in self.tool_args]
        groups += [((Word(s.value_start, s.value_end, s.value, s.computed),), s.gate)
                   for s in self.settings if s.how != "define"]
        for words, gate in groups:
            joined = ""
            starts = []
            for w in words:
                starts.append(len(joined))
                joined += w.value + " "
            for m in pattern.finditer(joined):
                flag = m.group(0).strip()
                if "$" in flag or "@" in flag:
                    continue
                k = max(j for j, s in enumerate(starts) if s <= m.start())
                w = words[k]
                raw = self.code[w.start:w.end]
                at = raw.find(flag)
                if at >= 0:
                    yield w.start + at, w.start + at + len(flag), flag, gate
                else:
                    yield w.start, w.end, flag, gate


def truthy(value: str) -> Optional[bool]:
    """True for 1/true/yes/on, False for 0/false/no/off/empty, None for anything else."""
    v = value.strip().lower()
    if v in ("1", "true", "yes", "on", "y"):
        return True
    if v in ("", "0", "false", "no", "off", "n"):
        return False
    return None


def default_of(setting: Setting) -> Optional[str]:
    """``${NAME:-v}`` / ``${NAME:=v}`` / ``${NAME-v}`` as the whole value: ``v`` (else None)."""
    m = re.fullmatch(r"\$\{" + re.escape(setting.name) + r":?[-=]([^}$`]*)\}", setting.value)
    return m.group(1) if m else None


# -- building the unit -----------------------------------------------------------------------------
class _Builder:
    def __init__(self, code: str) -> None:
        self.code = code
        self.settings: List[Setting] = []
        self.args: List[ToolArgs] = []

    def shell(self, start: int, end: int, gate: Optional[str] = None, text: Optional[str] = None) -> None:
        reader = ShellReader(self.code if text is None else text, start, end, gate)
        facts = shell_facts(reader)
        for s in facts.settings:
            self.settings.append(Setting(s.name, s.value, s.name_start, s.value_start, s.end, s.how, s.computed,
                                         _tests_name(s.name, s.conditions), s.gate, s.conditions, s.branches))
        for cmd, words in facts.args:
            self.args.append(ToolArgs(tuple(words), cmd.gate))

    def alternatives(self) -> None:
        """A literal in one branch of an ``if``/``case`` whose other branch takes the value from
        a variable or an argument (``if [ $# -ge 2 ]; then X=$2; else X=gfx90a; fi``) is a
        fallback: mark it as a default."""
        computed = {}
        for s in self.settings:
            if s.computed:
                for uid, branch in s.branches:
                    computed.setdefault((s.name, uid), set()).add(branch)
        if not computed:
            return
        for k, s in enumerate(self.settings):
            if not s.computed and not s.default and any(
                    computed.get((s.name, uid), set()) - {branch} for uid, branch in s.branches):
                self.settings[k] = replace(s, default=True)

    def defines(self) -> None:
        """``-DNAME=value`` (and ``-D NAME=value``) in command lines and in setting values are
        settings too."""
        found = []
        for a in self.args:
            for k, w in enumerate(a.words):
                found.extend(_defines_in(self.code, w, a.gate, ()))
                if w.value == "-D" and k + 1 < len(a.words):
                    nxt = a.words[k + 1]
                    joined = Word(nxt.start, nxt.end, "-D" + nxt.value, nxt.computed, nxt.quoted)
                    found.extend(_defines_in(self.code, joined, a.gate, ()))
        for s in self.settings:
            if "-D" in s.value:
                w = Word(s.value_start, s.value_end, s.value, s.computed)
                found.extend(_defines_in(self.code, w, s.gate, s.conditions))
        self.settings.extend(found)


_DEFINE = re.compile(r"(?<![^\s;\"'])-D([A-Za-z_][A-Za-z0-9_]*)(?::[A-Za-z]+)?=(\"[^\"]*\"|'[^']*'|[^\s\"']*)")


def _defines_in(code: str, w: Word, gate: Optional[str], conds: Tuple[str, ...]) -> List[Setting]:
    out = []
    raw = code[w.start:w.end]
    for m in _DEFINE.finditer(w.value):
        value = m.group(2).strip("\"'")
        at = raw.find(m.group(1) + "=") if raw.find(m.group(1) + "=") >= 0 else raw.find(m.group(1) + ":")
        start = w.start + at if at >= 0 else w.start
        vat = raw.find(value, at + len(m.group(1))) if at >= 0 and value else -1
        vstart = w.start + vat if vat >= 0 else start
        vend = vstart + len(value) if vat >= 0 else w.end
        out.append(Setting(m.group(1), value, start, vstart, vend, "define",
                           "$" in value or "@" in value, False, gate, conds))
    return out


def _tests_name(name: str, conditions: Tuple[str, ...]) -> bool:
    """Is the setting inside a branch that tests the same variable (``[ -z "$X" ]``,
    ``if(NOT DEFINED X)``)?  Then it is a fallback for when the user set nothing."""
    if not conditions:
        return False
    pat = re.compile(r"(?<![\w$])\$?\{?" + re.escape(name) + r"\b|ENV\{" + re.escape(name) + r"\}")
    return any(pat.search(c) for c in conditions)


# -- Dockerfile ---------------------------------------------------------------------------------------
_INSTRUCTION = re.compile(r"[ \t]*([A-Za-z]+)(?=[ \t\n]|$)")
_HEREDOC = re.compile(r"<<-?[ \t]*([\"']?)([A-Za-z_][\w.-]*)\1")
_RUN_FLAG = re.compile(r"[ \t]*--[a-z-]+=\S*")
_SHELL_COMMAND = re.compile(r"(?:\S*/)?(?:ba|da|z|k|a)?sh(?:\s+-\S+)*")


def is_nvidia_image(image: str) -> bool:
    image = image.lower()
    if "rocm" in image or "amd" in image.split("/")[0]:
        return False
    return image.startswith(("nvidia/", "docker.io/nvidia/")) or "nvcr.io/" in image or "cuda" in image \
        or bool(re.search(r":[^/]*\bcu1\d{1,2}\b", image))


def is_rocm_image(image: str) -> bool:
    return "rocm" in image.lower()


def _instructions(code: str) -> Tuple[str, List[Tuple[int, int, int]]]:
    """(code with the comment lines of continued instructions blanked, [(start, end, last line)]).

    Docker drops comment lines inside a continued instruction; blanking them (newline
    included, offsets kept) lets the instruction read as one command."""
    lines = []
    pos = 0
    for raw in code.split("\n"):
        lines.append((pos, raw))
        pos += len(raw) + 1
    chars = None
    out = []
    k = 0
    while k < len(lines):
        start, raw = lines[k]
        stripped = raw.strip()
        if not stripped or stripped.startswith("#"):
            k += 1
            continue
        last = k
        while lines[last][1].rstrip().endswith("\\") and last + 1 < len(lines):
            nxt = last + 1
            while nxt < len(lines) and lines[nxt][1].strip().startswith("#"):
                if chars is None:
                    chars = list(code)
                s, r = lines[nxt]
                for p in range(s, min(s + len(r) + 1, len(code))):
                    chars[p] = " "
                nxt += 1
            if nxt >= len(lines):
                break
            last = nxt
        out.append((start, lines[last][0] + len(lines[last][1]), last))
        k = last + 1
    return ("".join(chars) if chars is not None else code), out


def _dockerfile(b: _Builder) -> None:
    code, instructions = _instructions(b.code)
    line_starts = [0] + [m.end() for m in re.finditer("\n", code)]
    global_args: Dict[str, str] = {}
    stages: Dict[str, Optional[str]] = {}
    gate: Optional[str] = None
    seen_from = False
    skip_until = -1
    for start, end, last in instructions:
        if start < skip_until:
            continue  # inside a here-document
        m = _INSTRUCTION.match(code, start, end)
        if not m:
            continue
        keyword = m.group(1).upper()
        body = m.end()
        if keyword == "FROM":
            seen_from = True
            words = [w for w in code[body:end].split() if not w.startswith("--")]
            image = _resolve(words[0], global_args) if words else ""
            if image.lower() in stages:
                gate = stages[image.lower()]
            elif is_nvidia_image(image):
                gate = NVIDIA
            elif is_rocm_image(image):
                gate = ROCM
            else:
                gate = None
            if len(words) >= 3 and words[1].lower() == "as":
                stages[words[2].lower()] = gate
        elif keyword in ("ENV", "ARG"):
            for s in _env_pairs(code, body, end, keyword, gate):
                b.settings.append(s)
                if keyword == "ARG" and not seen_from:
                    global_args[s.name] = s.value
        elif keyword in ("RUN", "CMD", "ENTRYPOINT"):
            at = body
            while True:  # RUN --mount=... --network=...
                fm = _RUN_FLAG.match(code, at, end)
                if not fm:
                    break
                at = fm.end()
            if code[at:end].lstrip().startswith("["):
                continue  # exec form: no shell
            heredocs = list(_HEREDOC.finditer(code, at, end))
            b.shell(at, end, gate, text=code)
            # here-documents (`RUN <<EOF` ... `EOF`): their bodies are scripts, or files the step writes
            body_start, line_no = end + 1, last + 1  # bodies follow each other after the line
            for hm in heredocs:
                delim = hm.group(2)
                # the body is the step's script (`RUN <<EOF`, `RUN bash -e <<EOF`), else a file's data
                before = re.split(r"&&|\|\||;|\|", code[at:hm.start()])[-1].strip()
                script = not before or bool(_SHELL_COMMAND.fullmatch(before))
                j = line_no
                while j < len(line_starts):
                    line_end = code.find("\n", line_starts[j])
                    line = code[line_starts[j]:line_end if line_end >= 0 else len(code)]
                    if line.strip() == delim:
                        break
                    j += 1
                body_end = line_starts[j] if j < len(line_starts) else len(code)
                if script and body_start < body_end:
                    b.shell(body_start, body_end, gate, text=code)
                line_no = j + 1
                body_start = line_starts[j + 1] if j + 1 < len(line_starts) else len(code)
                skip_until = body_start


def _resolve(image: str, args: Dict[str, str]) -> str:
    def sub(m: "re.Match[str]") -> str:
        name = m.group(1) or m.group(3)
        return args.get(name, m.group(2) or "")

    return re.sub(r"\$\{([A-Za-z_]\w*)(?::?-([^}]*))?\}|\$([A-Za-z_]\w*)", sub, image)


def _env_pairs(code: str, start: int, end: int, keyword: str, gate: Optional[str]) -> List[Setting]:
    """``ENV A=1 B="x y"`` / ``ENV A x y`` / ``ARG A=1`` / ``ARG A``."""
    reader = ShellReader(code, start, start)  # only its word reader is used
    reader.end = end
    out: List[Setting] = []
    i = start
    words: List[Word] = []
    while i < end:
        c = code[i]
        if c in " \t\n\r":
            i += 1
            continue
        if c == "\\" and i + 1 < end and code[i + 1] in "\n\r":
            i += 2
            continue
        if c == "#" and (i == start or code[i - 1] in " \t"):
            break  # not a comment to Docker, but no setting either
        w = reader.read_word(i)
        if w.end <= i:
            i += 1
            continue
        words.append(w)
        i = w.end
    if not words:
        return out
    if keyword == "ENV" and "=" not in code[words[0].start:words[0].end]:
        # legacy `ENV NAME value with spaces`
        name = words[0].value
        if len(words) > 1 and re.fullmatch(r"[A-Za-z_]\w*", name):
            first, last = words[1], words[-1]
            value = " ".join(w.value for w in words[1:])
            out.append(Setting(name, value, words[0].start, first.start, last.end, "ENV",
                               any(w.computed for w in words[1:]), False, gate))
        return out
    for w in words:
        m = re.match(r"([A-Za-z_][A-Za-z0-9_]*)=", code[w.start:w.end])
        if m:
            value = reader.read_word(w.start + m.end()) if w.start + m.end() < w.end else Word(w.end, w.end, "", False)
            out.append(Setting(m.group(1), value.value, w.start, w.start + m.end(), w.end, keyword, value.computed,
                               keyword == "ARG", gate))
        elif keyword == "ARG" and re.fullmatch(r"[A-Za-z_]\w*", w.value):
            continue  # `ARG NAME`: declared, no value
    return out


# -- .env -------------------------------------------------------------------------------------------
_DOTENV = re.compile(r"^[ \t]*(?:export[ \t]+)?([A-Za-z_][A-Za-z0-9_.]*)[ \t]*=[ \t]*", re.M)


def _dotenv(b: _Builder) -> None:
    code = b.code
    for m in _DOTENV.finditer(code):
        at = m.end()
        line_end = code.find("\n", at)
        line_end = len(code) if line_end < 0 else line_end
        q = code[at] if at < len(code) else ""
        if q in "\"'":
            close = at + 1
            while True:
                close = code.find(q, close)
                if close < 0 or q == "'" or code[close - 1] != "\\":
                    break
                close += 1
            close = line_end if close < 0 else close
            value, vs, ve = code[at + 1:close], at + 1, close
            computed = q == '"' and "$" in value
        else:
            cut = re.search(r"[ \t]#", code[at:line_end])
            value = code[at:at + cut.start() if cut else line_end].rstrip()
            vs, ve = at, at + len(value)
            computed = "$" in value
        how = "export" if code[m.start():m.start(1)].strip() else "dotenv"
        b.settings.append(Setting(m.group(1), value, m.start(1), vs, ve, how, computed))


# -- YAML ---------------------------------------------------------------------------------------------
_YAML_NVIDIA = re.compile(
    r"nvidia\.com/gpu|\b(?:driver|runtime)[ \t]*:[ \t]*[\"']?nvidia|NVIDIA_VISIBLE_DEVICES"
    r"|\b(?:image|container)[ \t]*:[ \t]*[\"']?(\S+)|runs-on[ \t]*:.*\b(?:nvidia|cuda)\b", re.I)
_YAML_ROCM = re.compile(r"rocm|amd\.com/gpu|/dev/kfd|\bgfx\d|\bmi[123]\d\d\b", re.I)


def _yaml_gate(code: str, start: int, end: int) -> Optional[str]:
    part = code[start:end]
    if _YAML_ROCM.search(part):
        return None
    for m in _YAML_NVIDIA.finditer(part):
        if m.group(1) is None or is_nvidia_image(m.group(1).strip("\"'")):
            return NVIDIA
    return None


def _yaml(b: _Builder) -> None:
    from rocm_lint.configfiles.yamlish import read_yaml

    code = b.code
    facts = read_yaml(code)
    docs = [0] + [m.start() for m in re.finditer(r"(?m)^---", code)] + [len(code)]
    regions = [(a, z, _yaml_gate(code, a, z)) for a, z in zip(docs, docs[1:])]
    scopes = [(a, z, _yaml_gate(code, a, z)) for a, z in facts.scopes]

    def gate_at(offset: int) -> Optional[str]:
        for a, z, g in scopes:
            if a <= offset < z:
                return g
        for a, z, g in regions:
            if a <= offset < z:
                return g
        return None

    for e in facts.env:
        computed = "$" in e.value or "{{" in e.value
        b.settings.append(Setting(e.name, e.value, e.name_start, e.value_start, e.value_end, "yaml", computed,
                                  False, gate_at(e.name_start)))
    folded = None
    for start, end, fold in facts.scripts:
        if fold and "\n" in code[start:end]:  # a plain or folded scalar: its lines join with blanks
            if folded is None:
                folded = list(code)
            for p in range(start, end):
                if folded[p] == "\n" and code[p + 1:p + 2] != "\n" and code[p - 1:p] != "\n":
                    folded[p] = " "
    text = "".join(folded) if folded is not None else code
    for start, end, _ in facts.scripts:
        b.shell(start, end, gate_at(start), text=text)


# -- CMake --------------------------------------------------------------------------------------------
# Commands whose arguments never reach a compiler: messages, tests, loops, declarations, probes.
_CMAKE_NOT_FLAGS = frozenset({
    "message", "if", "elseif", "else", "endif", "while", "endwhile", "foreach", "endforeach", "option",
    "function", "endfunction", "macro", "endmacro", "return", "unset", "mark_as_advanced", "include",
    "find_package", "find_program", "find_library", "find_path", "project", "cmake_minimum_required",
    "install", "file", "configure_file", "execute_process", "try_compile", "try_run", "cmake_parse_arguments",
    "check_cxx_compiler_flag", "check_c_compiler_flag", "check_compiler_flag", "check_language",
    "cmake_dependent_option", "get_property", "get_target_property", "get_filename_component",
    "add_test", "set_tests_properties", "math", "separate_arguments", "cmake_policy",
})
_SET_TAIL = {"CACHE", "PARENT_SCOPE"}


def _cmake(b: _Builder) -> None:
    from rocm_lint.configfiles.cmake import read_cmake

    code = b.code
    for cmd in read_cmake(code):
        args = cmd.args
        values = [a.value for a in args]
        if cmd.name == "set" and args:
            name_arg = args[0]
            env = re.fullmatch(r"ENV\{([A-Za-z_]\w*)\}", name_arg.value)
            name = env.group(1) if env else name_arg.value
            body = args[1:]
            cut = next((k for k, a in enumerate(body) if a.value in _SET_TAIL and not a.quoted), len(body))
            tail = [a.value for a in body[cut:]]
            vals = body[:cut]
            default = bool(tail) and tail[0] == "CACHE" and "FORCE" not in tail
            default = default or _tests_name(name, cmd.conditions)
            if vals and re.fullmatch(r"[A-Za-z_]\w*", name):
                b.settings.append(Setting(name, ";".join(a.value for a in vals), name_arg.start, vals[0].start,
                                          vals[-1].end, "set-env" if env else "set",
                                          any(a.computed for a in vals), default, cmd.gate, cmd.conditions,
                                          cmd.branches))
        elif cmd.name == "list" and len(args) >= 3 and values[0] in ("APPEND", "PREPEND", "INSERT"):
            vals = args[3:] if values[0] == "INSERT" else args[2:]
            if vals:
                b.settings.append(Setting(values[1], ";".join(a.value for a in vals), args[1].start, vals[0].start,
                                          vals[-1].end, "list", any(a.computed for a in vals),
                                          _tests_name(values[1], cmd.conditions), cmd.gate, cmd.conditions,
                                          cmd.branches))
        elif cmd.name in ("set_property", "set_target_properties", "set_source_files_properties",
                          "set_directory_properties"):
            _cmake_properties(b, cmd)
        if cmd.name in _CMAKE_NOT_FLAGS:
            continue
        if cmd.name in ("string", "list") and (not values or values[0] not in ("APPEND", "PREPEND", "INSERT",
                                                                                 "CONCAT", "JOIN")):
            continue
        b.args.append(ToolArgs(tuple(Word(a.start, a.end, a.value, a.computed, a.quoted) for a in args), cmd.gate))


def _cmake_properties(b: _Builder, cmd) -> None:
    args = cmd.args
    values = [a.value for a in args]
    if cmd.name == "set_property":
        if "PROPERTY" not in values:
            return
        k = values.index("PROPERTY")
        if k + 1 < len(args):
            vals = args[k + 2:]
            if vals:
                b.settings.append(Setting(values[k + 1], ";".join(a.value for a in vals), args[k + 1].start,
                                          vals[0].start, vals[-1].end, "property", any(a.computed for a in vals),
                                          False, cmd.gate, cmd.conditions))
        return
    if "PROPERTIES" not in values:
        return
    k = values.index("PROPERTIES") + 1
    while k + 1 < len(args):
        name, val = args[k], args[k + 1]
        b.settings.append(Setting(name.value, val.value, name.start, val.start, val.end, "property", val.computed,
                                  False, cmd.gate, cmd.conditions))
        k += 2


# -- entry points ---------------------------------------------------------------------------------------
def matching_copy(text: str) -> str:
    """The text with CRLF line ends as blank + newline (the same length, so offsets found in it
    are offsets into the original).  A backslash-CRLF continuation is kept: the readers join it."""
    if "\r" not in text:
        return text
    return re.sub(r"\r(?!\n)", " ", re.sub(r"(?<!\\)\r\n", " \n", text))


def read_unit(path: str, text: str, config: Config, language: str) -> ConfigUnit:
    code = matching_copy(text)
    b = _Builder(code)
    if language == "shell":
        b.shell(0, len(code))
    elif language == "dockerfile":
        _dockerfile(b)
    elif language == "yaml":
        _yaml(b)
    elif language == "dotenv":
        _dotenv(b)
    elif language == "cmake":
        _cmake(b)
    b.alternatives()
    b.defines()
    return ConfigUnit(path, text, language, config, code, b.settings, b.args)


def check_config_source(path: str, text: str, config: Config, checkers: Sequence[SourceChecker],
                        language: str) -> Union[List[Finding], FileError]:
    """Run ``checkers`` (the enabled rules' checkers of ``language``) on one config file."""
    if not checkers:
        return []
    try:
        unit = read_unit(path, text, config, language)
        seen = set()
        hits = []
        for checker in checkers:
            for hit in checker.fn(unit):
                key = (hit.start, checker.rule.code)
                if key not in seen:
                    seen.add(key)
                    hits.append((checker.rule, hit))
    except RecursionError:
        return FileError(path, "cannot analyse: nesting too deep")
    findings = findings_from_hits(path, hits, LineIndex(text))
    return noqa.filter_comment_findings(findings, text, hash_comments=True)
