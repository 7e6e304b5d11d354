#!/bin/bash
# Issue 35's GPU measurement in one script, for a machine with an NVIDIA GPU
# (nvcc, gcc, python3 with numpy; torch for the cuBLAS reference). Run from
# the repository root:
#
#   scripts/gpu/measure.sh [PART]     PART 1 (about 7 minutes on an H200):
#                                     cuBLAS, ppcg's units of every kernel,
#                                     gemm's tile and thread-tile sweeps at
#                                     LARGE and EXTRALARGE, short campaigns
#                                     on 2mm and 3mm;
#                                     PART 2 (about 8 minutes): short
#                                     campaigns on symm, covariance, lu,
#                                     syrk, jacobi-2d, heat-3d, adi
#
# It needs a polytune binary (POLYTUNE, default target/release/polytune) and,
# when that binary was built elsewhere, its solver libraries (POLYTUNE_LIBS: a
# .tar.xz of the shared libraries `ldd` lists for it that the machine lacks,
# CBC's and its BLAS). ppcg's units come from scripts/ppcg (PPCG_OUT, default
# target/ppcg, generated and built beforehand; see scripts/ppcg/README.md).
# Results go to OUT (default /tmp/polytune-gpu-out): logPART.txt, gpuPART.db,
# ppcg_results.txt. Each campaign's log line of a GPU point gives its region
# time and its kernels' time; the store keeps region times. Every campaign
# has a wall-time budget, so that the whole part fits one call; the budget
# is checked between batches, and a campaign's first batch (the original,
# the CPU references and the first GPU points) took 35-70 s at LARGE on an
# H200 (2026-11-27), so each gets 90 s.
set -u
PART=${1:-1}
OUT=${OUT:-/tmp/polytune-gpu-out}
mkdir -p "$OUT"
HERE=$(cd "$(dirname "$0")" && pwd)
P=${POLYTUNE:-$PWD/target/release/polytune}
DB="$OUT/gpu$PART.db"
export POLYTUNE_NVCC=${POLYTUNE_NVCC:-$(command -v nvcc)}
if [ -n "${POLYTUNE_LIBS:-}" ]; then
  mkdir -p /tmp/polytune-lib && tar -C /tmp/polytune-lib -xJf "$POLYTUNE_LIBS"
  export LD_LIBRARY_PATH="/tmp/polytune-lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
log() { echo "== $(date +%T) $*"; }
# A campaign of GPU points on FILE at DATASET within BUDGET seconds: every
# combination of TILES, THREAD_TILES and SHARED (comma-separated lists), the
# scheduler's knobs at their defaults, at most EVALS evaluations. The
# references (original, isl and ours on the CPU, isl's GPU schedule) come
# with it; a point that runs past 3 times the best so far is measured once
# (racing).
campaign() {
  local file=$1 dataset=$2 budget=$3 tiles=$4 thread_tiles=$5 shared=$6 evals=$7 runs=${8:-3}
  log "campaign $file $dataset: tiles $tiles, thread tiles $thread_tiles, shared $shared"
  timeout $((budget + 20)) "$P" tune "$file" --db "$DB" --machine configs/machines/gpu.toml \
    --dataset "$dataset" --budget "${budget}s" \
    --set target=gpu --set hlim=off --set spatial=grouped --set posttile_reorder=pluto \
    --set consecutivity=none --set wavefront=none --set feautrier=all --set gpu_block=1024 \
    --set "gpu_thread_tile=$thread_tiles" --set "gpu_shared=$shared" --tiles "$tiles" \
    --strategy exhaustive --evals "$evals" --runs "$runs" --on-noise warn 2>&1 |
    grep --line-buffered -v "^polytune: warning"
}
# The short campaign of the table in docs/performance.md, at tile 32: the
# mapping without shared memory (gpu_shared=off), the default, and 4 x 4
# thread tiles with and without shared memory (the original fusion's four
# points and the four references).
short() { campaign "$1" LARGE "$2" 32 1,4 on,off 8 "${3:-3}"; }
{
  log machine
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
  nvcc --version | tail -1
  gcc --version | head -1
  nproc
  if [ "$PART" = 1 ]; then
    log cublas
    timeout 90 python3 "$HERE/cublas.py"
    if [ -d "${PPCG_OUT:-target/ppcg}" ]; then
      log ppcg
      RESULTS=$OUT/ppcg_results.txt timeout 150 bash scripts/ppcg/run.sh
    fi
    # Tile shapes x thread tiles, the original fusion first (15 points).
    campaign polybench/linear-algebra/gemm.c LARGE 70 32x32x16,64x32x16,64x64x16,128x64x8,128x128x8 2,4,8 on 19
    campaign polybench/linear-algebra/gemm.c EXTRALARGE 90 32x32x16,64x32x16,64x64x16 2,4 on 10 2
    short polybench/linear-algebra/2mm.c 70
    short polybench/linear-algebra/3mm.c 70
  else
    short polybench/linear-algebra/symm.c 70
    short polybench/datamining/covariance.c 70 2
    short polybench/linear-algebra/lu.c 70 2
    short polybench/linear-algebra/syrk.c 60
    short polybench/stencils/jacobi-2d.c 60
    short polybench/stencils/heat-3d.c 70
    short polybench/stencils/adi.c 90 2
  fi
  log summary
  python3 "$HERE/summary.py" "$DB"
  log done
} 2>&1 | tee -a "$OUT/log$PART.txt"
