"""flake8 adapter: ``flake8 --select ROC``.

A thin shim over the engine: it reuses the AST flake8 already parsed (no
second parse), yields every Python finding, and leaves selection and
``# noqa`` to flake8 itself.  A file too deeply nested to analyse gets one ``ROC000`` finding
instead of an exception (which would abort flake8's whole run).  The analysis settings
(predicates, skip decorators, macros) come from the config file ``rocm-lint check`` would read for
the same file (the nearest ``.rocm-lint.toml``, ``rocm-lint.toml`` or ``[tool.rocm-lint]`` of a
pyproject.toml above it, whatever directory flake8 runs from), extended by ``--rocm-predicates``,
``--cuda-predicates`` and ``--rocm-skip-decorators`` (``config.FLAKE8_OPTIONS``: ``rocm-lint check``
reads the same options from flake8's config file and adds them the same way); selection (``select``/``ignore``/``per-file-ignores``) is flake8's own.
"""

from __future__ import annotations

import ast
import os
import sys
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Tuple

from rocm_lint import __version__
from rocm_lint.workspace import Workspace


class RocmLintPlugin:
    name = "rocm-lint"
    version = __version__

    _extra: Dict[str, Tuple[str, ...]] = {}  # the FLAKE8_OPTIONS flake8 parsed: option -> names
    # config file (None: no file, the defaults) -> its settings, with the FLAKE8_OPTIONS added
    _configs: Dict[Optional[Path], object] = {}
    _reported: set = set()
    _sources: Dict[Path, Optional[Path]] = {}  # directory -> its config file (this run)
    # the caches of the analysis in this flake8 process (rocm_lint.workspace): flake8 makes a
    # plugin object per file, so the front end is the class; parse_options starts a run's
    _workspace: Workspace = Workspace()

    def __init__(self, tree: ast.AST, filename: str, lines: List[str]) -> None:
        self.tree = tree
        self.filename = filename
        self.lines = lines

    @classmethod
    def add_options(cls, option_manager) -> None:
        from rocm_lint.config import FLAKE8_OPTIONS

        for option, _, help_text in FLAKE8_OPTIONS:
            option_manager.add_option(
                f"--{option}", default="", parse_from_config=True, comma_separated_list=True, help=help_text
            )

    @classmethod
    def parse_options(cls, options) -> None:
        from rocm_lint.config import FLAKE8_OPTIONS

        cls._extra = {option: tuple(getattr(options, attr, None) or ()) for option, attr, _ in FLAKE8_OPTIONS}
        cls._configs = {}
        cls._sources = {}
        cls._workspace = Workspace()
        cls._active = cls._selected(options)

    # Whether flake8 reports any ROC code in this run.  flake8 runs every installed plugin on every
    # file and filters the results afterwards: without this a run that does not select ROC paid
    # for the analysis (+18% on torch/_inductor with --select E9).
    _active = True

    @staticmethod
    def _selected(options) -> bool:
        """Does flake8's own decision (select, extend-select, ignore, extend-ignore) report any of
        rocm-lint's codes?  When it cannot tell (another flake8), yes."""
        try:
            from flake8.style_guide import Decision, DecisionEngine

            engine = DecisionEngine(options)
            from rocm_lint.registry import all_codes  # the index: no rule family imported

            return any(engine.decision_for(code) == Decision.Selected for code in all_codes())
        except Exception:  # noqa: BLE001 - flake8 internals differ between versions: run
            return True

    @classmethod
    def config(cls, filename: str = "."):
        """The settings for ``filename``: those of its nearest config file, as the CLI reads them.
        A broken config file is said once on stderr and the defaults are used (flake8 goes on)."""
        from rocm_lint.config import Config, ConfigError, find_config, load_file, with_flake8_options

        directory = Path(
            os.path.dirname(os.path.abspath(filename)) if filename not in ("-", "stdin") else os.getcwd()
        )
        if directory in cls._sources:  # one search per directory, not per file
            source = cls._sources[directory]
        else:
            try:
                source = find_config(directory)
            except ConfigError as exc:
                source, problem = None, str(exc)
                cls._warn(problem)
            cls._sources[directory] = source
        if source not in cls._configs:
            cfg = Config()
            if source is not None:
                try:
                    cfg = load_file(source)
                except ConfigError as exc:
                    cls._warn(str(exc))
            cls._configs[source] = with_flake8_options(cfg, cls._extra)
        return cls._configs[source]

    @classmethod
    def _warn(cls, problem: str) -> None:
        if problem not in cls._reported:
            cls._reported.add(problem)
            sys.stderr.write(f"rocm-lint: {problem}; using the defaults\n")

    def run(self) -> Iterator[Tuple[int, int, str, type]]:
        if not self._active:
            return
        from rocm_lint.engine import analyse_python_tree, python_codes
        from rocm_lint.python.project import project_for
        from rocm_lint.lines import char_col

        text = "".join(self.lines)
        try:
            # the whole list first: an error mid-way must not leave half the file reported
            config = self.config(self.filename)
            findings = analyse_python_tree(
                self.filename, text, self.tree, config, python_codes(), project_for(self._workspace, config)
            )
        except RecursionError:
            # flake8 aborts its whole run on a plugin's exception: say this file was not analysed
            # (as the CLI does) and let flake8 go on with the others
            from rocm_lint.rules.meta import ROC000

            yield 1, 0, f"{ROC000.code} {ROC000.message()}", type(self)
            return
        for f in findings:
            # character columns, as the CLI and pycodestyle report them (ast's are UTF-8 bytes)
            line = self.lines[f.line - 1] if 0 < f.line <= len(self.lines) else ""
            yield f.line, char_col(line, f.col), f"{f.code} {f.message}", type(self)
