/* jacobi-2d: TSTEPS time steps of a 5-point Jacobi averaging stencil on an
 * N x N grid, ping-ponging between A and B (the border rows/columns stay fixed). */
#include "../harness/polytune.h"

#if defined(MINI_DATASET)
#define TSTEPS 20
#define N 30
#elif defined(SMALL_DATASET)
#define TSTEPS 40
#define N 90
#elif defined(MEDIUM_DATASET)
#define TSTEPS 100
#define N 250
#elif defined(LARGE_DATASET)
#define TSTEPS 500
#define N 1300
#else
#define TSTEPS 1000
#define N 2800
#endif

#ifndef DATA_TYPE
#define DATA_TYPE double
#endif

static void init(int n, DATA_TYPE A[n][n], DATA_TYPE B[n][n])
{
  /* PolyBench's own inputs are (bi)linear, a fixed point of this stencil: any
     order of updates gives the same output and verification could not tell a
     wrong schedule. The irregular term makes the output depend on the order. */
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      A[i][j] = ((DATA_TYPE)i * (j + 2) + 2) / n + (DATA_TYPE)((i * 7 + j * 13) % 17) / 17;
      B[i][j] = ((DATA_TYPE)i * (j + 3) + 3) / n + (DATA_TYPE)((i * 5 + j * 11) % 19) / 19;
    }
}

static void kernel_jacobi_2d(int tsteps, int n, DATA_TYPE A[n][n], DATA_TYPE B[n][n])
{
  int t, i, j;
#pragma scop
  for (t = 0; t < tsteps; t++) {
    for (i = 1; i < n - 1; i++)
      for (j = 1; j < n - 1; j++)
        B[i][j] = 0.2 * (A[i][j] + A[i][j - 1] + A[i][1 + j] + A[1 + i][j] + A[i - 1][j]);
    for (i = 1; i < n - 1; i++)
      for (j = 1; j < n - 1; j++)
        A[i][j] = 0.2 * (B[i][j] + B[i][j - 1] + B[i][1 + j] + B[1 + i][j] + B[i - 1][j]);
  }
#pragma endscop
}

int main(void)
{
  int tsteps = TSTEPS, n = N;
  DATA_TYPE(*A)[n] = polytune_alloc(sizeof(DATA_TYPE[n][n]));
  DATA_TYPE(*B)[n] = polytune_alloc(sizeof(DATA_TYPE[n][n]));

  init(n, A, B);
  polytune_timer_start();
  kernel_jacobi_2d(tsteps, n, A, B);
  polytune_timer_stop();
  polytune_dump(A, sizeof(DATA_TYPE[n][n]));
  polytune_dump(B, sizeof(DATA_TYPE[n][n]));

  free(A);
  free(B);
  return 0;
}
