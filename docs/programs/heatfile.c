/* A program written like an application: it reads its grid from the text
 * file named on its command line, diffuses heat over it for a number of
 * steps and writes a summary. Its set-up (parsing the file) is heavier than
 * the diffusion, so it is the program docs/performance.md measures
 * evaluations per hour on with and without replay. Make an input with
 *   awk 'BEGIN { n = 2000; srand(1); print n, n, 20;
 *        for (i = 0; i < n * n; i++) print rand() }' > grid.txt
 */
#include <stdio.h>
#include <stdlib.h>

static void diffuse(int n, int m, int steps, double u[n][m], double v[n][m])
{
  int t, i, j;
#pragma scop
  for (t = 0; t < steps; t++) {
    for (i = 1; i < n - 1; i++)
      for (j = 1; j < m - 1; j++)
        v[i][j] = u[i][j] + 0.125 * (u[i - 1][j] + u[i + 1][j] + u[i][j - 1] + u[i][j + 1] - 4.0 * u[i][j]);
    for (i = 1; i < n - 1; i++)
      for (j = 1; j < m - 1; j++)
        u[i][j] = v[i][j] + 0.125 * (v[i - 1][j] + v[i + 1][j] + v[i][j - 1] + v[i][j + 1] - 4.0 * v[i][j]);
  }
#pragma endscop
}

int main(int argc, char **argv)
{
  if (argc < 2) {
    fprintf(stderr, "usage: %s GRID\n", argv[0]);
    return 2;
  }
  FILE *f = fopen(argv[1], "r");
  int n, m, steps;
  if (!f || fscanf(f, "%d %d %d", &n, &m, &steps) != 3 || n < 3 || m < 3 || steps < 0) {
    fprintf(stderr, "%s: not a grid\n", argv[1]);
    return 1;
  }
  double (*u)[m] = malloc(sizeof(double) * n * m);
  double (*v)[m] = malloc(sizeof(double) * n * m);
  if (!u || !v)
    return 1;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++)
      if (fscanf(f, "%lf", &u[i][j]) != 1) {
        fprintf(stderr, "%s: %d x %d values expected\n", argv[1], n, m);
        return 1;
      }
  fclose(f);
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++)
      v[i][j] = u[i][j];
  diffuse(n, m, steps, u, v);
  double total = 0, peak = 0;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++) {
      total += u[i][j];
      if (u[i][j] > peak)
        peak = u[i][j];
    }
  printf("heat %.9f, peak %.9f\n", total, peak);
  free(u);
  free(v);
  return 0;
}
