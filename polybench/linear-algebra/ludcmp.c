/* ludcmp: solves A * x = b by an in-place LU decomposition of A (no pivoting),
 * then forward substitution L * y = b and back substitution U * x = y.
 * A ends up holding L (strict lower part, unit diagonal implicit) and U. */
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

/* b[i] = 4 + (i+1)/(2n); x and y start at zero. A is symmetric positive
 * definite, so elimination without pivoting is safe: A := T * T^T with T unit
 * lower triangular, T[i][j] = 1 - j/n below the diagonal. Entry (r, s) only
 * depends on p = min(r, s):
 *   sum_{t<p} T[p][t]^2 + (r == s ? 1 : T[max(r,s)][p]),
 * so it is built in O(n^2) from a running sum (same values, same summation
 * order as forming the product explicitly). */
static void init(int n, DATA_TYPE A[n][n], DATA_TYPE b[n], DATA_TYPE x[n], DATA_TYPE y[n])
{
  DATA_TYPE fn = (DATA_TYPE)n;
  DATA_TYPE acc = 0.0;
  for (int i = 0; i < n; i++) {
    x[i] = 0;
    y[i] = 0;
    b[i] = (i + 1) / fn / 2.0 + 4;
  }
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

static void kernel_ludcmp(int n, DATA_TYPE A[n][n], DATA_TYPE b[n], DATA_TYPE x[n],
                          DATA_TYPE y[n])
{
  int i, j, k;
  DATA_TYPE w;
#pragma scop
  /* decomposition */
  for (i = 0; i < n; i++) {
    for (j = 0; j < i; j++) {
      w = A[i][j];
      for (k = 0; k < j; k++)
        w -= A[i][k] * A[k][j];
      A[i][j] = w / A[j][j];
    }
    for (j = i; j < n; j++) {
      w = A[i][j];
      for (k = 0; k < i; k++)
        w -= A[i][k] * A[k][j];
      A[i][j] = w;
    }
  }
  /* forward substitution */
  for (i = 0; i < n; i++) {
    w = b[i];
    for (j = 0; j < i; j++)
      w -= A[i][j] * y[j];
    y[i] = w;
  }
  /* back substitution */
  for (i = n - 1; i >= 0; i--) {
    w = y[i];
    for (j = i + 1; j < n; j++)
      w -= A[i][j] * x[j];
    x[i] = w / A[i][i];
  }
#pragma endscop
}

int main(void)
{
  int n = N;
  DATA_TYPE(*A)[n] = polytune_alloc(sizeof(DATA_TYPE[n][n]));
  DATA_TYPE *b = polytune_alloc(sizeof(DATA_TYPE[n]));
  DATA_TYPE *x = polytune_alloc(sizeof(DATA_TYPE[n]));
  DATA_TYPE *y = polytune_alloc(sizeof(DATA_TYPE[n]));

  init(n, A, b, x, y);
  polytune_timer_start();
  kernel_ludcmp(n, A, b, x, y);
  polytune_timer_stop();
  polytune_dump(A, sizeof(DATA_TYPE[n][n]));
  polytune_dump(x, sizeof(DATA_TYPE[n]));
  polytune_dump(y, sizeof(DATA_TYPE[n]));

  free(A);
  free(b);
  free(x);
  free(y);
  return 0;
}
