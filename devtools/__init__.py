"""Tools for running the scheduler on a developer's machine, not deployed (see .funcignore).

`local_run` is what `make run` runs (Azurite + the local host), `devhost` is the local host
that serves the same `Runtime` as Azure Functions, `azurite` starts the storage emulator (the
test suite uses it too), `measure` reports the shape of `scheduler_lib`.
"""
