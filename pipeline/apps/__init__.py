"""The applications built on the run core: command line, API, bootstrap, selection, grids,
reports, pictures and output folders (see :mod:`pipeline`)."""
