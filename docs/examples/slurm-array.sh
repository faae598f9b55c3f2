#!/bin/bash
# One Slurm array task per grid job, no scheduler process needed.
#   n=$(python run.py grid docs/examples/grid-hpc.toml --list-tasks | head -1 | cut -d' ' -f1)
#   jid=$(sbatch --parsable --array=0-$((n - 1))%50 docs/examples/slurm-array.sh)
#   sbatch --dependency=afterany:$jid --wrap \
#       "python run.py grid docs/examples/grid-hpc.toml --collect --cache-dir $HOME/hybridbn-cache"
#SBATCH --job-name=hybridbn
#SBATCH --cpus-per-task=1
#SBATCH --mem=8G
#SBATCH --time=02:00:00
#SBATCH --output=logs/%x-%A_%a.out

set -euo pipefail
cd "$SLURM_SUBMIT_DIR"
source .venv/bin/activate
# the cache must be on a filesystem every node sees; writes are atomic, so tasks can share it
export HYBRIDBN_CACHE_DIR="${HYBRIDBN_CACHE_DIR:-$HOME/hybridbn-cache}"
export OMP_NUM_THREADS=1 NUMBA_NUM_THREADS=1 PYTHONHASHSEED=0
python run.py grid docs/examples/grid-hpc.toml --task "$SLURM_ARRAY_TASK_ID" --quiet
