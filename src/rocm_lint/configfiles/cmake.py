"""A reader of CMake's command syntax: ``name(arg ...)`` with quoted, bracket and unquoted
arguments, ``#`` and ``#[[...]]`` comments, and the ``if``/``elseif``/``else``/``endif``
structure (which branch names ROCm or NVIDIA, and which tests a variable before setting it)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterator, List, Optional, Tuple

from rocm_lint.configfiles.platform_tests import SETTING_NAMES
from rocm_lint.configfiles.shell import NVIDIA, ROCM, Word
from rocm_lint.configfiles.unit import Setting, ToolArgs, UnitBuilder, tests_name

# In a CMake condition: `USE_ROCM`, `HIP_FOUND`, `CMAKE_HIP_COMPILER`, `GPU_LANG STREQUAL "HIP"` ...
ROCM_CONDITION = re.compile(
    r"rocm|(?<![A-Za-z])(?:HIP|hip|Hip)(?![a-z])|(?<![A-Za-z])AMD(?![a-z])|amdgpu", re.I
)
NVIDIA_CONDITION = re.compile(
    r"(?<![A-Za-z])(?:CUDA|Cuda|cuda)(?![a-z])|nvidia|(?<![A-Za-z])NV(?![A-Za-z])", re.I
)


@dataclass
class Arg:
    start: int
    end: int
    value: str  # quotes removed
    quoted: bool
    computed: bool  # holds ${...}, $ENV{...}, $<...> or @VAR@


@dataclass
class CMakeCommand:
    name: str  # lower case
    start: int
    end: int
    args: List[Arg]
    gate: Optional[str]
    conditions: Tuple[str, ...]
    branches: Tuple[Tuple[int, int], ...] = ()


_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_BRACKET_OPEN = re.compile(r"\[(=*)\[")
_COMPUTED = re.compile(r"\$\{|\$ENV\{|\$<|\$CACHE\{|@[A-Za-z_]\w*@")


def condition_platform(args: List[Arg]) -> Tuple[Optional[str], Optional[str]]:
    """(gate where the condition holds, gate where it does not), as shell.test_platform."""
    text = SETTING_NAMES.sub(" ", " ".join(a.value for a in args))
    ro = bool(ROCM_CONDITION.search(text))
    nv = bool(NVIDIA_CONDITION.search(text))
    if ro == nv:
        return None, None
    yes, no = (NVIDIA, None) if nv else (ROCM, NVIDIA)
    negations = sum(1 for a in args if a.value == "NOT" and not a.quoted)
    return (no, yes) if negations % 2 else (yes, no)


class _If:
    count = 0

    def __init__(self) -> None:
        _If.count += 1
        self.uid = -_If.count  # negative: never equal to a shell reader's ids
        self.branch = 0
        self.gate: Optional[str] = None
        self.cond = ""
        self.before: List[str] = []
        self.seen: List[Tuple[Optional[str], Optional[str]]] = []


def iter_commands(text: str, parens: bool = False) -> Iterator[Tuple[str, int, int, List[Arg]]]:
    """Every command of a CMake file in order, the structural ones (``if``, ``else``, ``endif``,
    ``function`` ...) included: (name in lower case, start offset, offset past ``)``, arguments).
    Comments are skipped; an unterminated command ends the file.  ``parens``: the parentheses
    nested in the arguments are arguments too (``(`` and ``)``, unquoted), as CMake passes them
    (``if(A AND (B OR C))``)."""
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "#":
            m = _BRACKET_OPEN.match(text, i + 1)
            if m:
                close = text.find("]" + m.group(1) + "]", m.end())
                i = n if close < 0 else close + len(m.group(1)) + 2
            else:
                j = text.find("\n", i)
                i = n if j < 0 else j
            continue
        m = _IDENT.match(text, i)
        if not m or (i > 0 and (text[i - 1].isalnum() or text[i - 1] == "_")):
            i += 1
            continue
        j = m.end()
        while j < n and text[j] in " \t":
            j += 1
        if j >= n or text[j] != "(":
            i = m.end()
            continue
        args, end = _read_args(text, j + 1, parens)
        yield m.group(0).lower(), i, end, args
        i = end


def read_cmake(text: str) -> List[CMakeCommand]:
    commands: List[CMakeCommand] = []
    stack: List[_If] = []
    for name, i, end, args in iter_commands(text):
        # structure
        if name == "if":
            frame = _If()
            stack.append(frame)
            _enter(frame, args)
        elif name == "elseif" and stack:
            frame = stack[-1]
            frame.branch += 1
            frame.before.append(frame.cond)
            _enter(frame, args)
            if frame.gate is None and NVIDIA in [no for _, no in frame.seen[:-1]]:
                frame.gate = NVIDIA
        elif name == "else" and stack:
            frame = stack[-1]
            frame.branch += 1
            frame.before.append(frame.cond)
            nos = [no for _, no in frame.seen]
            frame.gate = NVIDIA if NVIDIA in nos else (ROCM if ROCM in nos and len(nos) == 1 else None)
            frame.cond = ""
        elif name == "endif" and stack:
            stack.pop()
        else:
            gates = [f.gate for f in stack]
            gate = NVIDIA if NVIDIA in gates else (ROCM if ROCM in gates else None)
            conds = tuple(c for f in stack for c in (*f.before, f.cond) if c)
            commands.append(
                CMakeCommand(name, i, end, args, gate, conds, tuple((f.uid, f.branch) for f in stack))
            )
    return commands


def _enter(frame: _If, args: List[Arg]) -> None:
    yes, no = condition_platform(args)
    frame.seen.append((yes, no))
    frame.gate = yes
    frame.cond = " ".join(a.value for a in args)


def _read_args(text: str, i: int, parens: bool = False) -> Tuple[List[Arg], int]:
    """Arguments from just past ``(`` to the matching ``)``: (args, offset past ``)``)."""
    args: List[Arg] = []
    n = len(text)
    depth = 1
    while i < n:
        c = text[i]
        if c in " \t\r\n":
            i += 1
            continue
        if c == "#":
            m = _BRACKET_OPEN.match(text, i + 1)
            if m:
                close = text.find("]" + m.group(1) + "]", m.end())
                i = n if close < 0 else close + len(m.group(1)) + 2
            else:
                j = text.find("\n", i)
                i = n if j < 0 else j
            continue
        if c == "(":
            depth += 1
            if parens:
                args.append(Arg(i, i + 1, "(", False, False))
            i += 1
            continue
        if c == ")":
            depth -= 1
            i += 1
            if depth == 0:
                return args, i
            if parens:
                args.append(Arg(i - 1, i, ")", False, False))
            continue
        if c == '"':
            j = i + 1
            buf = []
            while j < n and text[j] != '"':
                if text[j] == "\\" and j + 1 < n:
                    if text[j + 1] == "\n":
                        j += 2
                        continue
                    buf.append(text[j + 1] if text[j + 1] in '"\\$;' else text[j : j + 2])
                    j += 2
                    continue
                buf.append(text[j])
                j += 1
            value = "".join(buf)
            args.append(Arg(i, min(j + 1, n), value, True, bool(_COMPUTED.search(value))))
            i = j + 1
            continue
        m = _BRACKET_OPEN.match(text, i)
        if m:
            close = text.find("]" + m.group(1) + "]", m.end())
            close = n if close < 0 else close
            value = text[m.end() : close]
            args.append(Arg(i, min(close + len(m.group(1)) + 2, n), value, True, False))
            i = close + len(m.group(1)) + 2
            continue
        # unquoted (legacy forms may hold "..." and $<...>/${...} with blanks inside)
        j = i
        nest = 0
        while j < n:
            d = text[j]
            if d == "\\" and j + 1 < n:
                j += 2
                continue
            if d == '"':
                k = text.find('"', j + 1)
                j = n if k < 0 else k + 1
                continue
            if d in "<{" and j > 0 and text[j - 1] == "$":
                nest += 1
            elif d in ">}" and nest:
                nest -= 1
            elif d in " \t\r\n()#" and not nest:
                break
            j += 1
        value = text[i:j]
        args.append(Arg(i, j, value, False, bool(_COMPUTED.search(value))))
        i = max(j, i + 1)
    return args, n


# -- CMake --------------------------------------------------------------------------------------------
# Commands whose arguments never reach a compiler: messages, tests, loops, declarations, probes.
_CMAKE_NOT_FLAGS = frozenset(
    {
        "message",
        "if",
        "elseif",
        "else",
        "endif",
        "while",
        "endwhile",
        "foreach",
        "endforeach",
        "option",
        "function",
        "endfunction",
        "macro",
        "endmacro",
        "return",
        "unset",
        "mark_as_advanced",
        "include",
        "find_package",
        "find_program",
        "find_library",
        "find_path",
        "project",
        "cmake_minimum_required",
        "install",
        "file",
        "configure_file",
        "execute_process",
        "try_compile",
        "try_run",
        "cmake_parse_arguments",
        "check_cxx_compiler_flag",
        "check_c_compiler_flag",
        "check_compiler_flag",
        "check_language",
        "cmake_dependent_option",
        "get_property",
        "get_target_property",
        "get_filename_component",
        "add_test",
        "set_tests_properties",
        "math",
        "separate_arguments",
        "cmake_policy",
    }
)
_SET_TAIL = {"CACHE", "PARENT_SCOPE"}


def read_cmake_unit(b: UnitBuilder) -> None:
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
            default = default or tests_name(name, cmd.conditions)
            if vals and re.fullmatch(r"[A-Za-z_]\w*", name):
                b.settings.append(
                    Setting(
                        name,
                        ";".join(a.value for a in vals),
                        name_arg.start,
                        vals[0].start,
                        vals[-1].end,
                        "set-env" if env else "set",
                        any(a.computed for a in vals),
                        default,
                        cmd.gate,
                        cmd.conditions,
                        cmd.branches,
                    )
                )
        elif cmd.name == "list" and len(args) >= 3 and values[0] in ("APPEND", "PREPEND", "INSERT"):
            vals = args[3:] if values[0] == "INSERT" else args[2:]
            if vals:
                b.settings.append(
                    Setting(
                        values[1],
                        ";".join(a.value for a in vals),
                        args[1].start,
                        vals[0].start,
                        vals[-1].end,
                        "list",
                        any(a.computed for a in vals),
                        tests_name(values[1], cmd.conditions),
                        cmd.gate,
                        cmd.conditions,
                        cmd.branches,
                    )
                )
        elif cmd.name in (
            "set_property",
            "set_target_properties",
            "set_source_files_properties",
            "set_directory_properties",
        ):
            _cmake_properties(b, cmd)
        if cmd.name in _CMAKE_NOT_FLAGS:
            continue
        if cmd.name in ("string", "list") and (
            not values or values[0] not in ("APPEND", "PREPEND", "INSERT", "CONCAT", "JOIN")
        ):
            continue
        b.args.append(
            ToolArgs(tuple(Word(a.start, a.end, a.value, a.computed, a.quoted) for a in args), cmd.gate)
        )


def _cmake_properties(b: UnitBuilder, cmd) -> None:
    args = cmd.args
    values = [a.value for a in args]
    if cmd.name == "set_property":
        if "PROPERTY" not in values:
            return
        k = values.index("PROPERTY")
        if k + 1 < len(args):
            vals = args[k + 2 :]
            if vals:
                b.settings.append(
                    Setting(
                        values[k + 1],
                        ";".join(a.value for a in vals),
                        args[k + 1].start,
                        vals[0].start,
                        vals[-1].end,
                        "property",
                        any(a.computed for a in vals),
                        False,
                        cmd.gate,
                        cmd.conditions,
                    )
                )
        return
    if "PROPERTIES" not in values:
        return
    k = values.index("PROPERTIES") + 1
    while k + 1 < len(args):
        name, val = args[k], args[k + 1]
        b.settings.append(
            Setting(
                name.value,
                val.value,
                name.start,
                val.start,
                val.end,
                "property",
                val.computed,
                False,
                cmd.gate,
                cmd.conditions,
            )
        )
        k += 2
