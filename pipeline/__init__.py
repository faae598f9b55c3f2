"""The run layer, on two floors.

* :mod:`pipeline.core`: one run's configuration and its stages: the declared options and their
  validation, the stages and their cache, atomic files, the budget, incumbents, the numba
  kernels' warm-up, expert knowledge, split scoring, executors and the pre-flight checks;
* :mod:`pipeline.apps`: what is built on it: the command line, ``learn`` and its result, the
  bootstrap, the selection by cross-validation, grids, reports, pictures and output folders.

No module of ``core`` imports one of ``apps`` (``tests/test_repository.py`` checks it).
"""
