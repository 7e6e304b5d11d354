/* lu: in-place LU decomposition without pivoting, A = L * U. The strict lower
 * triangle of A receives L (its unit diagonal is implicit), the upper triangle
 * (diagonal included) receives U. */
#include "../harness/polytune.h"

#if defined(MINI_DATASET)
#define N 40
#elif defined(SMALL_DATASET)
#define N 120
#elif defined(MEDIUM_DATASET)
#define N 400
#elif defined(LARGE_DATASET)
#define N 2000
#else
#define N 4000
#endif

#ifndef DATA_TYPE
#define DATA_TYPE double
#endif

/* Symmetric positive definite input, so elimination without pivoting is safe:
 * A := T * T^T with T unit lower triangular, T[i][j] = 1 - j/n below the
 * diagonal. Entry (r, s) only depends on p = min(r, s):
 *   sum_{t<p} T[p][t]^2 + (r == s ? 1 : T[max(r,s)][p]),
 * so it is built in O(n^2) from a running sum (same values, same summation
 * order as forming the product explicitly). */
static void init(int n, DATA_TYPE A[n][n])
{
  DATA_TYPE acc = 0.0;
  for (int p = 0; p < n; p++) {
    DATA_TYPE t = (DATA_TYPE)(-p % n) / n + 1;
    A[p][p] = acc + 1;
    for (int q = p + 1; q < n; q++) {
      A[p][q] = acc + t;
      A[q][p] = A[p][q];
    }
    acc += t * t;
  }
}

static void kernel_lu(int n, DATA_TYPE A[n][n])
{
  int i, j, k;
#pragma scop
  for (i = 0; i < n; i++) {
    /* row i of L */
    for (j = 0; j < i; j++) {
      for (k = 0; k < j; k++)
        A[i][j] -= A[i][k] * A[k][j];
      A[i][j] /= A[j][j];
    }
    /* row i of U */
    for (j = i; j < n; j++)
      for (k = 0; k < i; k++)
        A[i][j] -= A[i][k] * A[k][j];
  }
#pragma endscop
}

int main(void)
{
  int n = N;
  DATA_TYPE(*A)[n] = polytune_alloc(sizeof(DATA_TYPE[n][n]));

  init(n, A);
  polytune_timer_start();
  kernel_lu(n, A);
  polytune_timer_stop();
  polytune_dump(A, sizeof(DATA_TYPE[n][n]));

  free(A);
  return 0;
}
