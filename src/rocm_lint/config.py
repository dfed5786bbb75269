"""Configuration: ``.rocm-lint.toml``, ``rocm-lint.toml`` (top-level keys) or ``[tool.rocm-lint]``
in pyproject.toml, the closest directory's file winning (ruff's order: ``.rocm-lint.toml`` before
``rocm-lint.toml`` before ``pyproject.toml`` in one directory), overridden by the command line.

Every config file is read through :func:`rocm_lint.discovery.read_bounded`: a huge file, a FIFO
or a device named ``pyproject.toml`` is one clear error, never a hang."""

from __future__ import annotations

import fnmatch
import os
import re
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Dict, FrozenSet, Iterable, List, Mapping, Optional, Sequence, Tuple

from rocm_lint.lazy import LazyPattern


# Predicates that are true exactly on ROCm (matched on the last dotted component,
# or on the whole dotted tail when the entry has a dot), used bare or called.
DEFAULT_ROCM_PREDICATES: Tuple[str, ...] = (
    "is_rocm",
    "is_hip",
    "IS_ROCM",
    "IS_HIP",
    "IS_HIP_EXTENSION",
    "HIP_ENVIRONMENT",
    "IS_ROCM_SYSTEM",
    "TEST_WITH_ROCM",
    "is_rocm_pytorch",
    "is_rocm_platform",
    "USE_ROCM",
    "ROCM_HOME",
    "current_platform.is_rocm",
)
# Predicates that are true exactly on NVIDIA CUDA.  Deliberately narrow:
# ``tensor.is_cuda`` and ``torch.cuda.is_available()`` are True on ROCm too.
DEFAULT_CUDA_PREDICATES: Tuple[str, ...] = (
    "current_platform.is_cuda",
    # vLLM: `is_nvidia = device_platform == "nvidia"` (fla ops), `def _is_cuda()` (setup.py)
    "is_nvidia",
    "_is_cuda",
    # torchao.utils: each is `torch.cuda.is_available() and torch.version.cuda and capability >= ...`
    "is_sm_at_least_89",
    "is_sm_at_least_90",
    "is_sm_at_least_100",
    # transformers: False whenever torch.version.cuda is None
    "is_torch_tf32_available",
)
# Test decorators that skip the decorated test on ROCm.
DEFAULT_ROCM_SKIP_DECORATORS: Tuple[str, ...] = ("skipIfRocm", "skip_if_rocm", "skipIfHip")

DEFAULT_EXCLUDE: Tuple[str, ...] = (
    ".bzr",
    ".direnv",
    ".eggs",
    ".git",
    ".git-rewrite",
    ".hg",
    ".mypy_cache",
    ".nox",
    ".pants.d",
    ".pytype",
    ".ruff_cache",
    ".svn",
    ".tox",
    ".venv",
    "__pypackages__",
    "_build",
    "buck-out",
    "dist",
    "node_modules",
    "site-packages",
    "venv",
    "__pycache__",
)

_CODE_RE = LazyPattern(r"^ROC[0-9]{0,3}$")  # compiled when a selector is read


class ConfigError(Exception):
    """A configuration problem: reported on one line, exit code 2."""


