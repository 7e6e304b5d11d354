/* gemm: C := alpha * A * B + beta * C, with A of size NI x NK and B of NK x NJ. */
#include "../harness/polytune.h"

#if defined(MINI_DATASET)
#define NI 20
#define NJ 25
#define NK 30
#elif defined(SMALL_DATASET)
#define NI 60
#define NJ 70
#define NK 80
#elif defined(MEDIUM_DATASET)
#define NI 200
#define NJ 220
#define NK 240
#elif defined(LARGE_DATASET)
#define NI 1000
#define NJ 1100
#define NK 1200
#else
#define NI 2000
#define NJ 2300
#define NK 2600
#endif

#ifndef DATA_TYPE
#define DATA_TYPE double
#endif

static void init(int ni, int nj, int nk, DATA_TYPE *alpha, DATA_TYPE *beta,
                 DATA_TYPE C[ni][nj], DATA_TYPE A[ni][nk], DATA_TYPE B[nk][nj])
{
  *alpha = 1.5;
  *beta = 1.2;
  for (int i = 0; i < ni; i++)
    for (int j = 0; j < nj; j++)
      C[i][j] = (DATA_TYPE)((i * j + 1) % ni) / ni;
  for (int i = 0; i < ni; i++)
    for (int k = 0; k < nk; k++)
      A[i][k] = (DATA_TYPE)(i * (k + 1) % nk) / nk;
  for (int k = 0; k < nk; k++)
    for (int j = 0; j < nj; j++)
      B[k][j] = (DATA_TYPE)(k * (j + 2) % nj) / nj;
}

static void kernel_gemm(int ni, int nj, int nk, DATA_TYPE alpha, DATA_TYPE beta,
                        DATA_TYPE C[ni][nj], DATA_TYPE A[ni][nk], DATA_TYPE B[nk][nj])
{
  int i, j, k;
#pragma scop
  for (i = 0; i < ni; i++) {
    for (j = 0; j < nj; j++)
      C[i][j] *= beta;
    for (k = 0; k < nk; k++)
      for (j = 0; j < nj; j++)
        C[i][j] += alpha * A[i][k] * B[k][j];
  }
#pragma endscop
}

int main(void)
{
  int ni = NI, nj = NJ, nk = NK;
  DATA_TYPE alpha, beta;
  DATA_TYPE(*C)[nj] = polytune_alloc(sizeof(DATA_TYPE[ni][nj]));
  DATA_TYPE(*A)[nk] = polytune_alloc(sizeof(DATA_TYPE[ni][nk]));
  DATA_TYPE(*B)[nj] = polytune_alloc(sizeof(DATA_TYPE[nk][nj]));

  init(ni, nj, nk, &alpha, &beta, C, A, B);
  polytune_timer_start();
  kernel_gemm(ni, nj, nk, alpha, beta, C, A, B);
  polytune_timer_stop();
  polytune_dump(C, sizeof(DATA_TYPE[ni][nj]));

  free(C);
  free(A);
  free(B);
  return 0;
}
