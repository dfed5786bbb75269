"""The commands the CMake interpreter (``rocm_lint.build.cmake_eval``) models, one method
``_c_<name>`` each, mixed into ``Interpreter``: variables and the cache (``set``, ``unset``,
``option``, ``cmake_dependent_option``), ``list()``, ``string()``, ``math()``,
``get_filename_component``, ``cmake_parse_arguments``, control (``return``, ``break``,
``continue``, ``message(FATAL_ERROR)``, ``include_guard``), what is never run
(``execute_process``, ``try_compile``: their outputs unknown), packages and languages per
scenario, files (``include``, ``add_subdirectory``, ``file(GLOB)``), targets, sources, links and
compile definitions and options.  A handler raises Unknown where it cannot tell: the command
then counts as one from outside the tree (what its arguments name is written, unknown)."""

from __future__ import annotations

import itertools
import os
import re
from fnmatch import fnmatchcase
from typing import TYPE_CHECKING, Any, Dict, FrozenSet, List, Optional, Sequence, Set, Tuple

from rocm_lint.build.cmake_values import (
    CUDA,
    Abort,
    DEFINE_FLAG,
    ENDED,
    HIP_PACKAGES,
    Item,
    MAX_GLOB_ENTRIES,
    MAX_VALUES,
    OPEN,
    OUTPUT_KEYWORDS,
    ROCM,
    SCOPE_WORDS,
    SOURCE_FILE,
    State,
    TARGET_WORDS,
    UNDEF_VALUE,
    UNKNOWN_ONE,
    Unknown,
    UnknownArg,
    Value,
    all_known,
    any_tainted,
    flag_definitions,
    give_up,
    is_off,
    join_value,
    math_expr,
    split_list,
    to_regex,
)


