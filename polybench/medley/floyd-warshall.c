/* floyd-warshall: all-pairs shortest paths. path (N x N) starts as the matrix
 * of direct edge weights and is relaxed through every intermediate vertex k:
 * path[i][j] = min(path[i][j], path[i][k] + path[k][j]). */
#include "../harness/polytune.h"

#if defined(MINI_DATASET)
#define N 60
#elif defined(SMALL_DATASET)
#define N 180
#elif defined(MEDIUM_DATASET)
#define N 500
#elif defined(LARGE_DATASET)
#define N 2800
#else
#define N 5600
#endif

#ifndef DATA_TYPE
#define DATA_TYPE int
#endif

/* Edge weights 1..7; pairs with i+j divisible by 7, 11 or 13 get the large
 * weight 999 (small enough that sums never overflow an int). */
static void init(int n, DATA_TYPE path[n][n])
{
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      path[i][j] = i * j % 7 + 1;
      if ((i + j) % 13 == 0 || (i + j) % 7 == 0 || (i + j) % 11 == 0)
        path[i][j] = 999;
    }
}

static void kernel_floyd_warshall(int n, DATA_TYPE path[n][n])
{
  int i, j, k;
#pragma scop
  for (k = 0; k < n; k++)
    for (i = 0; i < n; i++)
      for (j = 0; j < n; j++)
        path[i][j] = path[i][j] < path[i][k] + path[k][j] ? path[i][j]
                                                          : path[i][k] + path[k][j];
#pragma endscop
}

int main(void)
{
  int n = N;
  DATA_TYPE(*path)[n] = polytune_alloc(sizeof(DATA_TYPE[n][n]));

  init(n, path);
  polytune_timer_start();
  kernel_floyd_warshall(n, path);
  polytune_timer_stop();
  polytune_dump(path, sizeof(DATA_TYPE[n][n]));

  free(path);
  return 0;
}
