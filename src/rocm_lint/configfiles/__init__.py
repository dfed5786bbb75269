"""Readers of the small text files rocm-lint checks besides Python and C++: shell scripts,
Dockerfiles, YAML (CI, Kubernetes, docker-compose), .env files and CMake."""
