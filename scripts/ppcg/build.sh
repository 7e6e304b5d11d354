#!/bin/bash
# Build ppcg's CUDA executable and the original CPU program for one kernel/size.
# Builds only what is missing unless FORCE=1.  Needs generate.sh's output.
#   scripts/ppcg/build.sh <kernel> <SIZE> [cuda|orig|all]
# Environment: PPCG_OUT (default target/ppcg), NVCC (default nvcc),
# CC (default gcc), CUDA_ARCH (default sm_90), NICE (e.g. "nice -n 19").
# Executables go to $PPCG_OUT/bin/<kernel>.<SIZE> and <kernel>.<SIZE>.orig.
set -e
[ $# -ge 2 ] || { echo "usage: $0 <kernel> <SIZE> [cuda|orig|all]" >&2; exit 2; }
k=$1; S=$2; what=${3:-all}
. "$(dirname "$0")/common.sh"
D=$PPCG_OUT/$k.$S
B=$PPCG_OUT/bin
NVCC=${NVCC:-nvcc}
CC=${CC:-gcc}
ARCH=${CUDA_ARCH:-sm_90}
NICE=${NICE:-}
sub=$(polybench_dir "$k")
src=polybench/$sub/$k.c
fn=kernel_$(echo "$k" | tr - _)
mkdir -p "$B"

need() { [ "${FORCE:-0}" = 1 ] || [ ! -e "$1" ]; }
say() { echo "+ $*" >&2; "$@"; }

if [ "$what" != cuda ] && need "$B/$k.$S.orig"; then
  say $NICE $CC -O3 -march=x86-64-v3 -D${S}_DATASET "$src" -o "$B/$k.$S.orig" -lm
fi

if [ "$what" != orig ] && need "$B/$k.$S"; then
  [ -f "$D/${k}_host.cu" ] || { echo "no $D/${k}_host.cu: run scripts/ppcg/generate.sh first" >&2; exit 1; }
  if need "$D/${k}_region.cu" || need "$D/${k}_main.c"; then
    say python3 "$HERE/split_host.py" "$D/${k}_host.cu" "$fn" "$D" "$k"
  fi
  # which launch entry point do nvcc's kernel stubs call? (wrapped for kernel timing)
  say $NICE $NVCC -O3 -arch=$ARCH -c "$D/${k}_kernel.cu" -o "$D/${k}_kernel.o"
  if nm "$D/${k}_kernel.o" | grep -q ' U __cudaLaunchKernel$'; then sym=__cudaLaunchKernel
  else sym=cudaLaunchKernel; fi
  say $NICE $NVCC -O3 -arch=$ARCH -c "$D/${k}_region.cu" -o "$D/${k}_region.o"
  say $NICE $CC -O3 -march=x86-64-v3 -D${S}_DATASET -I polybench/$sub -c "$D/${k}_main.c" -o "$D/${k}_main.o"
  say $NICE $NVCC -O3 -arch=$ARCH -DSYM=$sym -c "$HERE/ktime_shim.cu" -o "$D/ktime_shim.o"
  say $NVCC -arch=$ARCH "$D/${k}_main.o" "$D/${k}_region.o" "$D/${k}_kernel.o" "$D/ktime_shim.o" \
      -Xlinker --wrap=$sym -o "$B/$k.$S" -lm
  rm -f "$D"/*.o
fi
