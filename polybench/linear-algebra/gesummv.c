/* gesummv: sum of two matrix-vector products, y := alpha * A * x + beta * B * x,
 * with A and B of size N x N; tmp (length N) holds A * x. */
#include "../harness/polytune.h"

#if defined(MINI_DATASET)
#define N 30
#elif defined(SMALL_DATASET)
#define N 90
#elif defined(MEDIUM_DATASET)
#define N 250
#elif defined(LARGE_DATASET)
#define N 1300
#else
#define N 2800
#endif

#ifndef DATA_TYPE
#define DATA_TYPE double
#endif

static void init(int n, DATA_TYPE *alpha, DATA_TYPE *beta, DATA_TYPE A[n][n],
                 DATA_TYPE B[n][n], DATA_TYPE x[n])
{
  *alpha = 1.5;
  *beta = 1.2;
  for (int i = 0; i < n; i++) {
    x[i] = (DATA_TYPE)(i % n) / n;
    for (int j = 0; j < n; j++) {
      A[i][j] = (DATA_TYPE)((i * j + 1) % n) / n;
      B[i][j] = (DATA_TYPE)((i * j + 2) % n) / n;
    }
  }
}

static void kernel_gesummv(int n, DATA_TYPE alpha, DATA_TYPE beta, DATA_TYPE A[n][n],
                           DATA_TYPE B[n][n], DATA_TYPE tmp[n], DATA_TYPE x[n],
                           DATA_TYPE y[n])
{
  int i, j;
#pragma scop
  for (i = 0; i < n; i++) {
    tmp[i] = 0.0;
    y[i] = 0.0;
    for (j = 0; j < n; j++) {
      tmp[i] = A[i][j] * x[j] + tmp[i];
      y[i] = B[i][j] * x[j] + y[i];
    }
    y[i] = alpha * tmp[i] + beta * y[i];
  }
#pragma endscop
}

int main(void)
{
  int n = N;
  DATA_TYPE alpha, beta;
  DATA_TYPE(*A)[n] = polytune_alloc(sizeof(DATA_TYPE[n][n]));
  DATA_TYPE(*B)[n] = polytune_alloc(sizeof(DATA_TYPE[n][n]));
  DATA_TYPE *tmp = polytune_alloc(sizeof(DATA_TYPE[n]));
  DATA_TYPE *x = polytune_alloc(sizeof(DATA_TYPE[n]));
  DATA_TYPE *y = polytune_alloc(sizeof(DATA_TYPE[n]));

  init(n, &alpha, &beta, A, B, x);
  polytune_timer_start();
  kernel_gesummv(n, alpha, beta, A, B, tmp, x, y);
  polytune_timer_stop();
  polytune_dump(tmp, sizeof(DATA_TYPE[n]));
  polytune_dump(y, sizeof(DATA_TYPE[n]));

  free(A);
  free(B);
  free(tmp);
  free(x);
  free(y);
  return 0;
}
