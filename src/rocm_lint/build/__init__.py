"""The build-file reader: what a project's ``CMakeLists.txt`` and ``setup.py`` say per platform
(which directories and sources each build compiles, which macros it defines, which options are
the project's own platform switches).  ``rocm_lint.build.context`` is the one entry point the C++
``#if`` model and the config-file rules read."""
