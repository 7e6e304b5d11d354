/* seidel-2d: TSTEPS in-place Gauss-Seidel sweeps of a 9-point averaging stencil
 * over the interior of an N x N grid A (each update already sees the new values
 * of the points visited before it in the same sweep). */
#include "../harness/polytune.h"

#if defined(MINI_DATASET)
#define TSTEPS 20
#define N 40
#elif defined(SMALL_DATASET)
#define TSTEPS 40
#define N 120
#elif defined(MEDIUM_DATASET)
#define TSTEPS 100
#define N 400
#elif defined(LARGE_DATASET)
#define TSTEPS 500
#define N 2000
#else
#define TSTEPS 1000
#define N 4000
#endif

#ifndef DATA_TYPE
#define DATA_TYPE double
#endif

static void init(int n, DATA_TYPE A[n][n])
{
  /* PolyBench's own inputs are (bi)linear, a fixed point of this stencil: any
     order of updates gives the same output and verification could not tell a
     wrong schedule. The irregular term makes the output depend on the order. */
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      A[i][j] = ((DATA_TYPE)i * (j + 2) + 2) / n + (DATA_TYPE)((i * 7 + j * 13) % 17) / 17;
}

static void kernel_seidel_2d(int tsteps, int n, DATA_TYPE A[n][n])
{
  int t, i, j;
#pragma scop
  for (t = 0; t <= tsteps - 1; t++)
    for (i = 1; i <= n - 2; i++)
      for (j = 1; j <= n - 2; j++)
        A[i][j] = (A[i - 1][j - 1] + A[i - 1][j] + A[i - 1][j + 1]
                   + A[i][j - 1] + A[i][j] + A[i][j + 1]
                   + A[i + 1][j - 1] + A[i + 1][j] + A[i + 1][j + 1]) / 9.0;
#pragma endscop
}

int main(void)
{
  int tsteps = TSTEPS, n = N;
  DATA_TYPE(*A)[n] = polytune_alloc(sizeof(DATA_TYPE[n][n]));

  init(n, A);
  polytune_timer_start();
  kernel_seidel_2d(tsteps, n, A);
  polytune_timer_stop();
  polytune_dump(A, sizeof(DATA_TYPE[n][n]));

  free(A);
  return 0;
}
