/* 2mm: two chained matrix products, D := alpha * A * B * C + beta * D.
 * tmp (NI x NJ) holds alpha * A * B; A is NI x NK, B is NK x NJ, C is NJ x NL, D is NI x NL. */
#include "../harness/polytune.h"

#if defined(MINI_DATASET)
#define NI 16
#define NJ 18
#define NK 22
#define NL 24
#elif defined(SMALL_DATASET)
#define NI 40
#define NJ 50
#define NK 70
#define NL 80
#elif defined(MEDIUM_DATASET)
#define NI 180
#define NJ 190
#define NK 210
#define NL 220
#elif defined(LARGE_DATASET)
#define NI 800
#define NJ 900
#define NK 1100
#define NL 1200
#else
#define NI 1600
#define NJ 1800
#define NK 2200
#define NL 2400
#endif

#ifndef DATA_TYPE
#define DATA_TYPE double
#endif

static void init(int ni, int nj, int nk, int nl, DATA_TYPE *alpha, DATA_TYPE *beta,
                 DATA_TYPE A[ni][nk], DATA_TYPE B[nk][nj], DATA_TYPE C[nj][nl],
                 DATA_TYPE D[ni][nl])
{
  *alpha = 1.5;
  *beta = 1.2;
  for (int i = 0; i < ni; i++)
    for (int k = 0; k < nk; k++)
      A[i][k] = (DATA_TYPE)((i * k + 1) % ni) / ni;
  for (int k = 0; k < nk; k++)
    for (int j = 0; j < nj; j++)
      B[k][j] = (DATA_TYPE)(k * (j + 1) % nj) / nj;
  for (int j = 0; j < nj; j++)
    for (int l = 0; l < nl; l++)
      C[j][l] = (DATA_TYPE)((j * (l + 3) + 1) % nl) / nl;
  for (int i = 0; i < ni; i++)
    for (int l = 0; l < nl; l++)
      D[i][l] = (DATA_TYPE)(i * (l + 2) % nk) / nk;
}

static void kernel_2mm(int ni, int nj, int nk, int nl, DATA_TYPE alpha, DATA_TYPE beta,
                       DATA_TYPE tmp[ni][nj], DATA_TYPE A[ni][nk], DATA_TYPE B[nk][nj],
                       DATA_TYPE C[nj][nl], DATA_TYPE D[ni][nl])
{
  int i, j, k;
#pragma scop
  for (i = 0; i < ni; i++)
    for (j = 0; j < nj; j++) {
      tmp[i][j] = 0.0;
      for (k = 0; k < nk; ++k)
        tmp[i][j] += alpha * A[i][k] * B[k][j];
    }
  for (i = 0; i < ni; i++)
    for (j = 0; j < nl; j++) {
      D[i][j] *= beta;
      for (k = 0; k < nj; ++k)
        D[i][j] += tmp[i][k] * C[k][j];
    }
#pragma endscop
}

int main(void)
{
  int ni = NI, nj = NJ, nk = NK, nl = NL;
  DATA_TYPE alpha, beta;
  DATA_TYPE(*tmp)[nj] = polytune_alloc(sizeof(DATA_TYPE[ni][nj]));
  DATA_TYPE(*A)[nk] = polytune_alloc(sizeof(DATA_TYPE[ni][nk]));
  DATA_TYPE(*B)[nj] = polytune_alloc(sizeof(DATA_TYPE[nk][nj]));
  DATA_TYPE(*C)[nl] = polytune_alloc(sizeof(DATA_TYPE[nj][nl]));
  DATA_TYPE(*D)[nl] = polytune_alloc(sizeof(DATA_TYPE[ni][nl]));

  init(ni, nj, nk, nl, &alpha, &beta, A, B, C, D);
  polytune_timer_start();
  kernel_2mm(ni, nj, nk, nl, alpha, beta, tmp, A, B, C, D);
  polytune_timer_stop();
  polytune_dump(tmp, sizeof(DATA_TYPE[ni][nj]));
  polytune_dump(D, sizeof(DATA_TYPE[ni][nl]));

  free(tmp);
  free(A);
  free(B);
  free(C);
  free(D);
  return 0;
}
