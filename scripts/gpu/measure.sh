#!/bin/bash
# Issue 35's GPU measurement in one script, for a machine with an NVIDIA GPU
# (nvcc, gcc, python3 with numpy; torch for the cuBLAS reference). Run from
# the repository root:
#
#   scripts/gpu/measure.sh            about 10 minutes on an H200: run
#                                     some steps where the lease is short
#   STEPS="gemm short" scripts/gpu/measure.sh   some steps only
#
# Steps (STEPS, default all, in this order):
#   cublas   cuBLAS's DGEMM at gemm's LARGE and EXTRALARGE shapes and 4096³;
#   protocol gemm's kernels timed cold and warm (POLYTUNE_WARM_KERNELS),
#            its region page-locked and pageable (POLYTUNE_PAGEABLE), and
#            with gpu_min_blocks=2;
#   ppcg     ppcg's units of the ten kernels, timed and verified, with each
#            original on one core (scripts/ppcg/run.sh);
#   gemm     gemm at LARGE: tile shapes x points per thread x gpu_unroll;
#            then on FP64 tensor cores (gpu_mma=on): three tile shapes x
#            2 x 2 and 4 x 4 points per thread;
#   gemm-xl  gemm at EXTRALARGE: two tile shapes (k steps of 32 and 16)
#            with 4 x 4 points per thread x gpu_min_blocks (3, 2); then on
#            FP64 tensor cores: the same two shapes x 2 x 2 and 4 x 4 points;
#   short    a short campaign on each of the other nine kernels at LARGE
#            (SHORT: some of them, as name:budget[:runs[:tiles]]): tile 32,
#            gpu_shared on and off, 1, 2 and 4 points per thread (heat-3d:
#            four tile shapes, lu: 32 and 16, 1 and 2 points);
#   default  issue 67's item 4 as a user runs it: `tune gemm.c --set
#            target=gpu` and nothing else set, the model strategy, no warm
#            start, 40 evaluations, at LARGE and EXTRALARGE (about 4 minutes);
#   diamond  issue 68's item 3 on the host CPU (every core): jacobi-2d and
#            heat-3d at LARGE, each wavefront with diamond tiles and without
#            (`polytune run`, the same tile shape; about 3 minutes);
#   export   issue 65's item 3 on the GPU: the default campaign's LARGE
#            winner of gemm exported (the file and its CUDA unit), built
#            with nvcc as a user would, run, and its output compared with
#            the original's built by gcc (needs the default step's store).
#
# It needs a polytune binary (POLYTUNE, default target/release/polytune) and,
# when that binary was built elsewhere, its solver libraries (POLYTUNE_LIBS: a
# .tar.xz of the shared libraries `ldd` lists for it that the machine lacks,
# CBC's and its BLAS). ppcg's units come from scripts/ppcg (PPCG_OUT, default
# target/ppcg, generated and built beforehand; see scripts/ppcg/README.md).
# Results go to OUT (default /tmp/polytune-gpu-out): log.txt, gpu.db,
# ppcg_results.txt. Each campaign's log line of a GPU point gives its region
# time and its kernels' time; the store keeps both.
#
# The campaigns measure the original program (what every point is verified
# and timed against) and isl's GPU schedule, not the CPU reference points
# (`--references isl-gpu`): at LARGE those took most of each campaign's
# first minute on 2026-11-27. Each campaign has a wall-time budget (checked
# between batches) and a hard limit 30 s past it.
set -u
OUT=${OUT:-/tmp/polytune-gpu-out}
mkdir -p "$OUT"
HERE=$(cd "$(dirname "$0")" && pwd)
P=${POLYTUNE:-$PWD/target/release/polytune}
DB="$OUT/gpu.db"
STEPS=${STEPS:-cublas protocol ppcg gemm gemm-xl short default diamond export}
export POLYTUNE_NVCC=${POLYTUNE_NVCC:-$(command -v nvcc)}
if [ -n "${POLYTUNE_LIBS:-}" ]; then
  mkdir -p /tmp/polytune-lib && tar -C /tmp/polytune-lib -xJf "$POLYTUNE_LIBS"
  export LD_LIBRARY_PATH="/tmp/polytune-lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