class CommandSemantics:
    """The ``_c_*`` handlers (the interpreter's own methods: ``_path``, ``_unknown_command``,
    ``_run_listfile`` ... are ``Interpreter``'s)."""

    if TYPE_CHECKING:  # the interpreter's state and methods the handlers use (``Interpreter``)
        root: str
        scenario: Optional[str]
        frames: List[Any]
        current_dir: str
        list_file: str
        written: Optional[Set[str]]

        def _in_tree(self, path: str) -> bool: ...

        def _run_listfile(self, path: str, st: State, directory: bool) -> Optional[State]: ...

        def _turn_on(self, lang: str) -> None: ...

        def _enumerate(self, tokens: List[Tuple[str, bool]], st: State) -> Optional[Set[bool]]: ...

        def _unknown_command(self, name: str, args: List[Item], st: State) -> State: ...

        def _path(self, p: str) -> str: ...

    def _c_set(self, args: List[Item], st: State) -> State:
        if not args or not isinstance(args[0], str):
            raise Unknown
        name = args[0]
        if name.startswith("ENV{"):
            return st
        rest = list(args[1:])
        if "CACHE" in rest:
            k = rest.index("CACHE")
            values, tail = rest[:k], rest[k + 1 :]
            if not all_known(values) or not tail:
                st.cache[name] = None
                st.set(name, None)
                return st
            force = "FORCE" in tail[2:]
            value = frozenset({";".join(str(v) for v in values)})
            existing = st.cache.get(name, UNDEF_VALUE)
            if force or existing == UNDEF_VALUE:
                st.cache[name] = value
            elif existing is not None and None in existing:
                st.cache[name] = join_value(existing - UNDEF_VALUE, value)
            if not self._policy(st, (3, 21)):  # CMP0126 OLD: a new entry removes the normal binding
                if existing == UNDEF_VALUE:
                    st.set(name, UNDEF_VALUE)
                elif existing is None or None in existing:
                    normal = st.normal(name)
                    st.set(name, None if normal is None else normal | UNDEF_VALUE)
            return st
        parent = bool(rest) and rest[-1] == "PARENT_SCOPE"
        if parent:
            rest = rest[:-1]
        if not all_known(rest):
            st.set(name, None, parent)
            return st
        st.set(name, frozenset({";".join(str(v) for v in rest)}) if rest else UNDEF_VALUE, parent)
        return st

    def _policy(self, st: State, version: Tuple[int, int]) -> bool:
        declared = st.flags.get("policy")
        return isinstance(declared, tuple) and declared >= version

    def _c_cmake_minimum_required(self, args: List[Item], st: State) -> State:
        if len(args) >= 2 and args[0] == "VERSION" and isinstance(args[1], str):
            low = args[1].split("...")[-1] if "..." in args[1] else args[1]
            try:
                st.flags["policy"] = tuple(int(x) for x in low.split(".")[:2])
            except ValueError:
                st.flags["policy"] = None
        return st

    def _c_unset(self, args: List[Item], st: State) -> State:
        if not args or not isinstance(args[0], str):
            raise Unknown
        if len(args) > 1 and args[1] == "CACHE":
            st.cache[args[0]] = UNDEF_VALUE
        else:
            st.set(args[0], UNDEF_VALUE, len(args) > 1 and args[1] == "PARENT_SCOPE")
        return st

    def _c_option(self, args: List[Item], st: State) -> State:
        if len(args) < 2 or not isinstance(args[0], str):
            raise Unknown
        name = args[0]
        init = args[2] if len(args) > 2 else "OFF"
        value: Value = frozenset({init}) if isinstance(init, str) and not self.written else None
        normal = st.normal(name)
        new = self._policy(st, (3, 13))
        if new and normal is not None and None not in normal:
            return st  # CMP0077: a normal variable wins
        cached = st.cache.get(name, UNDEF_VALUE)
        if cached == UNDEF_VALUE:
            st.cache[name] = value
        elif cached is not None and None in cached:
            st.cache[name] = join_value(cached - UNDEF_VALUE, value)
        if not new:
            st.set(name, UNDEF_VALUE)  # CMP0077 OLD: the normal variable goes
        return st

    def _c_cmake_dependent_option(self, args: List[Item], st: State) -> State:
        if len(args) < 5 or not all_known(args):
            raise Unknown
        name, _, default, depends, force = (str(a) for a in args[:5])
        words = [w for d in depends.split(";") for w in re.split(r" +", d) if w]
        tokens = [(w, False) for w in words]
        truth = self._enumerate(tokens, st)
        if truth is None or len(truth) != 1:
            st.set(name, None)
            st.cache[name] = None
            return st
        if truth.pop():
            cached = st.cache.get(name, UNDEF_VALUE)
            if cached == UNDEF_VALUE:
                st.cache[name] = cached = frozenset({default})
            st.set(name, cached)
        else:
            st.set(name, frozenset({force}))
        return st

    def _c_list(self, args: List[Item], st: State) -> State:
        if len(args) < 2 or not isinstance(args[0], str) or not isinstance(args[1], str):
            raise Unknown
        op, var = args[0], args[1]
        rest = args[2:]
        out_var = var
        if op in ("LENGTH", "GET", "JOIN", "FIND", "SUBLIST"):
            last = rest[-1] if rest else None
            if not isinstance(last, str):
                raise Unknown
            out_var = last
        if op == "TRANSFORM" and "OUTPUT_VARIABLE" in rest:
            k = rest.index("OUTPUT_VARIABLE")
            if k + 1 >= len(rest) or not isinstance(rest[k + 1], str):
                raise Unknown
            out_var = str(rest[k + 1])
            rest = rest[:k] + rest[k + 2 :]
        if op in ("POP_BACK", "POP_FRONT"):
            raise Unknown
        if not all_known(rest):
            st.set(out_var, None)
            return st
        value = st.get(var)
        if value is None:
            st.set(out_var, None)
            return st
        results: Set[Optional[str]] = set()
        for v in value:
            try:
                results.add(self._list_op(op, v, [str(r) for r in rest]))
            except (Unknown, ValueError, IndexError, re.error):
                st.set(out_var, None)
                return st
        st.set(out_var, frozenset(results) if len(results) <= MAX_VALUES else None)
        return st

    def _list_op(self, op: str, value: Optional[str], rest: List[str]) -> Optional[str]:
        items = split_list(value) if value is not None else []
        if op == "APPEND":
            if not rest:
                return value
            return ";".join(items + rest) if items else ";".join(rest)
        if op == "PREPEND":
            if not rest:
                return value
            return ";".join(rest + items) if items else ";".join(rest)
        if op == "INSERT":
            k = int(rest[0])
            if k < 0:
                k += len(items)
            if not 0 <= k <= len(items):
                raise Unknown
            return ";".join(items[:k] + rest[1:] + items[k:])
        if op == "LENGTH":
            return str(len(items))
        if op == "GET":
            out = []
            for r in rest[:-1]:
                k = int(r)
                if not -len(items) <= k < len(items):
                    raise Unknown
                out.append(items[k])
            return ";".join(out)
        if op == "JOIN":
            return rest[0].join(items) if len(rest) == 2 else give_up()
        if op == "FIND":
            return str(items.index(rest[0])) if rest[0] in items else "-1"
        if op == "SUBLIST":
            begin, length = int(rest[0]), int(rest[1])
            if not 0 <= begin <= len(items) or length < -1:
                raise Unknown
            return ";".join(items[begin:] if length == -1 else items[begin : begin + length])
        if value is None and op in ("REMOVE_ITEM", "REMOVE_AT", "REMOVE_DUPLICATES", "FILTER", "REVERSE"):
            return None if op != "REMOVE_AT" else give_up()
        if op == "REMOVE_ITEM":
            return ";".join(x for x in items if x not in rest)
        if op == "REMOVE_AT":
            drop = set()
            for r in rest:
                k = int(r)
                if not -len(items) <= k < len(items):
                    raise Unknown
                drop.add(k % len(items))
            return ";".join(x for k, x in enumerate(items) if k not in drop)
        if op == "REMOVE_DUPLICATES":
            return ";".join(dict.fromkeys(items))
        if op == "REVERSE":
            return ";".join(reversed(items))
        if op == "FILTER":
            if len(rest) != 3 or rest[0] not in ("INCLUDE", "EXCLUDE") or rest[1] != "REGEX":
                raise Unknown
            rx = to_regex(rest[2])
            keep = rest[0] == "INCLUDE"
            return ";".join(x for x in items if bool(rx.search(x)) == keep)
        if op == "TRANSFORM":
            return self._transform(items, rest)
        if op == "SORT" and not rest:
            return ";".join(sorted(items))
        raise Unknown

    def _transform(self, items: List[str], rest: List[str]) -> str:
        if not rest:
            raise Unknown
        action, rest = rest[0], rest[1:]
        nargs = {"APPEND": 1, "PREPEND": 1, "TOLOWER": 0, "TOUPPER": 0, "STRIP": 0, "REPLACE": 2}
        if action not in nargs:
            raise Unknown
        params, selector = rest[: nargs[action]], rest[nargs[action] :]
        if len(params) != nargs[action]:
            raise Unknown
        chosen = set(range(len(items)))
        if selector:
            if selector[0] == "REGEX" and len(selector) == 2:
                rx = to_regex(selector[1])
                chosen = {k for k, x in enumerate(items) if rx.search(x)}
            elif selector[0] == "AT" and len(selector) > 1:
                chosen = {int(x) % len(items) for x in selector[1:]} if items else give_up()
            else:
                raise Unknown

        def apply(x: str) -> str:
            if action == "APPEND":
                return x + params[0]
            if action == "PREPEND":
                return params[0] + x
            if action == "TOLOWER":
                return x.lower()
            if action == "TOUPPER":
                return x.upper()
            if action == "STRIP":
                return x.strip(" \t\r\n")
            rx = to_regex(params[0])
            if "\\" in params[1]:
                raise Unknown
            return rx.sub(lambda m: params[1], x)

        return ";".join(apply(x) if k in chosen else x for k, x in enumerate(items))

    def _c_string(self, args: List[Item], st: State) -> State:
        if len(args) < 2 or not isinstance(args[0], str):
            raise Unknown
        op = args[0]
        strs = [a if isinstance(a, str) else None for a in args[1:]]
        out_index = {
            "APPEND": 0,
            "PREPEND": 0,
            "CONCAT": 0,
            "JOIN": 1,
            "TOLOWER": 1,  # CMake reads the positions it needs and ignores what follows
            "TOUPPER": 1,
            "LENGTH": 1,
            "SUBSTRING": 3,
            "STRIP": 1,
            "REPLACE": 2,
            "FIND": 2,
            "COMPARE": 3,
        }.get(op)
        if op == "REGEX" and len(strs) >= 3 and strs[0] in ("MATCH", "MATCHALL", "REPLACE"):
            out_index = 2 if strs[0] == "REPLACE" else 2
            out_index = {"MATCH": 2, "MATCHALL": 2, "REPLACE": 3}[strs[0]]  # type: ignore[index]
        if out_index is None or out_index >= len(strs) or strs[out_index] is None:
            raise Unknown
        out = str(strs[out_index])
        if not all(s is not None for s in strs):
            st.set(out, None)
            return st
        try:
            value = self._string_op(op, [str(s) for s in strs], st)
        except (Unknown, ValueError, IndexError, re.error):
            value = None
        st.set(out, value)
        return st

    def _string_op(self, op: str, s: List[str], st: State) -> Value:
        def current(name: str) -> FrozenSet[Optional[str]]:
            value = st.get(name)
            if value is None:
                raise Unknown
            return value

        if op in ("APPEND", "PREPEND"):
            tail = "".join(s[1:])
            return frozenset(
                ((v or "") + tail if op == "APPEND" else tail + (v or "")) if s[1:] else v
                for v in current(s[0])
            )
        if op == "CONCAT":
            return frozenset({"".join(s[1:])})
        if op == "JOIN":
            return frozenset({s[0].join(s[2:])})
        if op in ("TOLOWER", "TOUPPER"):
            if not s[0].isascii():
                raise Unknown
            return frozenset({s[0].lower() if op == "TOLOWER" else s[0].upper()})
        if op == "LENGTH":
            return frozenset({str(len(s[0].encode()))})
        if op == "STRIP":
            return frozenset({s[0].strip(" \t\r\n\v\f")})
        if op == "SUBSTRING":
            text, begin, length = s[0], int(s[1]), int(s[2])
            if not text.isascii() or not 0 <= begin <= len(text) or length < -1:
                raise Unknown
            return frozenset({text[begin:] if length == -1 else text[begin : begin + length]})
        if op == "REPLACE":
            return frozenset({"".join(s[3:]).replace(s[0], s[1]) if s[0] else give_up()})
        if op == "FIND":
            if len(s) != 3:
                raise Unknown
            return frozenset({str(s[0].find(s[1]))})
        if op == "COMPARE":
            mode, a, b = s[0], s[1], s[2]
            ops = {"EQUAL": a == b, "NOTEQUAL": a != b, "LESS": a < b, "GREATER": a > b}
            ops.update({"LESS_EQUAL": a <= b, "GREATER_EQUAL": a >= b})
            if mode not in ops:
                raise Unknown
            return frozenset({"1" if ops[mode] else "0"})
        if op == "REGEX":
            mode, rx = s[0], to_regex(s[1])
            text = "".join(s[3:] if mode != "REPLACE" else s[4:])
            if mode == "MATCH":
                m = rx.search(text)
                return frozenset({m.group(0) if m else ""})
            if mode == "MATCHALL":
                return frozenset({";".join(m.group(0) for m in rx.finditer(text) if m.group(0))})
            if "\\" in s[2] or any(m.group(0) == "" for m in rx.finditer(text)):
                raise Unknown
            return frozenset({rx.sub(lambda m: s[2], text)})
        raise Unknown

    def _c_math(self, args: List[Item], st: State) -> State:
        if len(args) < 3 or args[0] != "EXPR" or not isinstance(args[1], str):
            raise Unknown
        if not isinstance(args[2], str) or len(args) > 3:
            st.set(args[1], None)
            return st
        try:
            st.set(args[1], frozenset({str(math_expr(args[2]))}))
        except (Unknown, ValueError, ZeroDivisionError, SyntaxError, RecursionError):
            st.set(args[1], None)
        return st

    def _c_get_filename_component(self, args: List[Item], st: State) -> State:
        if len(args) < 3 or not all_known(args[:3]):
            raise Unknown
        var, path, mode = str(args[0]), str(args[1]), str(args[2])
        base = os.path.basename(path)
        if mode in ("DIRECTORY", "PATH"):
            value = os.path.dirname(path)
        elif mode == "NAME":
            value = base
        elif mode == "EXT":
            value = base[base.index(".") :] if "." in base else ""
        elif mode == "NAME_WE":
            value = base.split(".")[0]
        elif mode == "ABSOLUTE" and len(args) == 3:
            value = os.path.normpath(os.path.join(self.current_dir, path))
        else:
            raise Unknown
        st.set(var, frozenset({value}))
        return st

    def _c_cmake_parse_arguments(self, args: List[Item], st: State) -> State:
        if not args or args[0] == "PARSE_ARGV":
            if len(args) < 5 or not all_known(args):
                raise Unknown
            first = int(str(args[1]))
            count = st.get("ARGC")
            if count is None or len(count) != 1:
                raise Unknown
            argv: List[Item] = []
            for k in range(first, int(next(iter(count)) or 0)):
                v = st.get(f"ARGV{k}")
                if v is None or len(v) != 1:
                    raise Unknown
                argv.extend([x for x in [next(iter(v))] if x is not None])
            prefix, opts, one, multi = (str(a) for a in args[2:6]) if len(args) > 5 else give_up()
        else:
            if len(args) < 4 or not all_known(args[:4]):
                raise Unknown
            prefix, opts, one, multi = (str(a) for a in args[:4])
            argv = args[4:]
            if not all_known(argv):
                for group in (opts, one, multi):
                    for key in split_list(group):
                        st.set(f"{prefix}_{key}", None)
                st.set(f"{prefix}_UNPARSED_ARGUMENTS", None)
                return st
        options, singles, multis = split_list(opts), split_list(one), split_list(multi)
        found: Dict[str, List[str]] = {}
        unparsed: List[str] = []
        current = None
        for w in (str(a) for a in argv):
            if w in options:
                found[w] = []
                current = None
            elif w in singles or w in multis:
                if w in found:
                    raise Unknown
                found[w] = []
                current = w
            elif current is not None and (current in multis or not found[current]):
                found[current].append(w)
            else:
                unparsed.append(w)
                current = None
        for key in options:
            st.set(f"{prefix}_{key}", frozenset({"TRUE" if key in found else "FALSE"}))
        for key in singles + multis:
            if key in found and not found[key]:
                raise Unknown
            st.set(f"{prefix}_{key}", frozenset({";".join(found[key])}) if key in found else UNDEF_VALUE)
        st.set(f"{prefix}_UNPARSED_ARGUMENTS", frozenset({";".join(unparsed)}) if unparsed else UNDEF_VALUE)
        st.set(f"{prefix}_KEYWORDS_MISSING_VALUES", UNDEF_VALUE)
        return st

    def _c_message(self, args: List[Item], st: State) -> Optional[State]:
        if args and args[0] == "FATAL_ERROR":
            return None  # CMake stops here
        return st

    def _c_return(self, args: List[Item], st: State) -> Optional[State]:
        if args:
            raise Unknown  # return(PROPAGATE ...)
        for frame in reversed(self.frames):
            if frame.kind in ("function", "file"):
                frame.returned.append(st)
                return None
        return st

    def _c_break(self, args: List[Item], st: State) -> Optional[State]:
        for frame in reversed(self.frames):
            if frame.kind == "loop":
                frame.breaks.append(st)
                return None
            if frame.kind == "function":
                break
        raise Abort("break outside a loop")

    def _c_continue(self, args: List[Item], st: State) -> Optional[State]:
        for frame in reversed(self.frames):
            if frame.kind == "loop":
                frame.continues.append(st)
                return None
            if frame.kind == "function":
                break
        raise Abort("continue outside a loop")

    def _c_include_guard(self, args: List[Item], st: State) -> Optional[State]:
        if self.list_file in st.guards:
            for frame in reversed(self.frames):
                if frame.kind == "file":
                    frame.returned.append(st)
                    return None
        st.guards = st.guards | {self.list_file}
        return st

    def _c_execute_process(self, args: List[Item], st: State) -> State:
        for k, a in enumerate(args[:-1]):
            if a in OUTPUT_KEYWORDS:
                nxt = args[k + 1]
                if isinstance(nxt, str):
                    st.set(nxt, None)
        return st

    _c_try_compile = _c_try_run = _c_execute_process

    def _c_find_package(self, args: List[Item], st: State) -> State:
        if not args or not isinstance(args[0], str):
            raise Unknown
        package = args[0]
        found: Optional[bool] = None
        if self.scenario is not None:
            low = package.lower()
            if low in HIP_PACKAGES:
                found = self.scenario == ROCM
            elif low in ("cuda", "cudatoolkit", "cudnn", "nccl", "cutlass"):
                found = self.scenario == CUDA
        for name in (f"{package}_FOUND", f"{package.upper()}_FOUND"):
            st.set(name, None if found is None else frozenset({"1" if found else "0"}))
        low = package.lower()
        if low in HIP_PACKAGES:
            self._turn_on("hip")
        elif low in ("cuda", "cudatoolkit"):
            self._turn_on("cuda")
        return st

    def _c_check_language(self, args: List[Item], st: State) -> State:
        if len(args) != 1 or not isinstance(args[0], str):
            raise Unknown
        lang = args[0]
        var = f"CMAKE_{lang}_COMPILER"
        if self.scenario is not None and lang in ("HIP", "CUDA"):
            have = (lang == "HIP") == (self.scenario == ROCM)
            st.cache[var] = frozenset({f"/usr/bin/{lang.lower()}-compiler" if have else f"{var}-NOTFOUND"})
        else:
            st.cache[var] = None
        return st

    def _c_project(self, args: List[Item], st: State) -> State:
        if not args or not isinstance(args[0], str):
            raise Unknown
        name = args[0]
        for var in ("PROJECT_NAME", "CMAKE_PROJECT_NAME"):
            st.set(var, frozenset({name}))
        for var in ("PROJECT_SOURCE_DIR", f"{name}_SOURCE_DIR"):
            st.set(var, frozenset({self.current_dir}))
        for var in ("PROJECT_BINARY_DIR", f"{name}_BINARY_DIR"):
            st.set(var, frozenset({"/nonexistent-build-dir"}))
        for var in ("PROJECT_VERSION", f"{name}_VERSION"):
            st.set(var, None)
        return self._languages([a for a in args[1:]], st)

    def _c_enable_language(self, args: List[Item], st: State) -> State:
        return self._languages(args, st)

    def _languages(self, args: Sequence[Item], st: State) -> State:
        for lang in ("HIP", "CUDA"):
            if lang in args:
                self._turn_on(lang.lower())
                var = f"CMAKE_{lang}_COMPILER"
                if self.scenario is not None:
                    st.cache[var] = frozenset({f"/usr/bin/{lang.lower()}-compiler"})
                    st.cache.setdefault(f"CMAKE_{lang}_COMPILER_LOADED", frozenset({"1"}))
        return st

    # -- files
    def _c_include(self, args: List[Item], st: State) -> Optional[State]:
        if not args or not isinstance(args[0], str):
            if any_tainted(args[:1]):
                st.flags["lost"] = True
            return self._unknown_command("include", args, st)
        target = args[0]
        optional = "OPTIONAL" in args[1:]
        result_var = None
        if "RESULT_VARIABLE" in args[1:]:
            k = args.index("RESULT_VARIABLE")
            result_var = args[k + 1] if k + 1 < len(args) and isinstance(args[k + 1], str) else None
        candidates: List[str] = []
        if "/" in target or target.endswith(".cmake"):
            candidates.append(self._path(target))
        else:
            paths = st.get("CMAKE_MODULE_PATH")
            if paths is None:
                candidates = []
            else:
                for p in paths:
                    for d in split_list(p or ""):
                        candidates.append(
                            os.path.normpath(os.path.join(self.current_dir, d, target + ".cmake"))
                        )
        for path in candidates:
            if self._in_tree(path) and os.path.isfile(path):
                try:
                    out = self._run_listfile(path, st, directory=False)
                except Unknown:
                    break
                if out is not None and isinstance(result_var, str):
                    out.set(result_var, frozenset({path}))
                return out
        if isinstance(result_var, str):
            st.set(result_var, None)
        if not optional and ("/" in target or target.endswith(".cmake")) and self._in_tree(candidates[0]):
            st.flags["lost"] = True  # an in-tree file we could not read
        return st  # a module outside the tree: skipped

    def _c_add_subdirectory(self, args: List[Item], st: State) -> Optional[State]:
        if not args or not isinstance(args[0], str):
            if any_tainted(args[:1]):
                st.flags["lost"] = True
            return st
        directory = self._path(args[0])
        listfile = os.path.join(directory, "CMakeLists.txt")
        if not self._in_tree(directory) or not os.path.isfile(listfile):
            st.flags["lost"] = True
            return st
        saved_dir, saved_file = self.current_dir, self.list_file
        parent_dir = self.current_dir
        st.scopes.append(dict(st.scopes[-1]))
        st.set("CMAKE_CURRENT_SOURCE_DIR", frozenset({directory}))
        st.set("CMAKE_CURRENT_BINARY_DIR", frozenset({"/nonexistent-build-dir"}))
        for key in ("ddef", "dopt"):
            for item, definite in st.items((key, parent_dir)).items():
                st.add((key, directory), item, definite)
        self.current_dir = directory
        try:
            out = self._run_listfile(listfile, st, directory=True)
        except Unknown:
            out = st
            out.flags["lost"] = True
        finally:
            self.current_dir, self.list_file = saved_dir, saved_file
        if out is not None:
            self._end_directory(out, directory)
            out.scopes.pop()
        return out

    def _end_directory(self, st: State, directory: str) -> None:
        """The flags variables as they stand at the end of the directory are its flags."""
        for lang in ("C", "CXX", "CUDA", "HIP"):
            value = st.get(f"CMAKE_{lang}_FLAGS")
            key = ("dflags", directory, lang)
            st.add(key, ENDED)  # the directory's end was reached
            if value is None:
                st.add(key, OPEN, True)
                continue
            per = [set(flag_definitions(v or "")) for v in value]
            for item in set().union(*per) if per else set():
                st.add(key, item, all(item in p for p in per))

    def _c_file(self, args: List[Item], st: State) -> State:
        if not args or not isinstance(args[0], str):
            raise Unknown
        op = args[0]
        if op in ("GLOB", "GLOB_RECURSE"):
            if len(args) < 2 or not isinstance(args[1], str):
                raise Unknown
            var = args[1]
            rest = list(args[2:])
            if not all_known(rest):
                st.set(var, None)
                return st
            st.set(var, self._glob(op == "GLOB_RECURSE", [str(r) for r in rest]))
            return st
        if op in ("READ", "STRINGS", "SHA256", "MD5", "TIMESTAMP", "SIZE", "REAL_PATH", "RELATIVE_PATH"):
            if op == "RELATIVE_PATH" and len(args) == 4 and all_known(args):
                st.set(str(args[1]), frozenset({os.path.relpath(str(args[3]), str(args[2]))}))
                return st
            if len(args) > 2 and isinstance(args[2], str) and op not in ("RELATIVE_PATH",):
                st.set(args[2], None)
            elif len(args) > 1 and isinstance(args[1], str):
                st.set(args[1], None)
            return st
        if op in ("TO_CMAKE_PATH", "TO_NATIVE_PATH"):
            if len(args) == 3 and isinstance(args[2], str):
                st.set(args[2], None if not isinstance(args[1], str) else frozenset({args[1]}))
            return st
        if op in (
            "WRITE",
            "APPEND",
            "MAKE_DIRECTORY",
            "REMOVE",
            "REMOVE_RECURSE",
            "COPY",
            "INSTALL",
            "TOUCH",
        ):
            return st
        if op in ("GENERATE", "CONFIGURE", "LOCK", "CHMOD", "COPY_FILE", "CREATE_LINK", "RENAME"):
            return st
        raise Unknown

    def _glob(self, recurse: bool, words: List[str]) -> Value:
        relative = None
        list_dirs = not recurse
        patterns: List[str] = []
        k = 0
        while k < len(words):
            w = words[k]
            if w in ("LIST_DIRECTORIES", "RELATIVE"):
                if k + 1 >= len(words):
                    return None
                if w == "RELATIVE":
                    relative = words[k + 1]
                else:
                    list_dirs = not is_off(words[k + 1])
                    if recurse and list_dirs:
                        return None  # directories listed at every level: not modelled
                k += 2
                continue
            if w in ("CONFIGURE_DEPENDS", "FOLLOW_SYMLINKS"):
                k += 1
                continue
            patterns.append(w)
            k += 1
        found: Set[str] = set()
        seen = 0
        for pattern in patterns:
            full = self._path(pattern)
            if not self._in_tree(full):
                return None
            parts = full[len(self.root) :].strip(os.sep).split(os.sep)
            fixed = [p for p in itertools.takewhile(lambda p: not any(c in p for c in "*?["), parts)]
            wild = parts[len(fixed) :]
            base = os.path.join(self.root, *fixed)
            if not wild:
                if os.path.isfile(base):
                    found.add(base)
                continue
            if recurse and len(wild) != 1:
                return None
            for dirpath, dirnames, filenames in os.walk(base):
                dirnames[:] = sorted(dirnames)
                rel = os.path.relpath(dirpath, base)
                depth = 0 if rel == "." else rel.count(os.sep) + 1
                seen += len(filenames) + len(dirnames)
                if seen > MAX_GLOB_ENTRIES:
                    return None
                if not recurse:
                    if depth < len(wild) - 1:
                        dirnames[:] = [d for d in dirnames if fnmatchcase(d, wild[depth])]
                        continue
                    dirnames_all = list(dirnames)
                    dirnames[:] = []
                    for f in filenames:
                        if fnmatchcase(f, wild[-1]):
                            found.add(os.path.join(dirpath, f))
                    if list_dirs:
                        for d in dirnames_all:
                            if fnmatchcase(d, wild[-1]):
                                found.add(os.path.join(dirpath, d))
                else:
                    for f in filenames:
                        if fnmatchcase(f, wild[0]):
                            found.add(os.path.join(dirpath, f))
        results = sorted(found)
        if relative is not None:
            results = [os.path.relpath(r, relative) for r in results]
        return frozenset({";".join(results)})

    # -- targets and definitions
    def _target_sources(self, target: str, items: Sequence[Item], st: State) -> None:
        for a in items:
            if isinstance(a, UnknownArg):
                if a.tainted:
                    st.flags["lost"] = True
                continue
            if a in SCOPE_WORDS or a in TARGET_WORDS:
                continue
            st.add(("tsrc", target), a if "$<" in a else self._path(a))

    def _c_add_library(self, args: List[Item], st: State) -> State:
        if not args or not isinstance(args[0], str):
            st.flags["lost"] = True
            return st
        name = args[0]
        if any(w in ("IMPORTED", "ALIAS") for w in args[1:2]) or "IMPORTED" in args or "ALIAS" in args:
            return st
        st.add(("targets",), name)
        st.add(("tdir", name), self.current_dir)
        if "INTERFACE" in args[1:2]:
            return st
        sources: List[Item] = []
        options = False
        for a in args[1:]:
            if a in ("OPTIONS", "HIPCC_OPTIONS", "HCC_OPTIONS", "CLANG_OPTIONS", "NVCC_OPTIONS"):
                options = True  # FindCUDA's and FindHIP's compiler options up to the end
            elif options:
                st.add(("topt", name), a if isinstance(a, str) else OPEN)
            else:
                sources.append(a)
        self._target_sources(name, sources, st)
        return st

    _c_add_executable = _c_cuda_add_library = _c_cuda_add_executable = _c_add_library
    _c_hip_add_library = _c_hip_add_executable = _c_add_library

    def _c_target_sources(self, args: List[Item], st: State) -> State:
        if not args or not isinstance(args[0], str):
            st.flags["lost"] = True
            return st
        items: List[Item] = []
        mode = "PRIVATE"
        for a in args[1:]:
            if a in ("PRIVATE", "PUBLIC", "INTERFACE"):
                mode = str(a)
            elif a == "FILE_SET":
                mode = "FILE_SET"
            elif mode in ("PRIVATE", "PUBLIC"):
                items.append(a)
            elif mode == "INTERFACE" and isinstance(a, str) and SOURCE_FILE.search(a):
                st.add(("maybe_src",), self._path(a), False)
        self._target_sources(args[0], items, st)
        return st

    def _definition_items(self, items: Sequence[Item], strip_d: bool) -> Tuple[List[str], bool]:
        out: List[str] = []
        open_ = False
        for a in items:
            if isinstance(a, UnknownArg):
                open_ = True
                continue
            if a in SCOPE_WORDS:
                continue
            out.append(a[2:] if strip_d and a.startswith("-D") else a)
        return out, open_

    def _c_add_definitions(self, args: List[Item], st: State) -> State:
        for a in args:
            if isinstance(a, UnknownArg):
                st.add(("ddef", self.current_dir), OPEN)
            elif DEFINE_FLAG.fullmatch(a):
                st.add(("ddef", self.current_dir), a[2:])
            elif "$" in a:
                st.add(("ddef", self.current_dir), OPEN)
        return st

    def _c_add_compile_definitions(self, args: List[Item], st: State) -> State:
        items, open_ = self._definition_items(args, True)
        for item in items:
            st.add(("ddef", self.current_dir), item)
        if open_:
            st.add(("ddef", self.current_dir), OPEN)
        return st

    def _c_add_compile_options(self, args: List[Item], st: State) -> State:
        for a in args:
            st.add(("dopt", self.current_dir), a if isinstance(a, str) else OPEN)
        return st

    def _target_items(self, args: List[Item], st: State, kind: str) -> State:
        if not args or not isinstance(args[0], str):
            st.flags["lost"] = True
            return st
        target = args[0]
        scope = "PRIVATE"
        for a in args[1:]:
            if a in ("PRIVATE", "PUBLIC", "INTERFACE"):
                scope = str(a)
                continue
            if a in ("BEFORE", "AFTER", "SYSTEM"):
                continue
            item = a if isinstance(a, str) else OPEN
            if kind == "def" and item.startswith("-D"):
                item = item[2:]
            if scope in ("PRIVATE", "PUBLIC"):
                st.add(("t" + kind, target), item)
            if scope in ("PUBLIC", "INTERFACE"):
                st.add(("ti" + kind, target), item)
        return st

    def _c_target_compile_definitions(self, args: List[Item], st: State) -> State:
        return self._target_items(args, st, "def")

    def _c_target_compile_options(self, args: List[Item], st: State) -> State:
        return self._target_items(args, st, "opt")

    def _c_target_link_libraries(self, args: List[Item], st: State) -> State:
        if not args or not isinstance(args[0], str):
            return st
        target = args[0]
        scope = "PUBLIC"
        for a in args[1:]:
            if a in (
                "PRIVATE",
                "PUBLIC",
                "INTERFACE",
                "LINK_PRIVATE",
                "LINK_PUBLIC",
                "LINK_INTERFACE_LIBRARIES",
            ):
                scope = {"LINK_PRIVATE": "PRIVATE", "LINK_PUBLIC": "PUBLIC"}.get(str(a), str(a))
                continue
            if not isinstance(a, str):
                continue
            if scope in ("PRIVATE", "PUBLIC"):
                st.add(("tlink", target), a)
            if scope in ("PUBLIC", "INTERFACE"):
                st.add(("tilink", target), a)
        return st

    def _c_set_source_files_properties(self, args: List[Item], st: State) -> State:
        if "PROPERTIES" not in args:
            raise Unknown
        k = args.index("PROPERTIES")
        files = []
        for a in args[:k]:
            if a in ("DIRECTORY", "TARGET_DIRECTORY"):
                break
            files.append(a)
        props = args[k + 1 :]
        for f in files:
            if not isinstance(f, str):
                continue
            path = self._path(f)
            for j in range(0, len(props) - 1, 2):
                self._source_property(path, props[j], props[j + 1], st, False)
        return st

    def _source_property(self, path: str, prop: Item, value: Item, st: State, append: bool) -> None:
        if prop in ("COMPILE_DEFINITIONS", "COMPILE_FLAGS", "COMPILE_OPTIONS", "LANGUAGE"):
            key = {"COMPILE_DEFINITIONS": "sdef", "LANGUAGE": "slang"}.get(str(prop), "sopt")
            if not isinstance(value, str):
                st.add((key, path), OPEN)
                return
            for item in split_list(value) if key != "sopt" else [value]:
                st.add((key, path), item[2:] if key == "sdef" and item.startswith("-D") else item)

    def _c_set_property(self, args: List[Item], st: State) -> State:
        if "PROPERTY" not in args or not args:
            raise Unknown
        k = args.index("PROPERTY")
        kind, names = args[0], args[1:k]
        append = "APPEND" in names or "APPEND_STRING" in names
        names = [n for n in names if n not in ("APPEND", "APPEND_STRING")]
        if k + 1 >= len(args):
            raise Unknown
        prop, values = args[k + 1], args[k + 2 :]
        value: Item = ";".join(str(v) for v in values) if all_known(values) else UNKNOWN_ONE
        if kind == "SOURCE":
            for n in names:
                if n in ("DIRECTORY", "TARGET_DIRECTORY"):
                    break
                if isinstance(n, str):
                    self._source_property(self._path(n), prop, value, st, append)
        elif kind == "TARGET" and prop in ("COMPILE_DEFINITIONS", "INTERFACE_COMPILE_DEFINITIONS"):
            for n in names:
                if isinstance(n, str) and isinstance(value, str):
                    key = ("tdef" if prop == "COMPILE_DEFINITIONS" else "tidef", n)
                    for item in split_list(value):
                        st.add(key, item)
        elif kind == "DIRECTORY" and prop == "COMPILE_DEFINITIONS" and not names:
            for item in split_list(value) if isinstance(value, str) else [OPEN]:
                st.add(("ddef", self.current_dir), item)
        return st

    def _c_set_target_properties(self, args: List[Item], st: State) -> State:
        if "PROPERTIES" not in args:
            raise Unknown
        k = args.index("PROPERTIES")
        props = args[k + 1 :]
        for target in args[:k]:
            for j in range(0, len(props) - 1, 2):
                if props[j] in ("COMPILE_DEFINITIONS", "INTERFACE_COMPILE_DEFINITIONS") and isinstance(
                    target, str
                ):
                    key = ("tdef" if props[j] == "COMPILE_DEFINITIONS" else "tidef", target)
                    value = props[j + 1]
                    for item in split_list(value) if isinstance(value, str) else [OPEN]:
                        st.add(key, item)
        return st

    def _c_get_property(self, args: List[Item], st: State) -> State:
        if args and isinstance(args[0], str):
            st.set(args[0], None)
        return st

    _c_get_target_property = _c_get_source_file_property = _c_get_directory_property = _c_get_property
    _c_find_program = _c_find_library = _c_find_path = _c_find_file = _c_get_property
    _c_separate_arguments = _c_get_cmake_property = _c_get_property
