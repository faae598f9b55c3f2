#!/bin/bash
# Run a grid as a Slurm job array: one array task per job (docs/examples/slurm-array.sh), then one
# job that collects the results table when the array has ended, whatever its tasks' outcome.
#   docs/examples/submit-slurm-array.sh [GRID] [MAX_RUNNING]     (default docs/examples/grid-hpc.toml, 50)
# Logs go to $HYBRIDBN_LOGS (default logs/ in the repository), created here: Slurm does not create
# the folder of --output, and a task whose log cannot be opened fails without a word.
set -euo pipefail
grid=$(realpath "${1:-docs/examples/grid-hpc.toml}")
max_running=${2:-50}
cd "$(dirname "$(realpath "$0")")/../.."  # the repository root: the tasks start where they are submitted
[[ -f $grid ]] || { echo "grid file not found: $grid" >&2; exit 2; }
[[ -f .venv/bin/activate ]] || { echo "no .venv in $PWD: python -m venv .venv && .venv/bin/pip install -e ." >&2; exit 2; }
logs=$(realpath -m "${HYBRIDBN_LOGS:-logs}")
mkdir -p "$logs"
export HYBRIDBN_CACHE_DIR="${HYBRIDBN_CACHE_DIR:-$HOME/hybridbn-cache}"  # every node must see it; sbatch passes it on
n=$(.venv/bin/python run.py grid "$grid" --list-tasks | head -1 | cut -d' ' -f1)
jid=$(sbatch --parsable --array="0-$((n - 1))%$max_running" --output="$logs/%x-%A_%a.out" \
    docs/examples/slurm-array.sh "$grid")
collect=$(sbatch --parsable --dependency="afterany:$jid" --job-name=hybridbn-collect \
    --output="$logs/%x-%j.out" --wrap ". .venv/bin/activate && python run.py grid '$grid' --collect")
echo "array job $jid ($n tasks), collected by job $collect; logs in $logs"