@dataclass(frozen=True)
class Config:
    select: Tuple[str, ...] = ("ROC",)
    extend_select: Tuple[str, ...] = ()
    ignore: Tuple[str, ...] = ()
    per_file_ignores: Tuple[Tuple[str, Tuple[str, ...]], ...] = ()
    exclude: Tuple[str, ...] = DEFAULT_EXCLUDE
    extend_exclude: Tuple[str, ...] = ()
    respect_gitignore: bool = True
    # Apply exclude/extend-exclude to files named explicitly too (ruff's force-exclude): what
    # pre-commit needs, since it names every file.
    force_exclude: bool = False
    # C++ sources the project's ROCm build never compiles (build.context): silent by default;
    # reported, marked as NVIDIA-only sources, when a team ports the whole codebase
    report_nvidia_only_sources: bool = False
    rocm_predicates: Tuple[str, ...] = DEFAULT_ROCM_PREDICATES
    cuda_predicates: Tuple[str, ...] = DEFAULT_CUDA_PREDICATES
    rocm_skip_decorators: Tuple[str, ...] = DEFAULT_ROCM_SKIP_DECORATORS
    # C++: project macros defined only in ROCm builds / only in NVIDIA builds, on top of the
    # built-in ones (USE_ROCM, __HIP_PLATFORM_AMD__ ... / __CUDA_ARCH__, CUDA_VERSION ...).
    rocm_macros: Tuple[str, ...] = ()
    cuda_macros: Tuple[str, ...] = ()
    root: Optional[Path] = None  # the directory that holds the config file
    source: Optional[Path] = None
    # the keys the config file set (``--show-settings`` says where each value came from)
    from_file: Tuple[str, ...] = ()
    # the keys flake8's config file added names to (``with_flake8_options``), and that file
    from_flake8: Tuple[str, ...] = ()
    flake8_source: Optional[Path] = None

    def is_enabled(self, code: str) -> bool:
        """flake8's decision: the longest matching selector wins, ignore wins ties."""
        sel = max((len(s) for s in self.select + self.extend_select if code.startswith(s)), default=-1)
        ign = max((len(s) for s in self.ignore if code.startswith(s)), default=-1)
        return sel >= 0 and sel > ign

    def enabled_codes(self, codes: Sequence[str]) -> FrozenSet[str]:
        return frozenset(c for c in codes if self.is_enabled(c))

    def ignored_for(self, path: str) -> Tuple[str, ...]:
        """Codes (prefixes) that per-file-ignores switches off for ``path``."""
        if not self.per_file_ignores:
            return ()
        rel = self._relative(path)
        out: List[str] = []
        for pattern, codes in self.per_file_ignores:
            if _glob_match(rel, pattern):
                out.extend(codes)
        return tuple(out)

    def _relative(self, path: str) -> str:
        p = Path(path)
        if self.root is not None:
            try:
                return p.resolve().relative_to(self.root.resolve()).as_posix()
            except ValueError:
                pass
        return p.as_posix()


def _glob_match(rel: str, pattern: str) -> bool:
    # Like ruff: a pattern without a slash matches the file name anywhere.
    if "/" not in pattern:
        return fnmatch.fnmatch(Path(rel).name, pattern) or fnmatch.fnmatch(rel, pattern)
    return fnmatch.fnmatch(rel, pattern[2:] if pattern.startswith("./") else pattern)


def parse_codes(value: object, key: str) -> Tuple[str, ...]:
    if isinstance(value, str):
        value = [v for v in re.split(r"[,\s]+", value) if v]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"'{key}' must be a list of rule codes, got {value!r}")
    out = tuple(v.strip().upper() for v in value)
    for code in out:
        if not _CODE_RE.match(code):
            raise ConfigError(f"'{key}': {code!r} is not a rocm-lint code or prefix (ROC, ROC6, ROC601)")
    return out


def _strings(value: object, key: str) -> Tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"'{key}' must be a list of strings, got {value!r}")
    return tuple(value)


_KEYS = {
    "select",
    "extend-select",
    "ignore",
    "per-file-ignores",
    "exclude",
    "extend-exclude",
    "respect-gitignore",
    "force-exclude",
    "report-nvidia-only-sources",
    "rocm-predicates",
    "extend-rocm-predicates",
    "cuda-predicates",
    "extend-cuda-predicates",
    "rocm-skip-decorators",
    "rocm-macros",
    "cuda-macros",
}


