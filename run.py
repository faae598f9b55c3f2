#!/usr/bin/env python3
"""Command line entry point: ``python run.py --help`` (the work is done in pipeline.cli)."""

import sys

from pipeline.cli import main

if __name__ == "__main__":
    sys.exit(main())
