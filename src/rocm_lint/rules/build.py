"""ROC5: build configuration (setup.py and other Python build code)."""

from __future__ import annotations
