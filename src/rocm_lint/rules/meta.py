"""ROC000: rocm-lint about itself (a file it could not analyse under flake8)."""

from __future__ import annotations

from rocm_lint.finding import Applicability
from rocm_lint.rule import FixAvailability, Rule

# No checker: the flake8 plugin reports it when a file is nested too deeply to analyse (flake8
# goes on with the other files); the CLI names such a file on its own error line instead.
ROC000 = Rule(
    "ROC000",
    "file-not-analysed",
    "rocm-lint could not analyse this file (nested too deeply): none of its hazards were checked",
    languages=("flake8",),
    messages={"default": "rocm-lint could not analyse this file: nesting too deep"},
)

# No checker: the engine judges the suppression comments of each file after its rules ran
# (rocm_lint.unused_noqa). Off by default: only `select`/`extend-select` naming it turn it on.
ROC001 = Rule(
    "ROC001",
    "unused-suppression",
    "a suppression comment names a rocm-lint code that suppresses no finding on its line",
    languages=("suppressions",),
    fix=Applicability.SAFE,
    fix_availability=FixAvailability.ALWAYS,
)
