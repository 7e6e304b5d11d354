/* correlation: Pearson correlation matrix corr (M x M) of the M variables
 * observed N times in data (N x M). Column means and standard deviations are
 * computed first (a deviation <= 0.1 is replaced by 1 to avoid dividing by
 * zero), data is centred and scaled in place, then corr = data^T * data. */
#include "../harness/polytune.h"

#if defined(MINI_DATASET)
#define M 28
#define N 32
#elif defined(SMALL_DATASET)
#define M 80
#define N 100
#elif defined(MEDIUM_DATASET)
#define M 240
#define N 260
#elif defined(LARGE_DATASET)
#define M 1200
#define N 1400
#else
#define M 2600
#define N 3000
#endif

#ifndef DATA_TYPE
#define DATA_TYPE double
#endif

static void init(int m, int n, DATA_TYPE *float_n, DATA_TYPE data[n][m])
{
  *float_n = (DATA_TYPE)n;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++)
      data[i][j] = (DATA_TYPE)(i * j) / m + i;
}

static void kernel_correlation(int m, int n, DATA_TYPE float_n, DATA_TYPE data[n][m],
                               DATA_TYPE corr[m][m], DATA_TYPE mean[m], DATA_TYPE stddev[m])
{
  int i, j, k;
  DATA_TYPE eps = 0.1;
#pragma scop
  /* column means */
  for (j = 0; j < m; j++) {
    mean[j] = 0.0;
    for (i = 0; i < n; i++)
      mean[j] += data[i][j];
    mean[j] /= float_n;
  }
  /* column standard deviations, guarded against near-zero values */
  for (j = 0; j < m; j++) {
    stddev[j] = 0.0;
    for (i = 0; i < n; i++)
      stddev[j] += (data[i][j] - mean[j]) * (data[i][j] - mean[j]);
    stddev[j] /= float_n;
    stddev[j] = sqrt(stddev[j]);
    stddev[j] = stddev[j] <= eps ? 1.0 : stddev[j];
  }
  /* centre and scale every observation */
  for (i = 0; i < n; i++)
    for (j = 0; j < m; j++) {
      data[i][j] -= mean[j];
      data[i][j] /= sqrt(float_n) * stddev[j];
    }
  /* symmetric correlation matrix with a unit diagonal */
  for (i = 0; i < m - 1; i++) {
    corr[i][i] = 1.0;
    for (j = i + 1; j < m; j++) {
      corr[i][j] = 0.0;
      for (k = 0; k < n; k++)
        corr[i][j] += (data[k][i] * data[k][j]);
      corr[j][i] = corr[i][j];
    }
  }
  corr[m - 1][m - 1] = 1.0;
#pragma endscop
}

int main(void)
{
  int m = M, n = N;
  DATA_TYPE float_n;
  DATA_TYPE(*data)[m] = polytune_alloc(sizeof(DATA_TYPE[n][m]));
  DATA_TYPE(*corr)[m] = polytune_alloc(sizeof(DATA_TYPE[m][m]));
  DATA_TYPE *mean = polytune_alloc(sizeof(DATA_TYPE[m]));
  DATA_TYPE *stddev = polytune_alloc(sizeof(DATA_TYPE[m]));

  init(m, n, &float_n, data);
  polytune_timer_start();
  kernel_correlation(m, n, float_n, data, corr, mean, stddev);
  polytune_timer_stop();
  polytune_dump(data, sizeof(DATA_TYPE[n][m]));
  polytune_dump(corr, sizeof(DATA_TYPE[m][m]));
  polytune_dump(mean, sizeof(DATA_TYPE[m]));
  polytune_dump(stddev, sizeof(DATA_TYPE[m]));

  free(data);
  free(corr);
  free(mean);
  free(stddev);
  return 0;
}
