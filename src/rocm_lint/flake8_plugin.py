"""flake8 adapter: ``flake8 --select ROC``.

A thin shim over the engine: it reuses the AST flake8 already parsed (no
second parse), yields every Python finding, and leaves selection and
``# noqa`` to flake8 itself.  A file too deeply nested to analyse gets one ``ROC000`` finding
instead of an exception (which would abort flake8's whole run).  Gate settings come from ``[tool.rocm-lint]`` in
the nearest pyproject.toml, extended by ``--rocm-predicates``.
"""

from __future__ import annotations

import ast
from dataclasses import replace
from typing import Iterator, List, Tuple

from rocm_lint import __version__



class RocmLintPlugin:
    name = "rocm-lint"
    version = __version__

    _config = None
    _extra_predicates: Tuple[str, ...] = ()

    def __init__(self, tree: ast.AST, filename: str, lines: List[str]) -> None:
        self.tree = tree
        self.filename = filename
        self.lines = lines

    @classmethod
    def add_options(cls, option_manager) -> None:
        option_manager.add_option(
            "--rocm-predicates", default="", parse_from_config=True, comma_separated_list=True,
            help="extra names that are true exactly on ROCm (e.g. MY_IS_AMD, platform.is_amd)",
        )

    @classmethod
    def parse_options(cls, options) -> None:
        cls._extra_predicates = tuple(getattr(options, "rocm_predicates", None) or ())
        cls._config = None

    @classmethod
    def config(cls):
        if cls._config is None:
            from rocm_lint.config import Config, ConfigError, discover

            try:
                cfg = discover(["."])
            except ConfigError:
                cfg = Config()
            cls._config = replace(cfg, rocm_predicates=cfg.rocm_predicates + cls._extra_predicates)
        return cls._config

    def run(self) -> Iterator[Tuple[int, int, str, type]]:
        from rocm_lint.engine import analyse_python_tree, python_codes
        from rocm_lint.lines import char_col

        text = "".join(self.lines)
        try:
            # the whole list first: an error mid-way must not leave half the file reported
            findings = analyse_python_tree(self.filename, text, self.tree, self.config(), python_codes())
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
