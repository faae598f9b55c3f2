#!/usr/bin/env python3
"""Command line entry point: ``python run.py --help`` (the work is done in pipeline.apps.cli)."""

import sys

from pipeline.apps.cli import main

if __name__ == "__main__":
    sys.exit(main())
