#!/bin/bash
# One Slurm array task per grid job, no scheduler process needed. Submit it with
# docs/examples/submit-slurm-array.sh GRID, which creates the log folder, submits the array and the
# job that collects it; resubmit the task ids that --collect lists with
#   sbatch --array=IDS --output='logs/%x-%A_%a.out' docs/examples/slurm-array.sh GRID
# (from the repository root; submitted without --output, Slurm writes slurm-%A_%a.out here).
#SBATCH --job-name=hybridbn
#SBATCH --cpus-per-task=1
#SBATCH --mem=8G
#SBATCH --time=02:00:00

set -euo pipefail
cd "$SLURM_SUBMIT_DIR"
grid=${1:-docs/examples/grid-hpc.toml}
source .venv/bin/activate
# the cache must be on a filesystem every node sees; writes are atomic, so tasks can share it
export HYBRIDBN_CACHE_DIR="${HYBRIDBN_CACHE_DIR:-$HOME/hybridbn-cache}"
export OMP_NUM_THREADS=1 NUMBA_NUM_THREADS=1 PYTHONHASHSEED=0
# the log gets the job's line, its status and the grid's progress (jobs done, failed, not run)
python run.py grid "$grid" --task "$SLURM_ARRAY_TASK_ID"
