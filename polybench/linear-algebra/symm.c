/* symm: symmetric matrix product, C := alpha * A * B + beta * C, where A (M x M) is
 * symmetric and only its lower triangle (including the diagonal) is read;
 * B and C are M x N. */
#include "../harness/polytune.h"

#if defined(MINI_DATASET)
#define M 20
#define N 30
#elif defined(SMALL_DATASET)
#define M 60
#define N 80
#elif defined(MEDIUM_DATASET)
#define M 200
#define N 240
#elif defined(LARGE_DATASET)
#define M 1000
#define N 1200
#else
#define M 2000
#define N 2600
#endif

#ifndef DATA_TYPE
#define DATA_TYPE double
#endif

static void init(int m, int n, DATA_TYPE *alpha, DATA_TYPE *beta, DATA_TYPE C[m][n],
                 DATA_TYPE A[m][m], DATA_TYPE B[m][n])
{
  *alpha = 1.5;
  *beta = 1.2;
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++) {
      C[i][j] = (DATA_TYPE)((i + j) % 100) / m;
      B[i][j] = (DATA_TYPE)((n + i - j) % 100) / m;
    }
  for (int i = 0; i < m; i++) {
    for (int k = 0; k <= i; k++)
      A[i][k] = (DATA_TYPE)((i + k) % 100) / m;
    /* The strict upper triangle is never read; poison it so a misuse shows. */
    for (int k = i + 1; k < m; k++)
      A[i][k] = -999.0;
  }
}

static void kernel_symm(int m, int n, DATA_TYPE alpha, DATA_TYPE beta, DATA_TYPE C[m][n],
                        DATA_TYPE A[m][m], DATA_TYPE B[m][n])
{
  int i, j, k;
  DATA_TYPE temp2;
#pragma scop
  for (i = 0; i < m; i++)
    for (j = 0; j < n; j++) {
      temp2 = 0.0;
      for (k = 0; k < i; k++) {
        C[k][j] += alpha * B[i][j] * A[i][k];
        temp2 += B[k][j] * A[i][k];
      }
      C[i][j] = beta * C[i][j] + alpha * B[i][j] * A[i][i] + alpha * temp2;
    }
#pragma endscop
}

int main(void)
{
  int m = M, n = N;
  DATA_TYPE alpha, beta;
  DATA_TYPE(*C)[n] = polytune_alloc(sizeof(DATA_TYPE[m][n]));
  DATA_TYPE(*A)[m] = polytune_alloc(sizeof(DATA_TYPE[m][m]));
  DATA_TYPE(*B)[n] = polytune_alloc(sizeof(DATA_TYPE[m][n]));

  init(m, n, &alpha, &beta, C, A, B);
  polytune_timer_start();
  kernel_symm(m, n, alpha, beta, C, A, B);
  polytune_timer_stop();
  polytune_dump(C, sizeof(DATA_TYPE[m][n]));

  free(C);
  free(A);
  free(B);
  return 0;
}
