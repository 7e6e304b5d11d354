/* 3mm: three matrix products, G := (A * B) * (C * D).
 * E = A * B (NI x NJ), F = C * D (NJ x NL), G = E * F (NI x NL);
 * A is NI x NK, B is NK x NJ, C is NJ x NM, D is NM x NL. */
#include "../harness/polytune.h"

#if defined(MINI_DATASET)
#define NI 16
#define NJ 18
#define NK 20
#define NL 22
#define NM 24
#elif defined(SMALL_DATASET)
#define NI 40
#define NJ 50
#define NK 60
#define NL 70
#define NM 80
#elif defined(MEDIUM_DATASET)
#define NI 180
#define NJ 190
#define NK 200
#define NL 210
#define NM 220
#elif defined(LARGE_DATASET)
#define NI 800
#define NJ 900
#define NK 1000
#define NL 1100
#define NM 1200
#else
#define NI 1600
#define NJ 1800
#define NK 2000
#define NL 2200
#define NM 2400
#endif

#ifndef DATA_TYPE
#define DATA_TYPE double
#endif

static void init(int ni, int nj, int nk, int nl, int nm, DATA_TYPE A[ni][nk],
                 DATA_TYPE B[nk][nj], DATA_TYPE C[nj][nm], DATA_TYPE D[nm][nl])
{
  for (int i = 0; i < ni; i++)
    for (int k = 0; k < nk; k++)
      A[i][k] = (DATA_TYPE)((i * k + 1) % ni) / (5 * ni);
  for (int k = 0; k < nk; k++)
    for (int j = 0; j < nj; j++)
      B[k][j] = (DATA_TYPE)((k * (j + 1) + 2) % nj) / (5 * nj);
  for (int j = 0; j < nj; j++)
    for (int m = 0; m < nm; m++)
      C[j][m] = (DATA_TYPE)(j * (m + 3) % nl) / (5 * nl);
  for (int m = 0; m < nm; m++)
    for (int l = 0; l < nl; l++)
      D[m][l] = (DATA_TYPE)((m * (l + 2) + 2) % nk) / (5 * nk);
}

static void kernel_3mm(int ni, int nj, int nk, int nl, int nm, DATA_TYPE E[ni][nj],
                       DATA_TYPE A[ni][nk], DATA_TYPE B[nk][nj], DATA_TYPE F[nj][nl],
                       DATA_TYPE C[nj][nm], DATA_TYPE D[nm][nl], DATA_TYPE G[ni][nl])
{
  int i, j, k;
#pragma scop
  for (i = 0; i < ni; i++)
    for (j = 0; j < nj; j++) {
      E[i][j] = 0.0;
      for (k = 0; k < nk; ++k)
        E[i][j] += A[i][k] * B[k][j];
    }
  for (i = 0; i < nj; i++)
    for (j = 0; j < nl; j++) {
      F[i][j] = 0.0;
      for (k = 0; k < nm; ++k)
        F[i][j] += C[i][k] * D[k][j];
    }
  for (i = 0; i < ni; i++)
    for (j = 0; j < nl; j++) {
      G[i][j] = 0.0;
      for (k = 0; k < nj; ++k)
        G[i][j] += E[i][k] * F[k][j];
    }
#pragma endscop
}

int main(void)
{
  int ni = NI, nj = NJ, nk = NK, nl = NL, nm = NM;
  DATA_TYPE(*E)[nj] = polytune_alloc(sizeof(DATA_TYPE[ni][nj]));
  DATA_TYPE(*A)[nk] = polytune_alloc(sizeof(DATA_TYPE[ni][nk]));
  DATA_TYPE(*B)[nj] = polytune_alloc(sizeof(DATA_TYPE[nk][nj]));
  DATA_TYPE(*F)[nl] = polytune_alloc(sizeof(DATA_TYPE[nj][nl]));
  DATA_TYPE(*C)[nm] = polytune_alloc(sizeof(DATA_TYPE[nj][nm]));
  DATA_TYPE(*D)[nl] = polytune_alloc(sizeof(DATA_TYPE[nm][nl]));
  DATA_TYPE(*G)[nl] = polytune_alloc(sizeof(DATA_TYPE[ni][nl]));

  init(ni, nj, nk, nl, nm, A, B, C, D);
  polytune_timer_start();
  kernel_3mm(ni, nj, nk, nl, nm, E, A, B, F, C, D, G);
  polytune_timer_stop();
  polytune_dump(E, sizeof(DATA_TYPE[ni][nj]));
  polytune_dump(F, sizeof(DATA_TYPE[nj][nl]));
  polytune_dump(G, sizeof(DATA_TYPE[ni][nl]));

  free(E);
  free(A);
  free(B);
  free(F);
  free(C);
  free(D);
  free(G);
  return 0;
}
