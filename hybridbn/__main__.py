"""``python -m hybridbn ...``: the same command line as ``python run.py ...``."""

import sys

from pipeline.apps.cli import main

if __name__ == "__main__":
    sys.exit(main())
