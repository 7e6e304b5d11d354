/* gramschmidt: QR decomposition of the M x N matrix A by modified Gram-Schmidt.
 * Column k of Q is the normalised residual of column k of A; R (N x N) gets the
 * norms on its diagonal and the projections above it. A is overwritten with the
 * residuals. */
#include "../harness/polytune.h"

/* Tall (M > N), unlike PolyBench's M < N: there, columns k >= M lie in the
 * span of the first M, their residuals are rounding noise, and Q's columns
 * are noise divided by noise, which no tolerance can compare once the
 * compiler contracts to FMA differently in the original and a variant. */
#if defined(MINI_DATASET)
#define M 30
#define N 20
#elif defined(SMALL_DATASET)
#define M 80
#define N 60
#elif defined(MEDIUM_DATASET)
#define M 240
#define N 200
#elif defined(LARGE_DATASET)
#define M 1200
#define N 1000
#else
#define M 2600
#define N 2000
#endif

#ifndef DATA_TYPE
#define DATA_TYPE double
#endif

/* PolyBench's pattern ((i*j) mod m)/m * 100 + 10 alone is rank deficient (its
 * leading block has rank well below n, so some R[k][k] come out as rounding
 * noise near 1e-14). A diagonal term of 110 * m makes the leading n x n block
 * strictly diagonally dominant, hence A of full column rank n and well
 * conditioned. */
static void init(int m, int n, DATA_TYPE A[m][n], DATA_TYPE R[n][n], DATA_TYPE Q[m][n])
{
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++) {
      A[i][j] = ((DATA_TYPE)((i * j) % m) / m) * 100 + 10;
      if (i == j)
        A[i][j] += 110.0 * m;
      Q[i][j] = 0.0;
    }
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      R[i][j] = 0.0;
}

static void kernel_gramschmidt(int m, int n, DATA_TYPE A[m][n], DATA_TYPE R[n][n],
                               DATA_TYPE Q[m][n])
{
  int i, j, k;
  DATA_TYPE nrm;
#pragma scop
  for (k = 0; k < n; k++) {
    nrm = 0.0;
    for (i = 0; i < m; i++)
      nrm += A[i][k] * A[i][k];
    R[k][k] = sqrt(nrm);
    for (i = 0; i < m; i++)
      Q[i][k] = A[i][k] / R[k][k];
    for (j = k + 1; j < n; j++) {
      R[k][j] = 0.0;
      for (i = 0; i < m; i++)
        R[k][j] += Q[i][k] * A[i][j];
      for (i = 0; i < m; i++)
        A[i][j] = A[i][j] - Q[i][k] * R[k][j];
    }
  }
#pragma endscop
}

int main(void)
{
  int m = M, n = N;
  DATA_TYPE(*A)[n] = polytune_alloc(sizeof(DATA_TYPE[m][n]));
  DATA_TYPE(*R)[n] = polytune_alloc(sizeof(DATA_TYPE[n][n]));
  DATA_TYPE(*Q)[n] = polytune_alloc(sizeof(DATA_TYPE[m][n]));

  init(m, n, A, R, Q);
  polytune_timer_start();
  kernel_gramschmidt(m, n, A, R, Q);
  polytune_timer_stop();
  polytune_dump(A, sizeof(DATA_TYPE[m][n]));
  polytune_dump(R, sizeof(DATA_TYPE[n][n]));
  polytune_dump(Q, sizeof(DATA_TYPE[m][n]));

  free(A);
  free(R);
  free(Q);
  return 0;
}
