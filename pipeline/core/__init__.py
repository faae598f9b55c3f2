"""The run core: a run's configuration and its cached stages (see :mod:`pipeline`)."""
