"""Rule families: one module per family (ROC1 ``backends``, ROC2 ``inductor`` ...).

Each module defines its rules as module-level :class:`rocm_lint.rule.Rule` objects with their
checkers attached; :mod:`rocm_lint.registry` imports every module of this package and collects
them.  Adding a rule touches its family module, its page (``rocm_lint/docs/ROCxxx.md``) and its
fixtures, nothing else: ``python scripts/new_rule.py`` creates all three (docs/architecture.md).
"""
