#!/bin/bash
# Build (if needed), run, time and verify ppcg's executables on a GPU machine.
#   scripts/ppcg/run.sh
# Needs: the output of scripts/ppcg/generate.sh in $PPCG_OUT; nvcc on PATH
# when a binary is missing or a prebuilt one fails (it is then rebuilt with
# build.sh); gcc; python3 with numpy.
# Environment: PPCG_OUT (default target/ppcg), KERNELS (default: see
# common.sh), RESULTS (default $PPCG_OUT/results.txt), RUNS (default 5),
# SKIP_ORIG (kernel.SIZE entries whose original CPU program is not run),
# and NVCC, CC, CUDA_ARCH, as for build.sh.
#
# Phase 1 runs every original CPU program (the correctness reference) in
# parallel, each with POLYTUNE_DUMP.  Phase 2 runs, one kernel at a time on a
# quiet machine, ppcg's executable:
#   1 run  POLYTUNE_TIME=1 + POLYTUNE_DUMP   (checked against the original)
#   4 runs POLYTUNE_TIME=1                   (median/min over these 5 runs)
#   1 run  POLYTUNE_KTIME=1                  (summed kernel-only time, CUDA events)
#   1 run  POLYTUNE_NO_WARMUP=1              (cold: CUDA context made inside region)
# Region time = the harness's clock around the kernel call: ppcg's cudaMalloc,
# host<->device copies, launches and cudaFree.  The CUDA context is created
# before main() (ktime_shim.cu), and CUDA_MODULE_LOADING=EAGER loads the
# kernels with it, so neither is in the region time (except the "cold" column).
#
# Output: one line per kernel, also written to $RESULTS:
#   kernel size verified median_s min_s kernel_only_s cold_s orig_cpu_s
set -u
. "$(dirname "$0")/common.sh"
B=$PPCG_OUT/bin
RESULTS=${RESULTS:-$PPCG_OUT/results.txt}
RUNS=${RUNS:-5}
T=$(mktemp -d "${TMPDIR:-/tmp}/ppcg-run.XXXXXX")
trap 'rm -rf "$T"' EXIT

# Originals that would take more than ~20 s on one core can be listed here
# and are then not run ("verified" is then "skipped").  None needed it on a
# current Xeon: the slowest (covariance, adi, lu at LARGE; gemm at
# EXTRALARGE) take 11-17 s even on a slow 2-core machine.
SKIP_ORIG=${SKIP_ORIG:-}

