# Shared settings for the ppcg reference scripts; sourced, not run.
# It moves to the repository root and sets:
#   HERE      this folder (scripts/ppcg), absolute
#   PPCG_OUT  output folder, absolute (default target/ppcg; a relative value
#             is taken from the repository root)
#   KERNELS   space-separated <kernel>.<SIZE> list (overridable)
# and defines polybench_dir <kernel>, which prints the PolyBench subfolder.
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cd "$HERE/../.." || exit 1
PPCG_OUT=${PPCG_OUT:-target/ppcg}
mkdir -p "$PPCG_OUT"
PPCG_OUT=$(cd "$PPCG_OUT" && pwd)
export PPCG_OUT   # so that build.sh, when run from run.sh, uses the same folder
KERNELS=${KERNELS:-"gemm.LARGE 2mm.LARGE 3mm.LARGE syrk.LARGE lu.LARGE symm.LARGE covariance.LARGE
jacobi-2d.LARGE heat-3d.LARGE adi.LARGE gemm.EXTRALARGE"}

polybench_dir() {
  case $1 in
    covariance) echo datamining ;;
    jacobi-2d|heat-3d|adi) echo stencils ;;
    *) echo linear-algebra ;;
  esac
}
