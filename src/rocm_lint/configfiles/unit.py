"""What the config-file readers produce: :class:`ConfigUnit`, the settings and tool arguments of
one shell script, Dockerfile, YAML, .env or CMake file, with where each of them runs."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Dict, Iterable, Iterator, List, Optional, Tuple

from rocm_lint.config import Config
from rocm_lint.lines import LineIndex
from rocm_lint.configfiles.shell import NVIDIA, Command, ShellReader, Word
from rocm_lint.configfiles.shell_facts import shell_facts
from rocm_lint.workspace import Workspace


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
    conditions: Tuple[str, ...] = ()  # the tests of the shell branches around the command
    exec_form: bool = False  # a Dockerfile/YAML exec-form list (`CMD ["prog", "arg"]`): no shell


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
    # the platform the project's build gives the file's directory (``rocm_lint.build.context``:
    # "cuda" in a CMake subproject a ROCm build never enters), for CMake files; else None
    build_platform: Optional[str] = None
    # every simple command of the file's shell (scripts, RUN, run:/script:), TEXT_COMMANDS included:
    # the dependency rules read `pip install ...` here (``configfiles/manifests.py``)
    commands: List[Command] = field(default_factory=list)
    # the front end's caches (``rocm_lint.workspace``): build files, requirement includes, listings
    workspace: Workspace = field(default_factory=Workspace)

    # what the engine's one loop reads of a unit (rocm_lint.engine.unit_findings; CppUnit likewise)
    scope = None  # every config file is reported as it is
    keeps_fixes = True
    no_fix_reason = ""
    line_break = "\n"
    comment_style = "#"  # what a suppression comment starts with (rocm_lint.noqa)
    unique_hits = True  # one hit per offset and rule (two readers may see one setting)

    @property
    def index(self) -> LineIndex:
        cached = self.memo.get("line_index")
        if cached is None:
            cached = self.memo["line_index"] = LineIndex(self.text)
        return cached  # type: ignore[return-value]

    def drops(self, offset: int) -> bool:
        """Config readers gate settings themselves (``Setting.gate``): no hit is dropped here."""
        return False

    def settings_of(self, names: Iterable[str]) -> List[Setting]:
        names = set(names)
        return [s for s in self.settings if s.name in names]

    def anchor(self, setting: Setting) -> int:
        """Where a finding about ``setting`` starts: its name, or its value when that is on a
        later line (Kubernetes ``- name: X`` / ``value: v``)."""
        if "\n" in self.code[setting.start : setting.value_start]:
            return setting.value_start
        return setting.start

    def never_on_rocm(self, gate: Optional[str]) -> bool:
        return gate == NVIDIA or self.nvidia_only_file

    @property
    def nvidia_only_file(self) -> bool:
        """A file named for NVIDIA (``Dockerfile.cuda``, ``nv-build.yml``, ``build_cu121.sh``,
        ``docker/cuda/Dockerfile``) and not for ROCm, or a CMake file of a directory the ROCm build
        never enters (``build_platform``)."""
        cached = self.memo.get("nvidia_only")
        if cached is None and self.build_platform == "cuda":
            cached = self.memo["nvidia_only"] = True
        if cached is None:
            parts = re.split(r"[\\/]", self.path.lower())
            tokens = set(re.split(r"[^a-z0-9]+", " ".join(parts[-2:])))
            cached = bool(
                tokens & {"cuda", "nvidia", "nv"} or any(re.fullmatch(r"cu1\d{1,2}", t) for t in tokens)
            ) and not (tokens & {"rocm", "hip", "amd"} or "rocm" in parts[-1])
            self.memo["nvidia_only"] = cached
        return cached  # type: ignore[return-value]

    @property
    def ci_config(self) -> bool:
        """A CI definition or a script kept with one (``.github/``, ``.gitlab-ci.yml``, ``.buildkite/``,
        ``.circleci/``, ``.ci/``, ``azure-pipelines.yml``): it builds for the runners' own GPUs."""
        parts = re.split(r"[\\/]", self.path.lower())
        return any(
            p in (".github", ".gitlab", ".buildkite", ".circleci", ".ci", ".jenkins", ".azure-pipelines")
            for p in parts[:-1]
        ) or parts[-1].startswith((".gitlab-ci", "azure-pipelines"))

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
        groups += [
            ((Word(s.value_start, s.value_end, s.value, s.computed),), s.gate)
            for s in self.settings
            if s.how != "define"
        ]
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
                raw = self.code[w.start : w.end]
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


# -- dependency manifests (configfiles/manifests.py reads them) ------------------------------------
@dataclass(frozen=True)
class Requirement:
    text: str  # as pip reads it: PEP 508 (``torch==2.4.0; sys_platform == "linux"``), a URL or a wheel path
    start: int  # offsets of the requirement in the file's text
    end: int
    gate: Optional[str] = None  # NVIDIA when only NVIDIA installs reach it (a branch, a stage, a job)
    section: str = ""  # the extra / dependency group it belongs to; "" = always installed
    computed: bool = False  # holds an expansion ($VAR, ${{ matrix.x }}): not what is installed
    indexes: Tuple[str, ...] = ()  # the index URLs given with it (its `pip install` command, its file)