def from_table(table: dict, base: Config = Config(), source: Optional[Path] = None) -> Config:
    """Build a Config from a ``[tool.rocm-lint]`` table (keys in kebab-case)."""
    unknown = sorted(set(table) - _KEYS)
    if unknown:
        raise ConfigError(f"unknown option(s) {', '.join(unknown)}; known: {', '.join(sorted(_KEYS))}")
    cfg = base
    if "select" in table:
        cfg = replace(cfg, select=parse_codes(table["select"], "select"))
    if "extend-select" in table:
        cfg = replace(cfg, extend_select=parse_codes(table["extend-select"], "extend-select"))
    if "ignore" in table:
        cfg = replace(cfg, ignore=parse_codes(table["ignore"], "ignore"))
    if "per-file-ignores" in table:
        pfi = table["per-file-ignores"]
        if not isinstance(pfi, dict):
            raise ConfigError("'per-file-ignores' must be a table of glob = [codes]")
        cfg = replace(
            cfg,
            per_file_ignores=tuple((str(k), parse_codes(v, f"per-file-ignores.{k}")) for k, v in pfi.items()),
        )
    if "exclude" in table:
        cfg = replace(cfg, exclude=_strings(table["exclude"], "exclude"))
    if "extend-exclude" in table:
        cfg = replace(cfg, extend_exclude=_strings(table["extend-exclude"], "extend-exclude"))
    for key, attr in (
        ("respect-gitignore", "respect_gitignore"),
        ("force-exclude", "force_exclude"),
        ("report-nvidia-only-sources", "report_nvidia_only_sources"),
    ):
        if key in table:
            if not isinstance(table[key], bool):
                raise ConfigError(f"'{key}' must be true or false")
            cfg = replace(cfg, **{attr: table[key]})
    for key, attr in (
        ("rocm-predicates", "rocm_predicates"),
        ("cuda-predicates", "cuda_predicates"),
        ("rocm-skip-decorators", "rocm_skip_decorators"),
        ("rocm-macros", "rocm_macros"),
        ("cuda-macros", "cuda_macros"),
    ):
        if key in table:
            cfg = replace(cfg, **{attr: _strings(table[key], key)})
    for key, attr in (
        ("extend-rocm-predicates", "rocm_predicates"),
        ("extend-cuda-predicates", "cuda_predicates"),
    ):
        if key in table:
            cfg = replace(cfg, **{attr: getattr(cfg, attr) + _strings(table[key], key)})
    if source is not None:
        cfg = replace(cfg, root=source.parent, source=source, from_file=tuple(sorted(table)))
    return cfg


_ATTRS = (
    ("select", "select"),
    ("extend-select", "extend_select"),
    ("ignore", "ignore"),
    ("per-file-ignores", "per_file_ignores"),
    ("exclude", "exclude"),
    ("extend-exclude", "extend_exclude"),
    ("respect-gitignore", "respect_gitignore"),
    ("force-exclude", "force_exclude"),
    ("report-nvidia-only-sources", "report_nvidia_only_sources"),
    ("rocm-predicates", "rocm_predicates"),
    ("cuda-predicates", "cuda_predicates"),
    ("rocm-skip-decorators", "rocm_skip_decorators"),
    ("rocm-macros", "rocm_macros"),
    ("cuda-macros", "cuda_macros"),
)


def setting_values(config: Config) -> List[Tuple[str, object]]:
    """(key, value) of every setting in effect, as the config file spells them (lists and
    tables as JSON would show them); ``extend-*-predicates`` are folded into their list."""
    out: List[Tuple[str, object]] = []
    for key, attr in _ATTRS:
        value = getattr(config, attr)
        if key == "per-file-ignores":
            value = {glob: list(codes) for glob, codes in value}
        elif isinstance(value, tuple):
            value = list(value)
        out.append((key, value))
    return out


# -- codes that select no rule ------------------------------------------------------------------
def check_codes(config: Config, known: Iterable[str]) -> None:
    """A ConfigError naming the file, the key and the code when a selector the config file set
    (``select``, ``extend-select``, ``ignore``, ``per-file-ignores``) names no rule of ``known``
    (the registry's codes, which the caller passes: settings sit below the registry): like ruff,
    a typo is an error, never a silent "All checks passed"."""
    known = tuple(known)
    keyed = [("select", config.select), ("extend-select", config.extend_select), ("ignore", config.ignore)]
    keyed += [(f"per-file-ignores.{glob}", codes) for glob, codes in config.per_file_ignores]
    for key, codes in keyed:
        if key.split(".", 1)[0] not in config.from_file:
            continue  # a default, or the command line's (checked where it is parsed)
        unknown = [c for c in codes if not any(k.startswith(c) for k in known)]
        if unknown:
            where = f"{config.source}: " if config.source else ""
            raise ConfigError(
                f"{where}'{key}': {', '.join(unknown)} selects no rule (`rocm-lint rules` lists them)"
            )


