#!/bin/bash
# Issue 35's GPU measurement in one script, for a machine with an NVIDIA GPU
# (nvcc, gcc, python3 with numpy; torch for the cuBLAS reference). Run from
# the repository root:
#
#   scripts/gpu/measure.sh [PART]     PART 1 (about 5 minutes on an H200):
#                                     cuBLAS, ppcg, gemm's tile and thread
#                                     tile sweep at LARGE and EXTRALARGE,
#                                     2mm, 3mm, syrk;
#                                     PART 2 (about 5 minutes): symm,
#                                     covariance, jacobi-2d, heat-3d, lu, adi
#
# It needs a polytune binary (POLYTUNE, default target/release/polytune) and,
# when that binary was built elsewhere, its solver libraries (POLYTUNE_LIBS: a
# .tar.xz of the shared libraries `ldd` lists for it that the machine lacks,
# CBC's and its BLAS). ppcg's units come from scripts/ppcg (PPCG_OUT, default
# target/ppcg, generated and built beforehand; see scripts/ppcg/README.md).
# Results go to OUT (default /tmp/polytune-gpu-out): logPART.txt, gpuPART.db,
# ppcg_results.txt. Each campaign's log line of a GPU point gives its region
# time and its kernels' time; the store keeps region times.
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
# A campaign of GPU points on FILE at DATASET within LIMIT seconds: every
# combination of TILES, THREAD_TILES and SHARED (comma-separated lists); the
# scheduler's knobs at their defaults. The references (original, isl and ours
# on the CPU, isl's GPU schedule) come with it; a reference that runs past 3
# times the best so far is measured once (racing).
campaign() {
  local file=$1 dataset=$2 limit=$3 tiles=$4 thread_tiles=$5 shared=$6 runs=${7:-3}
  log "campaign $file $dataset: tiles $tiles, thread tiles $thread_tiles, shared $shared"
  timeout "$limit" "$P" tune "$file" --db "$DB" --machine configs/machines/gpu.toml --dataset "$dataset" \
    --set target=gpu --set hlim=off --set spatial=grouped --set posttile_reorder=pluto \
    --set consecutivity=none --set wavefront=none --set feautrier=all --set gpu_block=1024 \
    --set "gpu_thread_tile=$thread_tiles" --set "gpu_shared=$shared" --tiles "$tiles" \
    --strategy exhaustive --evals 24 --runs "$runs" --on-noise warn 2>&1 | grep -v "^polytune: warning"
}
# The short campaign of the table in docs/performance.md: the mapping
# without shared memory (gpu_shared=off), the default (tile 32), and 4 x 4
# thread tiles, on two tile shapes.
short() { campaign "$1" LARGE "$2" 32,64x64x16 1,4 on,off "${3:-3}"; }
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
    short polybench/linear-algebra/gemm.c 60
    campaign polybench/linear-algebra/gemm.c LARGE 60 32x32x16,64x32x16,64x64x16,128x64x8,128x128x8 2,4,8 on
    campaign polybench/linear-algebra/gemm.c EXTRALARGE 90 64x64x16,128x64x8,128x128x8 4,8 on
    short polybench/linear-algebra/2mm.c 60
    short polybench/linear-algebra/3mm.c 60
    short polybench/linear-algebra/syrk.c 40
  else
    short polybench/linear-algebra/symm.c 45
    short polybench/datamining/covariance.c 60 2
    short polybench/stencils/jacobi-2d.c 40
    short polybench/stencils/heat-3d.c 60
    short polybench/linear-algebra/lu.c 60 2
    short polybench/stencils/adi.c 75 2
  fi
  log summary
  python3 "$HERE/summary.py" "$DB"
  log done
} 2>&1 | tee -a "$OUT/log$PART.txt"
