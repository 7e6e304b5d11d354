/* trmm: triangular matrix product, B := alpha * A^T * B, where A (M x M) is unit
 * lower triangular (only its strict lower triangle is read, the diagonal is taken
 * as 1) and B is M x N. B is overwritten in place, top row first. */
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

static void init(int m, int n, DATA_TYPE *alpha, DATA_TYPE A[m][m], DATA_TYPE B[m][n])
{
  *alpha = 1.5;
  for (int i = 0; i < m; i++) {
    for (int k = 0; k < i; k++)
      A[i][k] = (DATA_TYPE)((i + k) % m) / m;
    A[i][i] = 1.0;
    for (int j = 0; j < n; j++)
      B[i][j] = (DATA_TYPE)((n + (i - j)) % n) / n;
  }
}

static void kernel_trmm(int m, int n, DATA_TYPE alpha, DATA_TYPE A[m][m], DATA_TYPE B[m][n])
{
  int i, j, k;
#pragma scop
  for (i = 0; i < m; i++)
    for (j = 0; j < n; j++) {
      for (k = i + 1; k < m; k++)
        B[i][j] += A[k][i] * B[k][j];
      B[i][j] = alpha * B[i][j];
    }
#pragma endscop
}

int main(void)
{
  int m = M, n = N;
  DATA_TYPE alpha;
  DATA_TYPE(*A)[m] = polytune_alloc(sizeof(DATA_TYPE[m][m]));
  DATA_TYPE(*B)[n] = polytune_alloc(sizeof(DATA_TYPE[m][n]));

  init(m, n, &alpha, A, B);
  polytune_timer_start();
  kernel_trmm(m, n, alpha, A, B);
  polytune_timer_stop();
  polytune_dump(B, sizeof(DATA_TYPE[m][n]));

  free(A);
  free(B);
  return 0;
}
