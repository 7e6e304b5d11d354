/* bicg: the two matrix-vector products of BiCGStab, s := A^T * r and q := A * p,
 * with A of size N x M, r of length N and p of length M. */
#include "../harness/polytune.h"

#if defined(MINI_DATASET)
#define M 38
#define N 42
#elif defined(SMALL_DATASET)
#define M 116
#define N 124
#elif defined(MEDIUM_DATASET)
#define M 390
#define N 410
#elif defined(LARGE_DATASET)
#define M 1900
#define N 2100
#else
#define M 1800
#define N 2200
#endif

#ifndef DATA_TYPE
#define DATA_TYPE double
#endif

static void init(int m, int n, DATA_TYPE A[n][m], DATA_TYPE r[n], DATA_TYPE p[m])
{
  for (int j = 0; j < m; j++)
    p[j] = (DATA_TYPE)(j % m) / m;
  for (int i = 0; i < n; i++) {
    r[i] = (DATA_TYPE)(i % n) / n;
    for (int j = 0; j < m; j++)
      A[i][j] = (DATA_TYPE)(i * (j + 1) % n) / n;
  }
}

static void kernel_bicg(int m, int n, DATA_TYPE A[n][m], DATA_TYPE s[m], DATA_TYPE q[n],
                        DATA_TYPE p[m], DATA_TYPE r[n])
{
  int i, j;
#pragma scop
  for (i = 0; i < m; i++)
    s[i] = 0.0;
  for (i = 0; i < n; i++) {
    q[i] = 0.0;
    for (j = 0; j < m; j++) {
      s[j] = s[j] + r[i] * A[i][j];
      q[i] = q[i] + A[i][j] * p[j];
    }
  }
#pragma endscop
}

int main(void)
{
  int m = M, n = N;
  DATA_TYPE(*A)[m] = polytune_alloc(sizeof(DATA_TYPE[n][m]));
  DATA_TYPE *s = polytune_alloc(sizeof(DATA_TYPE[m]));
  DATA_TYPE *q = polytune_alloc(sizeof(DATA_TYPE[n]));
  DATA_TYPE *p = polytune_alloc(sizeof(DATA_TYPE[m]));
  DATA_TYPE *r = polytune_alloc(sizeof(DATA_TYPE[n]));

  init(m, n, A, r, p);
  polytune_timer_start();
  kernel_bicg(m, n, A, s, q, p, r);
  polytune_timer_stop();
  polytune_dump(s, sizeof(DATA_TYPE[m]));
  polytune_dump(q, sizeof(DATA_TYPE[n]));

  free(A);
  free(s);
  free(q);
  free(p);
  free(r);
  return 0;
}
