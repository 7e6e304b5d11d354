/* trisolv: forward substitution, solves L * x = b for x with L an N x N lower
 * triangular matrix. */
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

/* L[i][j] = 2 (i - j + n + 1) / n on and below the diagonal (diagonal entries
 * 2 (n+1)/n, never zero); b[i] = i; x starts at -999 and is fully overwritten. */
static void init(int n, DATA_TYPE L[n][n], DATA_TYPE x[n], DATA_TYPE b[n])
{
  for (int i = 0; i < n; i++) {
    x[i] = -999;
    b[i] = i;
    for (int j = 0; j <= i; j++)
      L[i][j] = (DATA_TYPE)(i + n - j + 1) * 2 / n;
  }
}

static void kernel_trisolv(int n, DATA_TYPE L[n][n], DATA_TYPE x[n], DATA_TYPE b[n])
{
  int i, j;
#pragma scop
  for (i = 0; i < n; i++) {
    x[i] = b[i];
    for (j = 0; j < i; j++)
      x[i] -= L[i][j] * x[j];
    x[i] = x[i] / L[i][i];
  }
#pragma endscop
}

int main(void)
{
  int n = N;
  DATA_TYPE(*L)[n] = polytune_alloc(sizeof(DATA_TYPE[n][n]));
  DATA_TYPE *x = polytune_alloc(sizeof(DATA_TYPE[n]));
  DATA_TYPE *b = polytune_alloc(sizeof(DATA_TYPE[n]));

  init(n, L, x, b);
  polytune_timer_start();
  kernel_trisolv(n, L, x, b);
  polytune_timer_stop();
  polytune_dump(x, sizeof(DATA_TYPE[n]));

  free(L);
  free(x);
  free(b);
  return 0;
}
