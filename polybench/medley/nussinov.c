/* nussinov: Nussinov's dynamic programme for RNA secondary structure. For a
 * sequence seq of N bases (0..3, complementary pairs sum to 3), table[i][j]
 * (j > i) becomes the largest number of non-crossing complementary pairs in
 * seq[i..j], adjacent bases never pairing. Only the strict upper triangle of
 * table is computed; the rest keeps its initial zeros. */
#include "../harness/polytune.h"

#if defined(MINI_DATASET)
#define N 60
#elif defined(SMALL_DATASET)
#define N 180
#elif defined(MEDIUM_DATASET)
#define N 500
#elif defined(LARGE_DATASET)
#define N 2500
#else
#define N 5500
#endif

#ifndef DATA_TYPE
#define DATA_TYPE int
#endif

/* 1 when bases b1 and b2 are complementary, else 0; the larger of two scores. */
#define match(b1, b2) (((b1) + (b2)) == 3 ? 1 : 0)
#define max_score(s1, s2) ((s1) >= (s2) ? (s1) : (s2))

static void init(int n, char seq[n], DATA_TYPE table[n][n])
{
  for (int i = 0; i < n; i++)
    seq[i] = (char)((i + 1) % 4);
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      table[i][j] = 0;
}

static void kernel_nussinov(int n, char seq[n], DATA_TYPE table[n][n])
{
  int i, j, k;
#pragma scop
  for (i = n - 1; i >= 0; i--) {
    for (j = i + 1; j < n; j++) {
      if (j - 1 >= 0)
        table[i][j] = max_score(table[i][j], table[i][j - 1]);
      if (i + 1 < n)
        table[i][j] = max_score(table[i][j], table[i + 1][j]);
      if (j - 1 >= 0 && i + 1 < n) {
        /* bases i and j may only pair when they are not neighbours */
        if (i < j - 1)
          table[i][j] = max_score(table[i][j], table[i + 1][j - 1] + match(seq[i], seq[j]));
        else
          table[i][j] = max_score(table[i][j], table[i + 1][j - 1]);
      }
      for (k = i + 1; k < j; k++)
        table[i][j] = max_score(table[i][j], table[i][k] + table[k + 1][j]);
    }
  }
#pragma endscop
}

int main(void)
{
  int n = N;
  char *seq = polytune_alloc(sizeof(char[n]));
  DATA_TYPE(*table)[n] = polytune_alloc(sizeof(DATA_TYPE[n][n]));

  init(n, seq, table);
  polytune_timer_start();
  kernel_nussinov(n, seq, table);
  polytune_timer_stop();
  polytune_dump(table, sizeof(DATA_TYPE[n][n]));

  free(seq);
  free(table);
  return 0;
}
