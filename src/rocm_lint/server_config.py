"""The language server's settings: the Config of each document and the client's options.

``ConfigCache`` finds the closest config file above a document (or the one the client names)
and keeps its parsed settings by modification time, one Config object per settings;
``config_setting`` and ``debounce_setting`` read the client's ``initializationOptions`` and
``workspace/didChangeConfiguration`` settings.  No pygls here: ``server`` uses it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Callable, Dict, Optional, Tuple

from rocm_lint.config import (
    CONFIG_NAMES,
    Config,
    ConfigError,
    check_codes,
    find_config,
    flake8_options,
    load_file,
    with_flake8_options,
)
from rocm_lint.registry import all_rules

# A change is checked once no other change of the document came for this long (milliseconds;
# the client's "debounce" setting).  Editors send bursts: auto-closed brackets, format-on-type,
# multi-cursor edits, undo groups and fast typing arrive a few milliseconds apart; changes that
# come while a check runs are queued and count as one burst too.  50 ms adds little to the
# answer a keystroke waits for and keeps a burst to one check of its last text.
DEFAULT_DEBOUNCE_MS = 50.0
MAX_DEBOUNCE_MS = 10_000.0


class ConfigCache:
    """The Config for each document: the closest config file (or the one the client names),
    loaded once per modification time.  A broken config is reported once and the defaults used."""

    def __init__(self) -> None:
        self._loaded: Dict[Path, Tuple[int, object]] = {}
        # The same settings, the same Config object from one check to the next: the project
        # model (facts of the modules a document imports) is kept per Config, and a new object
        # per keystroke rebuilt it every time (a workspace without a config file, or with
        # flake8 options).  Keyed by what the object is made of.
        self._made: Dict[tuple, Any] = {}
        self.reported: set = set()
        self.explicit: Optional[Path] = None  # the client's "config" setting

    def clear(self) -> None:
        self._loaded.clear()
        self._made.clear()

    def _stable(self, key: tuple, make: Callable[[], Any]) -> Any:
        config = self._made.get(key)
        if config is None:
            if len(self._made) > 64:
                self._made.clear()
            config = self._made[key] = make()
        return config

    def for_path(self, path: Optional[str], fallback_root: Optional[str]) -> Tuple[Config, Optional[str]]:
        """(config, error message or None) for a document at ``path``. The closest config file
        is looked up on every check (a few small reads), so one created or edited outside the
        editor counts from the next check on; its parsed settings are kept by modification time."""
        directory = Path(path).parent if path else Path(fallback_root or os.getcwd())
        config, problem = self._from_file(directory, fallback_root)
        # the rocm-lint options of flake8's config file, as `rocm-lint check` and flake8 add them
        values, source = flake8_options(directory)
        if not values:
            return config, problem
        key = ("flake8", id(config), source, tuple(sorted(values.items())))
        made = self._stable(key, lambda: (config, with_flake8_options(config, values, source)))
        if made[0] is not config:  # the base was loaded again since: make it anew
            self._made.pop(key, None)
            made = self._stable(key, lambda: (config, with_flake8_options(config, values, source)))
        return made[1], problem

    def _default(self, root: Optional[Path]) -> Config:
        return self._stable(("default", root), lambda: Config(root=root))

    def _from_file(self, directory: Path, fallback_root: Optional[str]) -> Tuple[Config, Optional[str]]:
        if self.explicit is not None:
            source: Optional[Path] = self.explicit
        else:
            try:
                source = find_config(directory)
            except ConfigError as exc:  # a config file that cannot be read (a FIFO, too large)
                return self._default(Path(fallback_root) if fallback_root else None), str(exc)
        if source is None:
            return self._default(Path(fallback_root) if fallback_root else None), None
        try:
            mtime = source.stat().st_mtime_ns
        except OSError as exc:
            return self._default(None), f"{source}: cannot read config: {(exc.strerror or str(exc)).lower()}"
        cached = self._loaded.get(source)
        if cached is None or cached[0] != mtime:
            try:
                value: object = load_file(source)
                check_codes(value, [r.code for r in all_rules()])  # type: ignore[arg-type]
            except ConfigError as exc:
                value = exc
            self._loaded[source] = cached = (mtime, value)
        value = cached[1]
        if isinstance(value, ConfigError):
            return self._default(source.parent), str(value)
        return value, None  # type: ignore[return-value]


def config_setting(options: object) -> Optional[str]:
    """The config path in the client's options: ``{"config": PATH}``, or the same under
    ``"settings"`` or ``"rocm-lint"`` (how VS Code-style clients nest a server's settings)."""
    if not isinstance(options, dict):
        return None
    for key in ("rocm-lint", "rocm_lint", "rocmLint", "settings"):
        nested = config_setting(options.get(key))
        if nested:
            return nested
    value = options.get("config") or options.get("configuration")
    return value if isinstance(value, str) and value else None


def debounce_setting(options: object) -> Optional[float]:
    """The client's ``{"debounce": MS}`` (nested as ``config_setting`` reads it), in milliseconds,
    clamped to 0..10,000; None when absent or not a number."""
    if not isinstance(options, dict):
        return None
    for key in ("rocm-lint", "rocm_lint", "rocmLint", "settings"):
        nested = debounce_setting(options.get(key))
        if nested is not None:
            return nested
    value = options.get("debounce")
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
        return None
    return min(max(float(value), 0.0), MAX_DEBOUNCE_MS)


def is_config_file(uri: str, explicit: Optional[Path]) -> bool:
    name = os.path.basename(uri)
    return name in CONFIG_NAMES or (explicit is not None and name == explicit.name)
