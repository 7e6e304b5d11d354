#!/usr/bin/env python3
"""Compare two POLYTUNE_DUMP files as float64 arrays.

usage: compare.py <reference dump> <candidate dump> [rtol]
Prints `yes` or `no (<reason>)`; exit status 0 for yes, 1 for no.
NaN matches NaN; |a-b| <= rtol*|ref| + 1e-12*max|ref| (a tiny absolute floor
so that entries that cancel to ~0 do not fail on rounding alone).
"""
import sys

import numpy as np


def main():
    ref_path, cand_path = sys.argv[1], sys.argv[2]
    rtol = float(sys.argv[3]) if len(sys.argv) > 3 else 1e-6
    ref = np.fromfile(ref_path, dtype=np.float64)
    cand = np.fromfile(cand_path, dtype=np.float64)
    if ref.size == 0:
        print("no (empty reference dump)")
        return 1
    if ref.size != cand.size:
        print("no (sizes differ: %d vs %d doubles)" % (ref.size, cand.size))
        return 1
    fin = np.abs(ref[np.isfinite(ref)])
    atol = 1e-12 * (fin.max() if fin.size else 0.0)
    ok = np.isclose(cand, ref, rtol=rtol, atol=atol, equal_nan=True)
    if ok.all():
        return print("yes") or 0
    bad = np.flatnonzero(~ok)
    i = bad[0]
    print("no (%d of %d differ; first at %d: ref %r got %r)"
          % (bad.size, ref.size, i, float(ref[i]), float(cand[i])))
    return 1


if __name__ == "__main__":
    sys.exit(main())
