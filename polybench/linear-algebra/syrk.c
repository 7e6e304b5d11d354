/* syrk: symmetric rank-k update of the lower triangle of C (N x N),
 * C := alpha * A * A^T + beta * C, with A of size N x M.
 * Entries of C above the diagonal are left untouched. */
#include "../harness/polytune.h"

#if defined(MINI_DATASET)
#define M 20
#define N 30
#elif defined(SMALL_DATASET)
#define M 60
#define N 80
#elif defined(MEDIUM_DATASET)
#define M 200
#define N 240
#elif defined(LARGE_DATASET)
#define M 1000
#define N 1200
#else
#define M 2000
#define N 2600
#endif

#ifndef DATA_TYPE
#define DATA_TYPE double
#endif

static void init(int n, int m, DATA_TYPE *alpha, DATA_TYPE *beta, DATA_TYPE C[n][n],
                 DATA_TYPE A[n][m])
{
  *alpha = 1.5;
  *beta = 1.2;
  for (int i = 0; i < n; i++)
    for (int k = 0; k < m; k++)
      A[i][k] = (DATA_TYPE)((i * k + 1) % n) / n;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      C[i][j] = (DATA_TYPE)((i * j + 2) % m) / m;
}

static void kernel_syrk(int n, int m, DATA_TYPE alpha, DATA_TYPE beta, DATA_TYPE C[n][n],
                        DATA_TYPE A[n][m])
{
  int i, j, k;
#pragma scop
  for (i = 0; i < n; i++) {
    for (j = 0; j <= i; j++)
      C[i][j] *= beta;
    for (k = 0; k < m; k++)
      for (j = 0; j <= i; j++)
        C[i][j] += alpha * A[i][k] * A[j][k];
  }
#pragma endscop
}

int main(void)
{
  int n = N, m = M;
  DATA_TYPE alpha, beta;
  DATA_TYPE(*C)[n] = polytune_alloc(sizeof(DATA_TYPE[n][n]));
  DATA_TYPE(*A)[m] = polytune_alloc(sizeof(DATA_TYPE[n][m]));

  init(n, m, &alpha, &beta, C, A);
  polytune_timer_start();
  kernel_syrk(n, m, alpha, beta, C, A);
  polytune_timer_stop();
  polytune_dump(C, sizeof(DATA_TYPE[n][n]));

  free(C);
  free(A);
  return 0;
}
