/* durbin: Levinson-Durbin recursion. Solves the Yule-Walker system
 * T * y = -r, where T is the symmetric Toeplitz matrix with unit diagonal
 * whose off-diagonals are r[0], r[1], ..., r[n-2]. */
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

static void init(int n, DATA_TYPE r[n])
{
  for (int i = 0; i < n; i++)
    r[i] = n + 1 - i;
}

static void kernel_durbin(int n, DATA_TYPE r[n], DATA_TYPE y[n])
{
  int i, k;
  DATA_TYPE alpha, beta, sum;
  DATA_TYPE z[n];
#pragma scop
  y[0] = -r[0];
  beta = 1.0;
  alpha = -r[0];
  for (k = 1; k < n; k++) {
    beta = (1 - alpha * alpha) * beta;
    sum = 0.0;
    for (i = 0; i < k; i++)
      sum += r[k - i - 1] * y[i];
    alpha = -(r[k] + sum) / beta;
    for (i = 0; i < k; i++)
      z[i] = y[i] + alpha * y[k - i - 1];
    for (i = 0; i < k; i++)
      y[i] = z[i];
    y[k] = alpha;
  }
#pragma endscop
}

int main(void)
{
  int n = N;
  DATA_TYPE *r = polytune_alloc(sizeof(DATA_TYPE[n]));
  DATA_TYPE *y = polytune_alloc(sizeof(DATA_TYPE[n]));

  init(n, r);
  polytune_timer_start();
  kernel_durbin(n, r, y);
  polytune_timer_stop();
  polytune_dump(y, sizeof(DATA_TYPE[n]));

  free(r);
  free(y);
  return 0;
}
