/* mvt: two matrix-vector products sharing one matrix,
 * x1 := x1 + A * y_1 and x2 := x2 + A^T * y_2, with A of size N x N. */
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

static void init(int n, DATA_TYPE x1[n], DATA_TYPE x2[n], DATA_TYPE y_1[n], DATA_TYPE y_2[n],
                 DATA_TYPE A[n][n])
{
  for (int i = 0; i < n; i++) {
    x1[i] = (DATA_TYPE)(i % n) / n;
    x2[i] = (DATA_TYPE)((i + 1) % n) / n;
    y_1[i] = (DATA_TYPE)((i + 3) % n) / n;
    y_2[i] = (DATA_TYPE)((i + 4) % n) / n;
    for (int j = 0; j < n; j++)
      A[i][j] = (DATA_TYPE)(i * j % n) / n;
  }
}

static void kernel_mvt(int n, DATA_TYPE x1[n], DATA_TYPE x2[n], DATA_TYPE y_1[n],
                       DATA_TYPE y_2[n], DATA_TYPE A[n][n])
{
  int i, j;
#pragma scop
  for (i = 0; i < n; i++)
    for (j = 0; j < n; j++)
      x1[i] = x1[i] + A[i][j] * y_1[j];
  for (i = 0; i < n; i++)
    for (j = 0; j < n; j++)
      x2[i] = x2[i] + A[j][i] * y_2[j];
#pragma endscop
}

int main(void)
{
  int n = N;
  DATA_TYPE *x1 = polytune_alloc(sizeof(DATA_TYPE[n]));
  DATA_TYPE *x2 = polytune_alloc(sizeof(DATA_TYPE[n]));
  DATA_TYPE *y_1 = polytune_alloc(sizeof(DATA_TYPE[n]));
  DATA_TYPE *y_2 = polytune_alloc(sizeof(DATA_TYPE[n]));
  DATA_TYPE(*A)[n] = polytune_alloc(sizeof(DATA_TYPE[n][n]));

  init(n, x1, x2, y_1, y_2, A);
  polytune_timer_start();
  kernel_mvt(n, x1, x2, y_1, y_2, A);
  polytune_timer_stop();
  polytune_dump(x1, sizeof(DATA_TYPE[n]));
  polytune_dump(x2, sizeof(DATA_TYPE[n]));

  free(x1);
  free(x2);
  free(y_1);
  free(y_2);
  free(A);
  return 0;
}
