#!/bin/bash
# Issue 35's GPU measurement in one script, for a machine with an NVIDIA GPU
# (nvcc, gcc, python3 with numpy; torch for the cuBLAS reference). Run from
# the repository root:
#
#   scripts/gpu/measure.sh [PART]     PART 1: cuBLAS, ppcg, gemm's kernel
#                                     times, the linear-algebra campaigns;
#                                     PART 2: stencils, lu, symm, adi
#
# It needs a polytune binary (POLYTUNE, default target/release/polytune) and,
# when that binary was built elsewhere, its solver libraries (POLYTUNE_LIBS: a
# .tar.xz of the shared libraries `ldd` lists for it that the machine lacks,
# CBC's and its BLAS). ppcg's units come from scripts/ppcg (target/ppcg,
# generated and built beforehand; see scripts/ppcg/README.md). Results go to
# OUT (default /tmp/polytune-gpu-out): logPART.txt, gpuPART.db, ppcg_results.txt.
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
# One short campaign of GPU points: the mapping without shared memory
# (gpu_shared=off), the default, and 4 x 4 thread tiles, on two tile shapes;
# the scheduler's knobs at their defaults. The references (original, isl and
# ours on the CPU, isl's GPU schedule) come with it. The store keeps region
# times; each GPU point's line in the log gives its kernels' time too.
camp() {
  local file=$1 limit=$2
  log "campaign $file LARGE"
  timeout "$limit" "$P" tune "$file" --db "$DB" --machine configs/machines/gpu.toml --dataset LARGE \
    --set target=gpu --set hlim=off --set spatial=grouped --set posttile_reorder=pluto \
    --set consecutivity=none --set wavefront=none --set feautrier=all --set gpu_block=1024 \
    --set gpu_thread_tile=1,4 --set gpu_shared=on,off --tiles 32,64x64x16 \
    --strategy exhaustive --evals 12 --runs 3 --on-noise warn 2>&1 | grep -v "^polytune: warning"
}
one() {
  local file=$1 dataset=$2
  shift 2
  log "run $file $dataset $*"
  timeout 90 "$P" run "$file" --schedule unified --set target=gpu --dataset "$dataset" \
    --machine configs/machines/gpu.toml --runs 3 --on-noise warn "$@" 2>&1 | grep -v "^polytune: warning"
}
{
  log machine
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
  nvcc --version | tail -1
  gcc --version | head -1
  nproc
  if [ "$PART" = 1 ]; then
    log cublas
    timeout 90 python3 "$HERE/cublas.py"
    if [ -d target/ppcg ]; then
      log ppcg
      RESULTS=$OUT/ppcg_results.txt timeout 240 bash scripts/ppcg/run.sh
    fi
    one polybench/linear-algebra/gemm.c LARGE --tile 32 --set gpu_thread_tile=4
    one polybench/linear-algebra/gemm.c EXTRALARGE --tile 64x64x16 --set gpu_thread_tile=4
    for k in linear-algebra/gemm linear-algebra/2mm linear-algebra/3mm linear-algebra/syrk; do
      camp polybench/$k.c 90
    done
    camp polybench/datamining/covariance.c 180
  else
    camp polybench/stencils/jacobi-2d.c 90
    camp polybench/stencils/heat-3d.c 120
    camp polybench/linear-algebra/lu.c 180
    camp polybench/linear-algebra/symm.c 120
    camp polybench/stencils/adi.c 240
  fi
  log summary
  python3 "$HERE/summary.py" "$DB"
  log done
} 2>&1 | tee -a "$OUT/log$PART.txt"
