/* covariance: sample covariance matrix cov (M x M) of the M variables observed
 * N times in data (N x M): column means are subtracted from data in place, then
 * cov = data^T * data / (N - 1), computed on the upper triangle and mirrored. */
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
      data[i][j] = ((DATA_TYPE)i * j) / m;
}

static void kernel_covariance(int m, int n, DATA_TYPE float_n, DATA_TYPE data[n][m],
                              DATA_TYPE cov[m][m], DATA_TYPE mean[m])
{
  int i, j, k;
#pragma scop
  /* column means */
  for (j = 0; j < m; j++) {
    mean[j] = 0.0;
    for (i = 0; i < n; i++)
      mean[j] += data[i][j];
    mean[j] /= float_n;
  }
  /* centre the data */
  for (i = 0; i < n; i++)
    for (j = 0; j < m; j++)
      data[i][j] -= mean[j];
  /* upper triangle, mirrored into the lower one */
  for (i = 0; i < m; i++)
    for (j = i; j < m; j++) {
      cov[i][j] = 0.0;
      for (k = 0; k < n; k++)
        cov[i][j] += data[k][i] * data[k][j];
      cov[i][j] /= (float_n - 1.0);
      cov[j][i] = cov[i][j];
    }
#pragma endscop
}

int main(void)
{
  int m = M, n = N;
  DATA_TYPE float_n;
  DATA_TYPE(*data)[m] = polytune_alloc(sizeof(DATA_TYPE[n][m]));
  DATA_TYPE(*cov)[m] = polytune_alloc(sizeof(DATA_TYPE[m][m]));
  DATA_TYPE *mean = polytune_alloc(sizeof(DATA_TYPE[m]));

  init(m, n, &float_n, data);
  polytune_timer_start();
  kernel_covariance(m, n, float_n, data, cov, mean);
  polytune_timer_stop();
  polytune_dump(data, sizeof(DATA_TYPE[n][m]));
  polytune_dump(cov, sizeof(DATA_TYPE[m][m]));
  polytune_dump(mean, sizeof(DATA_TYPE[m]));

  free(data);
  free(cov);
  free(mean);
  return 0;
}
