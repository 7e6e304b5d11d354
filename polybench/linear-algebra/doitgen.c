/* doitgen: multi-resolution analysis kernel (MADNESS). For every (r, q), the row
 * A[r][q][:] is replaced by A[r][q][:] * C4, with A of size NR x NQ x NP and C4 of
 * NP x NP; sum (length NP) is the scratch row. */
#include "../harness/polytune.h"

#if defined(MINI_DATASET)
#define NP 12
#define NQ 8
#define NR 10
#elif defined(SMALL_DATASET)
#define NP 30
#define NQ 20
#define NR 25
#elif defined(MEDIUM_DATASET)
#define NP 60
#define NQ 40
#define NR 50
#elif defined(LARGE_DATASET)
#define NP 160
#define NQ 140
#define NR 150
#else
#define NP 270
#define NQ 220
#define NR 250
#endif

#ifndef DATA_TYPE
#define DATA_TYPE double
#endif

static void init(int nr, int nq, int np, DATA_TYPE A[nr][nq][np], DATA_TYPE C4[np][np])
{
  for (int r = 0; r < nr; r++)
    for (int q = 0; q < nq; q++)
      for (int p = 0; p < np; p++)
        A[r][q][p] = (DATA_TYPE)((r * q + p) % np) / np;
  for (int s = 0; s < np; s++)
    for (int p = 0; p < np; p++)
      C4[s][p] = (DATA_TYPE)(s * p % np) / np;
}

static void kernel_doitgen(int nr, int nq, int np, DATA_TYPE A[nr][nq][np],
                           DATA_TYPE C4[np][np], DATA_TYPE sum[np])
{
  int r, q, p, s;
#pragma scop
  for (r = 0; r < nr; r++)
    for (q = 0; q < nq; q++) {
      for (p = 0; p < np; p++) {
        sum[p] = 0.0;
        for (s = 0; s < np; s++)
          sum[p] += A[r][q][s] * C4[s][p];
      }
      for (p = 0; p < np; p++)
        A[r][q][p] = sum[p];
    }
#pragma endscop
}

int main(void)
{
  int nr = NR, nq = NQ, np = NP;
  DATA_TYPE(*A)[nq][np] = polytune_alloc(sizeof(DATA_TYPE[nr][nq][np]));
  DATA_TYPE(*C4)[np] = polytune_alloc(sizeof(DATA_TYPE[np][np]));
  DATA_TYPE *sum = polytune_alloc(sizeof(DATA_TYPE[np]));

  init(nr, nq, np, A, C4);
  polytune_timer_start();
  kernel_doitgen(nr, nq, np, A, C4, sum);
  polytune_timer_stop();
  polytune_dump(A, sizeof(DATA_TYPE[nr][nq][np]));
  polytune_dump(sum, sizeof(DATA_TYPE[np]));

  free(A);
  free(C4);
  free(sum);
  return 0;
}
