#!/bin/bash
# Run a whole grid from a login node: dask-jobqueue submits 16 one-core Slurm jobs as Dask
# workers; the scheduler lives in this process (use tmux/screen, it must stay alive).
#   pip install -e '.[dask]'
set -euo pipefail
export HYBRIDBN_CACHE_DIR="$HOME/hybridbn-cache"     # shared filesystem
python run.py grid docs/examples/grid-hpc.toml \
    --cluster slurm --workers 16 --cluster-cores 1 --cluster-memory 8GB \
    --walltime 04:00:00 --queue compute --account myproject
python run.py report output/grid-hpc-alpha/results.parquet
