/* adi: TSTEPS steps of Alternating Direction Implicit integration of a 2-D heat
 * equation on an N x N grid u. Each step does a column sweep (tridiagonal solves
 * along one axis, result in v) then a row sweep (solves along the other axis,
 * result back in u); p and q hold the forward-elimination coefficients and the
 * back substitution runs with a decreasing loop. */
#include "../harness/polytune.h"

#if defined(MINI_DATASET)
#define TSTEPS 20
#define N 20
#elif defined(SMALL_DATASET)
#define TSTEPS 40
#define N 60
#elif defined(MEDIUM_DATASET)
#define TSTEPS 100
#define N 200
#elif defined(LARGE_DATASET)
#define TSTEPS 500
#define N 1000
#else
#define TSTEPS 1000
#define N 2000
#endif

#ifndef DATA_TYPE
#define DATA_TYPE double
#endif

static void init(int n, DATA_TYPE u[n][n])
{
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      u[i][j] = (DATA_TYPE)(i + n - j) / n;
}

static void kernel_adi(int tsteps, int n, DATA_TYPE u[n][n], DATA_TYPE v[n][n],
                       DATA_TYPE p[n][n], DATA_TYPE q[n][n])
{
  int t, i, j;
  DATA_TYPE DX, DY, DT;
  DATA_TYPE B1, B2;
  DATA_TYPE mul1, mul2;
  DATA_TYPE a, b, c, d, e, f;
#pragma scop
  DX = 1.0 / n;
  DY = 1.0 / n;
  DT = 1.0 / tsteps;
  B1 = 2.0;
  B2 = 1.0;
  mul1 = B1 * DT / (DX * DX);
  mul2 = B2 * DT / (DY * DY);

  a = -mul1 / 2.0;
  b = 1.0 + mul1;
  c = a;
  d = -mul2 / 2.0;
  e = 1.0 + mul2;
  f = d;

  for (t = 1; t <= tsteps; t++) {
    /* column sweep: implicit along the first index, writes v */
    for (i = 1; i < n - 1; i++) {
      v[0][i] = 1.0;
      p[i][0] = 0.0;
      q[i][0] = v[0][i];
      for (j = 1; j < n - 1; j++) {
        p[i][j] = -c / (a * p[i][j - 1] + b);
        q[i][j] = (-d * u[j][i - 1] + (1.0 + 2.0 * d) * u[j][i] - f * u[j][i + 1]
                   - a * q[i][j - 1]) / (a * p[i][j - 1] + b);
      }
      v[n - 1][i] = 1.0;
      for (j = n - 2; j >= 1; j--)
        v[j][i] = p[i][j] * v[j + 1][i] + q[i][j];
    }
    /* row sweep: implicit along the second index, writes u */
    for (i = 1; i < n - 1; i++) {
      u[i][0] = 1.0;
      p[i][0] = 0.0;
      q[i][0] = u[i][0];
      for (j = 1; j < n - 1; j++) {
        p[i][j] = -f / (d * p[i][j - 1] + e);
        q[i][j] = (-a * v[i - 1][j] + (1.0 + 2.0 * a) * v[i][j] - c * v[i + 1][j]
                   - d * q[i][j - 1]) / (d * p[i][j - 1] + e);
      }
      u[i][n - 1] = 1.0;
      for (j = n - 2; j >= 1; j--)
        u[i][j] = p[i][j] * u[i][j + 1] + q[i][j];
    }
  }
#pragma endscop
}

int main(void)
{
  int tsteps = TSTEPS, n = N;
  DATA_TYPE(*u)[n] = polytune_alloc(sizeof(DATA_TYPE[n][n]));
  DATA_TYPE(*v)[n] = polytune_alloc(sizeof(DATA_TYPE[n][n]));
  DATA_TYPE(*p)[n] = polytune_alloc(sizeof(DATA_TYPE[n][n]));
  DATA_TYPE(*q)[n] = polytune_alloc(sizeof(DATA_TYPE[n][n]));

  init(n, u);
  polytune_timer_start();
  kernel_adi(tsteps, n, u, v, p, q);
  polytune_timer_stop();
  polytune_dump(u, sizeof(DATA_TYPE[n][n]));
  polytune_dump(v, sizeof(DATA_TYPE[n][n]));
  polytune_dump(p, sizeof(DATA_TYPE[n][n]));
  polytune_dump(q, sizeof(DATA_TYPE[n][n]));

  free(u);
  free(v);
  free(p);
  free(q);
  return 0;
}