# -- flake8's config file -------------------------------------------------------------------------
# The settings the flake8 plugin registers as flake8 options (``--rocm-predicates`` ...), which a
# project may set in the ``[flake8]`` section of ``setup.cfg``, ``tox.ini`` or ``.flake8``: the
# plugin gets them from flake8's option parser, ``rocm-lint check`` and the language server from
# :func:`flake8_options`; both add them with :func:`with_flake8_options`.  (option, Config
# attribute, help)
FLAKE8_OPTIONS: Tuple[Tuple[str, str, str], ...] = (
    (
        "rocm-predicates",
        "rocm_predicates",
        "extra names that are true exactly on ROCm (e.g. MY_IS_AMD, platform.is_amd)",
    ),
    ("cuda-predicates", "cuda_predicates", "extra names that are true exactly on NVIDIA CUDA"),
    ("rocm-skip-decorators", "rocm_skip_decorators", "extra test decorators that skip a test on ROCm"),
)
FLAKE8_FILES: Tuple[str, ...] = ("setup.cfg", "tox.ini", ".flake8")  # flake8's order in one directory


def with_flake8_options(
    config: Config, values: Mapping[str, Sequence[str]], source: Optional[Path] = None
) -> Config:
    """``config`` with the flake8 options' names added to their lists (``values``: option name,
    dashes or underscores, -> names; ``source``: the flake8 config file they came from)."""
    for option, attr, _ in FLAKE8_OPTIONS:
        extra = values.get(option) or values.get(option.replace("-", "_")) or ()
        current = getattr(config, attr)
        added = tuple(n for n in dict.fromkeys(extra) if n not in current)
        if added:
            config = replace(
                config,
                **{attr: current + added},
                from_flake8=config.from_flake8 + (option,),
                flake8_source=source,
            )
    return config


def find_flake8_config(start: Path) -> Optional[Path]:
    """flake8's own search: from ``start`` upwards (stopping below the home directory), the first
    ``setup.cfg``, ``tox.ini`` or ``.flake8`` with a ``[flake8]`` section; one that cannot be read
    or parsed is passed over, as flake8 does."""
    return _find_flake8(start)[0]


def _find_flake8(start: Path) -> Tuple[Optional[Path], Optional[Mapping[str, str]]]:
    """(:func:`find_flake8_config`'s file, its ``[flake8]`` section): each file parsed once."""
    directory = Path(start).resolve()
    home = Path(os.path.expanduser("~")).resolve()
    while True:
        for name in FLAKE8_FILES:
            candidate = directory / name
            if os.path.isfile(candidate):
                section = _flake8_section(candidate)
                if section is not None:
                    return candidate, section
        parent = directory.parent
        if parent == directory or parent == home:
            return None, None
        directory = parent


def _flake8_section(path: Path) -> Optional[Mapping[str, str]]:
    try:
        text = _read_config(path)
    except ConfigError:
        return None
    if "[flake8]" not in text:  # a section header is its whole (stripped) line: no INI parse needed
        return None
    import configparser  # only where a flake8 section exists (start-up of a one-file check)

    try:
        parser = configparser.RawConfigParser()
        parser.read_string(text)
    except (configparser.Error, ValueError):
        return None
    return dict(parser["flake8"]) if parser.has_section("flake8") else None


def flake8_options(start: Path) -> Tuple[Dict[str, Tuple[str, ...]], Optional[Path]]:
    """(the rocm-lint options (:data:`FLAKE8_OPTIONS`) that flake8's config file for ``start``
    sets, split as flake8 splits a comma-separated list (commas and whitespace); that file)."""
    found, section = _find_flake8(start)
    if not section:
        return {}, None
    out: Dict[str, Tuple[str, ...]] = {}
    for option, _, _ in FLAKE8_OPTIONS:
        for spelling in (option, option.replace("-", "_")):
            if spelling in section:
                out[option] = out.get(option, ()) + tuple(
                    v for v in re.split(r"[,\s]+", section[spelling]) if v
                )
    return out, found


