"""ROC8: hardware-dependent choices (fp8 formats, warp width) made statically."""

from __future__ import annotations