t_start=$(date +%s)
chmod u+x "$B"/* 2>/dev/null || true
echo "# ppcg reference run, $(date -u +%FT%TZ), $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)"
command -v nvcc >/dev/null && echo "# nvcc: $(nvcc --version | grep -o "release [0-9.]*")"

# Build anything not prebuilt (needs nvcc for the CUDA ones).
for ks in $KERNELS; do
  k=${ks%.*}; S=${ks#*.}
  if [ ! -x "$B/$ks" ] || [ ! -x "$B/$ks.orig" ]; then
    bash "$HERE/build.sh" "$k" "$S" all >"$T/$ks.build.log" 2>&1 || { echo "# build of $ks failed:"; tail -5 "$T/$ks.build.log"; }
  fi
done

# Phase 1: originals, in parallel.
for ks in $KERNELS; do
  case " $SKIP_ORIG " in *" $ks "*) continue ;; esac
  [ -x "$B/$ks.orig" ] || continue
  ( POLYTUNE_TIME=1 POLYTUNE_DUMP="$T/$ks.ref" timeout 120 "$B/$ks.orig" >"$T/$ks.orig.time" 2>"$T/$ks.orig.err"
    echo $? >"$T/$ks.orig.rc" ) &
done
wait
echo "# originals done after $(( $(date +%s) - t_start )) s"

run_gpu() { # ks, extra env...; prints the binary's stdout, rc in $T/rc
  local ks=$1; shift
  env CUDA_MODULE_LOADING=EAGER "$@" timeout 60 "$B/$ks" 2>>"$T/$ks.gpu.err"
  echo $? >"$T/rc"
}

: >"$RESULTS.tmp"
printf '%-11s %-10s %-8s %12s %12s %13s %12s %10s\n' kernel size verified median_s min_s kernel_only_s cold_s orig_cpu_s | tee -a "$RESULTS.tmp"
for ks in $KERNELS; do
  k=${ks%.*}; S=${ks#*.}
  rm -f "$T/$ks.gpu"
  times=()
  t=$(run_gpu "$ks" POLYTUNE_TIME=1 POLYTUNE_DUMP="$T/$ks.gpu")
  if [ "$(cat "$T/rc")" != 0 ] && command -v nvcc >/dev/null; then
    echo "# $ks: prebuilt binary failed ($(tail -2 "$T/$ks.gpu.err" | tr '\n' ' ')); rebuilding with this nvcc"
    FORCE=1 bash "$HERE/build.sh" "$k" "$S" cuda >"$T/$ks.rebuild.log" 2>&1 || tail -5 "$T/$ks.rebuild.log"
    rm -f "$T/$ks.gpu"
    t=$(run_gpu "$ks" POLYTUNE_TIME=1 POLYTUNE_DUMP="$T/$ks.gpu")
  fi
  if [ "$(cat "$T/rc")" != 0 ]; then
    echo "# $ks: ppcg binary failed: $(tail -3 "$T/$ks.gpu.err" | tr '\n' ' ')"
    printf '%-11s %-10s %-8s %12s %12s %13s %12s %10s\n' "$k" "$S" failed - - - - - | tee -a "$RESULTS.tmp"
    continue
  fi
  times+=("$t")
  for i in $(seq 2 "$RUNS"); do
    t=$(run_gpu "$ks" POLYTUNE_TIME=1)
    [ "$(cat "$T/rc")" = 0 ] && times+=("$t")
  done
  : >"$T/$ks.kt.err"
  env CUDA_MODULE_LOADING=EAGER POLYTUNE_KTIME=1 timeout 60 "$B/$ks" >/dev/null 2>"$T/$ks.kt.err"
  kt=$(awk '/^ppcg_kernel_s/{printf "%.6f", $2; n=$3} END{if (n=="") print "n/a"}' "$T/$ks.kt.err")
  cold=$(POLYTUNE_TIME=1 POLYTUNE_NO_WARMUP=1 timeout 60 "$B/$ks" 2>/dev/null)
  [ -n "$cold" ] && cold=$(printf '%.6f' "$cold") || cold=n/a

  orig=-
  if [ -f "$T/$ks.orig.rc" ] && [ "$(cat "$T/$ks.orig.rc")" = 0 ]; then
    orig=$(printf '%.3f' "$(cat "$T/$ks.orig.time")")
    ver=$(python3 "$HERE/compare.py" "$T/$ks.ref" "$T/$ks.gpu")
    [ "${ver%% *}" != yes ] && echo "# $ks: $ver"
    ver=${ver%% *}
  elif [ -f "$T/$ks.orig.rc" ]; then
    ver=noref; echo "# $ks: original failed (rc $(cat "$T/$ks.orig.rc")): $(tail -2 "$T/$ks.orig.err")"
  else
    ver=skipped
  fi
  stats=$(printf '%s\n' "${times[@]}" | python3 -c 'import sys,statistics as s; v=[float(x) for x in sys.stdin if x.strip()]; print("%.6f %.6f" % (s.median(v), min(v)))')
  printf '%-11s %-10s %-8s %12s %12s %13s %12s %10s\n' "$k" "$S" "$ver" ${stats} "$kt" "$cold" "$orig" | tee -a "$RESULTS.tmp"
done
mv "$RESULTS.tmp" "$RESULTS"
echo "# region/kernel/cold times in seconds on the GPU (${RUNS} runs for median/min); orig_cpu_s: original on one CPU core, run in parallel with the other originals"
echo "# total $(( $(date +%s) - t_start )) s"
