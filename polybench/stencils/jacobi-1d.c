/* jacobi-1d: TSTEPS time steps of a 3-point Jacobi averaging stencil on a 1-D
 * grid of N points, ping-ponging between A and B (boundary points stay fixed). */
#include "../harness/polytune.h"

#if defined(MINI_DATASET)
#define TSTEPS 20
#define N 30
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

static void init(int n, DATA_TYPE A[n], DATA_TYPE B[n])
{
  /* PolyBench's own inputs are (bi)linear, a fixed point of this stencil: any
     order of updates gives the same output and verification could not tell a
     wrong schedule. The irregular term makes the output depend on the order. */
  for (int i = 0; i < n; i++) {
    A[i] = ((DATA_TYPE)i + 2) / n + (DATA_TYPE)((i * 7) % 11) / 11;
    B[i] = ((DATA_TYPE)i + 3) / n + (DATA_TYPE)((i * 5) % 13) / 13;
  }
}

static void kernel_jacobi_1d(int tsteps, int n, DATA_TYPE A[n], DATA_TYPE B[n])
{
  int t, i;
#pragma scop
  for (t = 0; t < tsteps; t++) {
    for (i = 1; i < n - 1; i++)
      B[i] = 0.33333 * (A[i - 1] + A[i] + A[i + 1]);
    for (i = 1; i < n - 1; i++)
      A[i] = 0.33333 * (B[i - 1] + B[i] + B[i + 1]);
  }
#pragma endscop
}

int main(void)
{
  int tsteps = TSTEPS, n = N;
  DATA_TYPE *A = polytune_alloc(sizeof(DATA_TYPE[n]));
  DATA_TYPE *B = polytune_alloc(sizeof(DATA_TYPE[n]));

  init(n, A, B);
  polytune_timer_start();
  kernel_jacobi_1d(tsteps, n, A, B);
  polytune_timer_stop();
  polytune_dump(A, sizeof(DATA_TYPE[n]));
  polytune_dump(B, sizeof(DATA_TYPE[n]));

  free(A);
  free(B);
  return 0;
}
