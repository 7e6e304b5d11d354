/* gemver: rank-2 update followed by two matrix-vector products, all N x N:
 * A := A + u1 * v1^T + u2 * v2^T;  x := x + beta * A^T * y + z;  w := w + alpha * A * x. */
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

static void init(int n, DATA_TYPE *alpha, DATA_TYPE *beta, DATA_TYPE A[n][n],
                 DATA_TYPE u1[n], DATA_TYPE v1[n], DATA_TYPE u2[n], DATA_TYPE v2[n],
                 DATA_TYPE w[n], DATA_TYPE x[n], DATA_TYPE y[n], DATA_TYPE z[n])
{
  DATA_TYPE fn = (DATA_TYPE)n;
  *alpha = 1.5;
  *beta = 1.2;
  for (int i = 0; i < n; i++) {
    u1[i] = i;
    u2[i] = ((i + 1) / fn) / 2.0;
    v1[i] = ((i + 1) / fn) / 4.0;
    v2[i] = ((i + 1) / fn) / 6.0;
    y[i] = ((i + 1) / fn) / 8.0;
    z[i] = ((i + 1) / fn) / 9.0;
    x[i] = 0.0;
    w[i] = 0.0;
    for (int j = 0; j < n; j++)
      A[i][j] = (DATA_TYPE)(i * j % n) / n;
  }
}

static void kernel_gemver(int n, DATA_TYPE alpha, DATA_TYPE beta, DATA_TYPE A[n][n],
                          DATA_TYPE u1[n], DATA_TYPE v1[n], DATA_TYPE u2[n], DATA_TYPE v2[n],
                          DATA_TYPE w[n], DATA_TYPE x[n], DATA_TYPE y[n], DATA_TYPE z[n])
{
  int i, j;
#pragma scop
  for (i = 0; i < n; i++)
    for (j = 0; j < n; j++)
      A[i][j] = A[i][j] + u1[i] * v1[j] + u2[i] * v2[j];
  for (i = 0; i < n; i++)
    for (j = 0; j < n; j++)
      x[i] = x[i] + beta * A[j][i] * y[j];
  for (i = 0; i < n; i++)
    x[i] = x[i] + z[i];
  for (i = 0; i < n; i++)
    for (j = 0; j < n; j++)
      w[i] = w[i] + alpha * A[i][j] * x[j];
#pragma endscop
}

int main(void)
{
  int n = N;
  DATA_TYPE alpha, beta;
  DATA_TYPE(*A)[n] = polytune_alloc(sizeof(DATA_TYPE[n][n]));
  DATA_TYPE *u1 = polytune_alloc(sizeof(DATA_TYPE[n]));
  DATA_TYPE *v1 = polytune_alloc(sizeof(DATA_TYPE[n]));
  DATA_TYPE *u2 = polytune_alloc(sizeof(DATA_TYPE[n]));
  DATA_TYPE *v2 = polytune_alloc(sizeof(DATA_TYPE[n]));
  DATA_TYPE *w = polytune_alloc(sizeof(DATA_TYPE[n]));
  DATA_TYPE *x = polytune_alloc(sizeof(DATA_TYPE[n]));
  DATA_TYPE *y = polytune_alloc(sizeof(DATA_TYPE[n]));
  DATA_TYPE *z = polytune_alloc(sizeof(DATA_TYPE[n]));

  init(n, &alpha, &beta, A, u1, v1, u2, v2, w, x, y, z);
  polytune_timer_start();
  kernel_gemver(n, alpha, beta, A, u1, v1, u2, v2, w, x, y, z);
  polytune_timer_stop();
  polytune_dump(A, sizeof(DATA_TYPE[n][n]));
  polytune_dump(w, sizeof(DATA_TYPE[n]));
  polytune_dump(x, sizeof(DATA_TYPE[n]));

  free(A);
  free(u1);
  free(v1);
  free(u2);
  free(v2);
  free(w);
  free(x);
  free(y);
  free(z);
  return 0;
}