log() { echo "== $(date +%T) $*"; }
step() { [[ " $STEPS " == *" $1 "* ]]; }
# A campaign of GPU points on FILE at DATASET within BUDGET seconds: every
# combination of TILES and the comma-separated values of the further
# --set arguments, the scheduler's knobs at their defaults, at most EVALS
# evaluations of RUNS timed runs. A point that runs past 3 times the best
# so far is measured once (racing).
campaign() {
  local file=$1 dataset=$2 budget=$3 tiles=$4 evals=$5 runs=$6
  shift 6
  log "campaign $file $dataset: tiles $tiles $*"
  timeout $((budget + 30)) "$P" tune "$file" --db "$DB" --machine configs/machines/gpu.toml \
    --dataset "$dataset" --budget "${budget}s" --references isl-gpu \
    --set target=gpu --set hlim=off --set spatial=grouped --set posttile_reorder=pluto \
    --set consecutivity=none --set wavefront=none --set feautrier=all --set gpu_block=1024 \
    "$@" --tiles "$tiles" --strategy exhaustive --evals "$evals" --runs "$runs" --on-noise warn 2>&1 |
    grep --line-buffered -v "^polytune: warning"
}
# The short campaign of the table in docs/performance.md: the mapping
# without shared memory (gpu_shared=off, the mapping before issue 35), the
# default (tile 32, one point per thread), 2 x 2 and 4 x 4 points per thread.
# With TILES (heat-3d's, lu's: their kernels write every array they read,
# so there is no shared memory to switch), those tile shapes instead.
short() {
  if [ -n "${4:-}" ]; then
    campaign "$1" LARGE "$2" "$4" 8 "${3:-2}" --set gpu_thread_tile=1,2
  else
    campaign "$1" LARGE "$2" 32 8 "${3:-2}" --set gpu_thread_tile=1,2,4 --set gpu_shared=on,off
  fi
}
{
  log machine
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
  nvcc --version | tail -1
  gcc --version | head -1
  nproc
  "$P" --version
  if step cublas; then
    log cublas
    timeout 90 python3 "$HERE/cublas.py"
  fi
  if step protocol; then
    # gemm's kernels timed cold (one launch in a process, the default) and
    # warm (POLYTUNE_WARM_KERNELS=3: the launches three times first), and
    # its region with pageable host arrays (POLYTUNE_PAGEABLE=1), one run
    # after the other: region (kernels). Then, warm, the 4 x 4 kernel with
    # gpu_min_blocks=2 (110 registers and no spill; nvcc's own choice is 80
    # and a spill), and with k steps of 32 and three blocks (80 registers).
    proto() {
      log "protocol $1 $2 ${3}x${3} gpu_unroll=$4 $5 gpu_min_blocks=${6:-auto}"
      env "$5" timeout 90 "$P" run polybench/linear-algebra/gemm.c --schedule unified --set target=gpu \
        --machine configs/machines/gpu.toml --dataset "$1" --tile "$2" --set gpu_thread_tile="$3" \
        --set gpu_unroll="$4" --set gpu_min_blocks="${6:-auto}" --runs 3 --out "$OUT/protocol" 2>&1 |
        grep -E "status|variant|^polytune: " | grep -v "^polytune: warning"
    }
    for point in "64x64x16 4 on" "32x32x16 2 off"; do
      for env in POLYTUNE_WARM_KERNELS=0 POLYTUNE_WARM_KERNELS=3 POLYTUNE_PAGEABLE=1; do
        proto LARGE $point $env
      done
    done
    for env in POLYTUNE_WARM_KERNELS=0 POLYTUNE_WARM_KERNELS=3; do
      proto EXTRALARGE 64x64x16 4 on $env
    done
    for dataset in LARGE EXTRALARGE; do
      proto $dataset 64x64x16 4 on POLYTUNE_WARM_KERNELS=3 2
      proto $dataset 64x64x32 4 on POLYTUNE_WARM_KERNELS=3 3
    done
  fi
  if step ppcg && [ -d "${PPCG_OUT:-target/ppcg}" ]; then
    log ppcg
    RESULTS=$OUT/ppcg_results.txt timeout 150 bash scripts/ppcg/run.sh
  fi
  if step gemm; then
    campaign polybench/linear-algebra/gemm.c LARGE 75 32x32x16,64x64x16,128x64x16,128x128x16 25 3 \
      --set gpu_thread_tile=2,4,8 --set gpu_unroll=off,on
    # Issue 67's item 1: the contraction on FP64 tensor cores (wmma 8x8x4),
    # at the shapes whose staged tiles and staging tile fit 48 KiB of shared
    # memory (128-wide tiles do not: gpu_mma=on makes the plain kernel there).
    campaign polybench/linear-algebra/gemm.c LARGE 45 32x32x16,64x64x16,64x64x32 6 3 --set gpu_mma=on \
      --set gpu_thread_tile=2,4
  fi
  if step gemm-xl; then
    # 4 x 4 points with three blocks a multiprocessor ran fastest there on
    # 2026-11-29 (64x64x32: 10.2 TFLOP/s); 32x32x16 with 2 x 2 at LARGE.
    campaign polybench/linear-algebra/gemm.c EXTRALARGE 75 64x64x32,64x64x16 6 2 --set gpu_thread_tile=4 \
      --set gpu_unroll=on --set gpu_min_blocks=3,2
    # The same shapes on FP64 tensor cores (issue 67, item 1).
    campaign polybench/linear-algebra/gemm.c EXTRALARGE 60 64x64x32,64x64x16 4 2 --set gpu_mma=on \
      --set gpu_thread_tile=2,4
  fi
  if step short; then
    # kernel:budget[:runs[:tiles]]; the slowest originals (adi's 11 s) run
    # fewer times; heat-3d's tile 32 makes 16 blocks at LARGE (n = 120).
    for k in ${SHORT:-symm:35 2mm:45 3mm:50 syrk:30 covariance:40 lu:45:2:32,16 jacobi-2d:30 heat-3d:40:2:32,4x8x32,4x4x32,8x8x32 adi:45:1}; do
      IFS=: read -r name budget runs tiles <<<"$k"
      case $name in
        covariance) dir=datamining ;;
        jacobi-2d | heat-3d | adi) dir=stencils ;;
        *) dir=linear-algebra ;;
      esac
      short "polybench/$dir/$name.c" "$budget" "${runs:-2}" "${tiles:-}"
    done
  fi
  if step default; then
    for dataset in LARGE EXTRALARGE; do
      log "default campaign gemm $dataset"
      timeout 150 "$P" tune polybench/linear-algebra/gemm.c --db "$OUT/default.db" \
        --machine configs/machines/gpu.toml --set target=gpu --dataset "$dataset" --strategy model \
        --warm-start 0 --evals 40 --budget 120s --runs 3 --references isl-gpu 2>&1 |
        grep --line-buffered -v "^polytune: warning"
    done
  fi
  if step diamond; then
    for kt in jacobi-2d:32 heat-3d:16x16x16x64; do
      k=${kt%%:*}
      for w in single all; do
        for d in off on; do
          log "diamond $k LARGE $(nproc) threads wavefront=$w diamond=$d"
          timeout 240 "$P" run "polybench/stencils/$k.c" --dataset LARGE --threads "$(nproc)" \
            --schedule unified --tile "${kt#*:}" --set wavefront=$w --set diamond=$d --runs 3 \
            --out "$OUT/diamond" 2>&1 | grep -E "^  (status|variant|original|speedup|noise)"
        done
      done
    done
  fi
  if step export && [ -f "$OUT/default.db" ]; then
    log "export gemm LARGE"
    X=$OUT/export
    mkdir -p "$X"
    timeout 300 "$P" export gemm --db "$OUT/default.db" --dataset LARGE -o "$X/gemm.tuned.c" 2>&1
    if [ -f "$X/gemm.tuned.cu" ]; then
      inc=-Ipolybench/linear-algebra
      timeout 120 nvcc -O3 -arch=native -Xcompiler -fopenmp -DLARGE_DATASET "$inc" \
        "$X/gemm.tuned.c" "$X/gemm.tuned.cu" -lgomp -o "$X/gemm.tuned" &&
        timeout 60 gcc -O3 -march=native -fopenmp -DLARGE_DATASET "$inc" polybench/linear-algebra/gemm.c \
          -o "$X/gemm.original" &&
        for b in tuned original; do
          rm -f "$X/$b.dump"
          echo "$b: region $(POLYTUNE_TIME=1 POLYTUNE_DUMP="$X/$b.dump" timeout 120 "$X/gemm.$b") s"
        done &&
        python3 -c "import numpy as n, sys; a, b = (n.fromfile(sys.argv[k]) for k in (1, 2)); \
print('outputs', 'match' if a.shape == b.shape and n.allclose(a, b, rtol=1e-9, atol=0) else 'DIFFER', a.shape)" \
          "$X/tuned.dump" "$X/original.dump"
    fi
  fi
  log summary
  python3 "$HERE/summary.py" "$DB"
  log done
} 2>&1 | tee -a "$OUT/log.txt"
