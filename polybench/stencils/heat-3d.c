/* heat-3d: TSTEPS time steps of an explicit 3-D heat-equation stencil (7 points,
 * coefficient 1/8 per axis) on an N x N x N grid, ping-ponging A -> B -> A;
 * the boundary faces stay fixed. */
#include "../harness/polytune.h"

#if defined(MINI_DATASET)
#define TSTEPS 20
#define N 10
#elif defined(SMALL_DATASET)
#define TSTEPS 40
#define N 20
#elif defined(MEDIUM_DATASET)
#define TSTEPS 100
#define N 40
#elif defined(LARGE_DATASET)
#define TSTEPS 500
#define N 120
#else
#define TSTEPS 1000
#define N 200
#endif

#ifndef DATA_TYPE
#define DATA_TYPE double
#endif

static void init(int n, DATA_TYPE A[n][n][n], DATA_TYPE B[n][n][n])
{
  /* PolyBench's own inputs are (bi)linear, a fixed point of this stencil: any
     order of updates gives the same output and verification could not tell a
     wrong schedule. The irregular term makes the output depend on the order. */
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      for (int k = 0; k < n; k++) {
        A[i][j][k] = (DATA_TYPE)(i + j + (n - k)) * 10 / n + (DATA_TYPE)((i * 7 + j * 13 + k * 5) % 17) / 17;
        B[i][j][k] = A[i][j][k];
      }
}

static void kernel_heat_3d(int tsteps, int n, DATA_TYPE A[n][n][n], DATA_TYPE B[n][n][n])
{
  int t, i, j, k;
#pragma scop
  for (t = 1; t <= tsteps; t++) {
    for (i = 1; i < n - 1; i++)
      for (j = 1; j < n - 1; j++)
        for (k = 1; k < n - 1; k++)
          B[i][j][k] = 0.125 * (A[i + 1][j][k] - 2.0 * A[i][j][k] + A[i - 1][j][k])
                     + 0.125 * (A[i][j + 1][k] - 2.0 * A[i][j][k] + A[i][j - 1][k])
                     + 0.125 * (A[i][j][k + 1] - 2.0 * A[i][j][k] + A[i][j][k - 1])
                     + A[i][j][k];
    for (i = 1; i < n - 1; i++)
      for (j = 1; j < n - 1; j++)
        for (k = 1; k < n - 1; k++)
          A[i][j][k] = 0.125 * (B[i + 1][j][k] - 2.0 * B[i][j][k] + B[i - 1][j][k])
                     + 0.125 * (B[i][j + 1][k] - 2.0 * B[i][j][k] + B[i][j - 1][k])
                     + 0.125 * (B[i][j][k + 1] - 2.0 * B[i][j][k] + B[i][j][k - 1])
                     + B[i][j][k];
  }
#pragma endscop
}

int main(void)
{
  int tsteps = TSTEPS, n = N;
  DATA_TYPE(*A)[n][n] = polytune_alloc(sizeof(DATA_TYPE[n][n][n]));
  DATA_TYPE(*B)[n][n] = polytune_alloc(sizeof(DATA_TYPE[n][n][n]));

  init(n, A, B);
  polytune_timer_start();
  kernel_heat_3d(tsteps, n, A, B);
  polytune_timer_stop();
  polytune_dump(A, sizeof(DATA_TYPE[n][n][n]));
  polytune_dump(B, sizeof(DATA_TYPE[n][n][n]));

  free(A);
  free(B);
  return 0;
}
