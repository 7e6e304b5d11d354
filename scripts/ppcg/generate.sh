#!/bin/bash
# Run ppcg on each PolyBench kernel and prepare its host code for nvcc.
#   PPCG=/path/to/ppcg KERNELS="gemm.LARGE" scripts/ppcg/generate.sh
# Environment: PPCG (default: ppcg on PATH), PPCG_OUT (default target/ppcg),
# KERNELS (default: see common.sh).
# Each folder $PPCG_OUT/<kernel>.<SIZE>/ gets <kernel>_host.cu,
# <kernel>_kernel.cu and <kernel>_kernel.hu from ppcg, ppcg.log (its
# --dump-sizes output: the tile/grid/block sizes it used), cmd.txt (the
# command line), and <kernel>_region.cu / <kernel>_main.c from split_host.py.
set -e
. "$(dirname "$0")/common.sh"
PPCG=${PPCG:-ppcg}
command -v "$PPCG" >/dev/null || { echo "ppcg not found: set PPCG=/path/to/ppcg" >&2; exit 1; }
root=$(pwd)
failed=0
for ks in $KERNELS; do
  k=${ks%.*}; S=${ks#*.}
  sub=$(polybench_dir "$k")
  d=$PPCG_OUT/$ks
  mkdir -p "$d"
  cmd=("$PPCG" --target=cuda "-D${S}_DATASET" --dump-sizes -o "$k.cu" "$root/polybench/$sub/$k.c")
  echo "(cd $d && ${cmd[*]})" >"$d/cmd.txt"
  if ! (cd "$d" && "${cmd[@]}" >ppcg.log 2>&1); then
    echo "ppcg failed on $ks:"; cat "$d/ppcg.log"; failed=1; continue
  fi
  rm -f "$d/${k}_region.cu" "$d/${k}_main.c"   # split_host.py output is now stale
  python3 "$HERE/split_host.py" "$d/${k}_host.cu" "kernel_$(echo "$k" | tr - _)" "$d" "$k"
  echo "$ks: $(cat "$d/ppcg.log")"
done
exit $failed