# Config file names, in the order one directory's files are tried (ruff's: the dedicated files
# before pyproject.toml).  The dedicated files hold the settings as top-level keys.
CONFIG_NAMES: Tuple[str, ...] = (".rocm-lint.toml", "rocm-lint.toml", "pyproject.toml")
MAX_CONFIG_BYTES = 4 << 20


def _read_config(path: Path) -> str:
    """The text of a config file, read bounded (``read_bounded``), or a ConfigError saying why not."""
    from rocm_lint.discovery import read_bounded

    try:
        data = read_bounded(str(path), MAX_CONFIG_BYTES)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read config: {(exc.strerror or str(exc)).lower()}") from None
    if isinstance(data, str):
        raise ConfigError(f"{path}: cannot read config: {data.replace('; skipped', '')}")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: cannot read config: not UTF-8 (byte {exc.start})") from None


def _toml():
    """The TOML reader, imported only where a config file is read (it and its ``datetime`` are
    a tenth of a one-file check's imports)."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on 3.9/3.10 only
        import tomli as tomllib
    return tomllib


def load_file(path: Path) -> Config:
    """Read the settings of a config file: ``[tool.rocm-lint]`` of a pyproject.toml, the top-level
    keys of ``rocm-lint.toml``/``.rocm-lint.toml``, either form from any other TOML file
    (``--config``)."""
    path = Path(path)
    text = _read_config(path)
    tomllib = _toml()
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None
    except RecursionError:  # the reader recurses per nested array or inline table
        raise ConfigError(f"{path}: invalid TOML: nested too deeply to read") from None
    if path.name == "pyproject.toml":
        table = data.get("tool", {}).get("rocm-lint", {})
    elif path.name in CONFIG_NAMES:
        table = data
    else:
        table = data.get("tool", {}).get("rocm-lint", data)
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [tool.rocm-lint] must be a table")
    try:
        return from_table(table, source=path)
    except ConfigError as exc:
        raise ConfigError(f"{path}: {exc}") from None


_TOOL_TABLE = LazyPattern(r"^[^\S\n]*\[tool\.rocm-lint", re.M)


def find_config(start: Path) -> Optional[Path]:
    """The closest config file from ``start`` upwards: ``.rocm-lint.toml``, ``rocm-lint.toml``, or a
    pyproject.toml with a ``[tool.rocm-lint]`` table, in that order within one directory.  A
    candidate that cannot be read (too large, a FIFO ...) is a ConfigError, not a silent skip."""
    start = Path(start).resolve()
    for directory in [start, *start.parents]:
        for name in CONFIG_NAMES:
            candidate = directory / name
            if not os.path.lexists(candidate) or candidate.is_dir():
                continue
            if name != "pyproject.toml":
                _read_config(candidate)  # unreadable: say so here, once
                return candidate
            if _TOOL_TABLE.search(_read_config_lenient(candidate)):
                return candidate
    return None


def _read_config_lenient(path: Path) -> str:
    """A pyproject.toml's text for the ``[tool.rocm-lint]`` search (bytes that are not UTF-8 do
    not hide the table; ``load_file`` then says what is wrong)."""
    from rocm_lint.discovery import read_bounded

    try:
        data = read_bounded(str(path), MAX_CONFIG_BYTES)
    except OSError:
        return ""  # unreadable (permissions): not ours to judge, as before
    if isinstance(data, str):
        raise ConfigError(f"{path}: cannot read config: {data.replace('; skipped', '')}")
    return data.decode("utf-8", errors="replace")


def discover(paths: Sequence[str], explicit: Optional[str] = None) -> Config:
    """The settings for a run on ``paths``: ``explicit`` (``--config``) or the closest config file
    of the first path (the defaults without one), plus the rocm-lint options of flake8's config
    file (:func:`flake8_options`), as the flake8 plugin adds them."""
    anchor = Path(paths[0]) if paths else Path.cwd()
    if anchor.is_file() or not anchor.exists():
        anchor = anchor.parent if str(anchor.parent) else Path.cwd()
    anchor = anchor if str(anchor) else Path.cwd()
    if explicit:
        config = load_file(Path(explicit))
    else:
        found = find_config(anchor)
        config = load_file(found) if found else Config()
    return with_flake8_options(config, *flake8_options(anchor))
