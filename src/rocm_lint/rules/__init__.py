"""Rule families. Importing this package registers every rule and checker.

One module per family (DESIGN.md's catalogue): adding a rule means one entry
here or in its family module, one page in ``rocm_lint/docs/`` and one fixture.
"""

from rocm_lint.rules import (allocator, backends, build, cuda_cpp, hardware, host, inductor,  # noqa: F401
                             packages, warp)
