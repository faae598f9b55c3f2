#!/bin/bash
# Run a whole grid from a login node: dask-jobqueue submits 16 one-core Slurm jobs as Dask
# workers; the scheduler lives in this process (use tmux/screen, it must stay alive).
#   docs/examples/dask-jobqueue.sh          (needs pip install -e '.[dask]' in .venv)
set -euo pipefail
cd "$(dirname "$(realpath "$0")")/../.."  # the repository root: the paths below are relative to it
source .venv/bin/activate
python -c "import dask_jobqueue" 2>/dev/null || { echo "dask-jobqueue missing: pip install -e '.[dask]'" >&2; exit 2; }
export HYBRIDBN_CACHE_DIR="${HYBRIDBN_CACHE_DIR:-$HOME/hybridbn-cache}"     # shared filesystem
grid=docs/examples/grid-hpc.toml   # name = "hpc-alpha": results in output/grid-hpc-alpha/
status=0  # a failed or missing job exits 1: the report of the others is still written
python run.py grid "$grid" \
    --cluster slurm --workers 16 --cluster-cores 1 --cluster-memory 8GB \
    --walltime 04:00:00 --queue compute --account myproject || status=$?
python run.py report output/grid-hpc-alpha/results.parquet
exit "$status"
