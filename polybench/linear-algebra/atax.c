/* atax: y := A^T * (A * x), with A of size M x N; tmp (length M) holds A * x. */
#include "../harness/polytune.h"

#if defined(MINI_DATASET)
#define M 38
#define N 42
#elif defined(SMALL_DATASET)
#define M 116
#define N 124
#elif defined(MEDIUM_DATASET)
#define M 390
#define N 410
#elif defined(LARGE_DATASET)
#define M 1900
#define N 2100
#else
#define M 1800
#define N 2200
#endif

#ifndef DATA_TYPE
#define DATA_TYPE double
#endif

static void init(int m, int n, DATA_TYPE A[m][n], DATA_TYPE x[n])
{
  DATA_TYPE fn = (DATA_TYPE)n;
  for (int j = 0; j < n; j++)
    x[j] = 1 + j / fn;
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++)
      A[i][j] = (DATA_TYPE)((i + j) % n) / (5 * m);
}

static void kernel_atax(int m, int n, DATA_TYPE A[m][n], DATA_TYPE x[n], DATA_TYPE y[n],
                        DATA_TYPE tmp[m])
{
  int i, j;
#pragma scop
  for (i = 0; i < n; i++)
    y[i] = 0.0;
  for (i = 0; i < m; i++) {
    tmp[i] = 0.0;
    for (j = 0; j < n; j++)
      tmp[i] = tmp[i] + A[i][j] * x[j];
    for (j = 0; j < n; j++)
      y[j] = y[j] + A[i][j] * tmp[i];
  }
#pragma endscop
}

int main(void)
{
  int m = M, n = N;
  DATA_TYPE(*A)[n] = polytune_alloc(sizeof(DATA_TYPE[m][n]));
  DATA_TYPE *x = polytune_alloc(sizeof(DATA_TYPE[n]));
  DATA_TYPE *y = polytune_alloc(sizeof(DATA_TYPE[n]));
  DATA_TYPE *tmp = polytune_alloc(sizeof(DATA_TYPE[m]));

  init(m, n, A, x);
  polytune_timer_start();
  kernel_atax(m, n, A, x, y, tmp);
  polytune_timer_stop();
  polytune_dump(y, sizeof(DATA_TYPE[n]));
  polytune_dump(tmp, sizeof(DATA_TYPE[m]));

  free(A);
  free(x);
  free(y);
  free(tmp);
  return 0;
}