@dataclass(frozen=True)
class IndexUse:
    url: str
    start: int
    end: int
    gate: Optional[str] = None
    how: str = ""  # index-url, extra-index-url, find-links, uv-index, poetry-source, pdm-source, setting
    section: str = ""
    used: bool = True  # False: an explicit index that no source entry takes packages from
    marker: str = ""  # the environment marker of the source entry that uses it (uv, Poetry)


@dataclass
class Manifest:
    requirements: List[Requirement] = field(default_factory=list)
    indexes: List[IndexUse] = field(default_factory=list)
    includes: List[str] = field(default_factory=list)  # -r / -c files, as written


# -- building the unit -----------------------------------------------------------------------------
class UnitBuilder:
    def __init__(self, code: str, bom: bool = False) -> None:
        self.code = code
        self.bom = bom  # the text starts with a byte order mark (a blank in ``code``)
        self.settings: List[Setting] = []
        self.args: List[ToolArgs] = []
        self.commands: List[Command] = []

    def shell(self, start: int, end: int, gate: Optional[str] = None, text: Optional[str] = None) -> None:
        reader = ShellReader(self.code if text is None else text, start, end, gate)
        facts = shell_facts(reader)
        self.commands.extend(reader.commands)
        for s in facts.settings:
            self.settings.append(
                Setting(
                    s.name,
                    s.value,
                    s.name_start,
                    s.value_start,
                    s.end,
                    s.how,
                    s.computed,
                    tests_name(s.name, s.conditions),
                    s.gate,
                    s.conditions,
                    s.branches,
                )
            )
        for cmd, words in facts.args:
            self.args.append(ToolArgs(tuple(words), cmd.gate, cmd.conditions))

    def exec_form(self, start: int, end: int, gate: Optional[str] = None) -> None:
        """An exec-form list on one line (Dockerfile ``CMD ["nsys", "profile", "python"]``, YAML
        ``command: ["nsys", ...]``): its items are the words of one command, run with no shell."""
        line_end = self.code.find("\n", start, end)
        open_, close = (
            self.code.find("[", start, end),
            self.code.rfind("]", start, end if line_end < 0 else line_end),
        )
        if open_ < 0 or close < open_:
            return
        words = []
        for m in _EXEC_ITEM.finditer(self.code, open_ + 1, close):
            item = m.group(0)
            if item[0] in "\"'":
                value = item[1:-1].replace('\\"', '"') if item[0] == '"' else item[1:-1]
                words.append(Word(m.start() + 1, m.end() - 1, value, False, True))
            else:
                words.append(Word(m.start(), m.end(), item, False, False))
        if words:
            self.args.append(ToolArgs(tuple(words), gate, (), True))

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
            if (
                not s.computed
                and not s.default
                and any(computed.get((s.name, uid), set()) - {branch} for uid, branch in s.branches)
            ):
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


# One item of a one-line flow list: a quoted string or a plain scalar (blanks inside it allowed).
_EXEC_ITEM = re.compile(r"\"(?:[^\"\\\n]|\\.)*\"|'[^'\n]*'|[^,\s\[\]\"']+(?:[ \t]+[^,\s\[\]\"']+)*")
_DEFINE = re.compile(
    r"(?<![^\s;\"'])-D([A-Za-z_][A-Za-z0-9_]*)(?::[A-Za-z]+)?=(\"[^\"]*\"|'[^']*'|[^\s\"']*)"
)


def _defines_in(code: str, w: Word, gate: Optional[str], conds: Tuple[str, ...]) -> List[Setting]:
    out = []
    raw = code[w.start : w.end]
    for m in _DEFINE.finditer(w.value):
        value = m.group(2).strip("\"'")
        at = raw.find(m.group(1) + "=") if raw.find(m.group(1) + "=") >= 0 else raw.find(m.group(1) + ":")
        start = w.start + at if at >= 0 else w.start
        vat = raw.find(value, at + len(m.group(1))) if at >= 0 and value else -1
        vstart = w.start + vat if vat >= 0 else start
        vend = vstart + len(value) if vat >= 0 else w.end
        out.append(
            Setting(
                m.group(1),
                value,
                start,
                vstart,
                vend,
                "define",
                "$" in value or "@" in value,
                False,
                gate,
                conds,
            )
        )
    return out


def tests_name(name: str, conditions: Tuple[str, ...]) -> bool:
    """Is the setting inside a branch that tests the same variable (``[ -z "$X" ]``,
    ``if(NOT DEFINED X)``)?  Then it is a fallback for when the user set nothing."""
    if not conditions:
        return False
    pat = re.compile(r"(?<![\w$])\$?\{?" + re.escape(name) + r"\b|ENV\{" + re.escape(name) + r"\}")
    return any(pat.search(c) for c in conditions)


def matching_copy(text: str) -> str:
    """The text the readers read, the same length as ``text`` (so offsets found in it are offsets
    into the original): CRLF line ends as blank + newline (a backslash-CRLF continuation is kept:
    the readers join it), the CR line ends of a file that has no LF as newlines (old Mac files),
    other lone CRs and a byte order mark as blanks."""
    if text.startswith("\ufeff"):
        text = " " + text[1:]
    if "\r" not in text:
        return text
    if "\n" not in text:
        return text.replace("\r", "\n")
    return re.sub(r"\r(?!\n)", " ", re.sub(r"(?<!\\)\r\n", " \n", text))
