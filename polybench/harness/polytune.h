/* polytune's PolyBench harness: dataset selection, allocation, timing and dumps.
 *
 * Every kernel in polybench/ includes this header and follows one shape:
 * sizes chosen by -D<SIZE>_DATASET (default LARGE), arrays allocated on the heap
 * as pointers to C99 variable-length rows, a kernel function whose body holds the
 * SCoP between `#pragma scop` and `#pragma endscop`, and a main that initialises,
 * times the kernel and dumps the arrays it writes.
 *
 * Environment (all optional):
 *   POLYTUNE_DUMP=path  append every dumped array as raw bytes to `path`
 *   POLYTUNE_TIME=1     print the kernel's time in seconds on stdout
 */
#ifndef POLYTUNE_HARNESS_H
#define POLYTUNE_HARNESS_H

#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if !defined(MINI_DATASET) && !defined(SMALL_DATASET) && !defined(MEDIUM_DATASET) && \
    !defined(LARGE_DATASET) && !defined(EXTRALARGE_DATASET)
#define LARGE_DATASET
#endif

/* Aligned, zeroed heap storage; a kernel's arrays never live on the stack. */
static void *polytune_alloc(size_t bytes)
{
  void *p = NULL;
  if (bytes == 0)
    bytes = 1;
  if (posix_memalign(&p, 64, bytes) != 0) {
    fprintf(stderr, "polytune harness: cannot allocate %zu bytes\n", bytes);
    exit(2);
  }
  memset(p, 0, bytes);
  return p;
}

static double polytune_now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double polytune_t0;

static void polytune_timer_start(void) { polytune_t0 = polytune_now(); }

static void polytune_timer_stop(void)
{
  double t = polytune_now() - polytune_t0;
  const char *on = getenv("POLYTUNE_TIME");
  if (on && *on && strcmp(on, "0") != 0)
    printf("%.9f\n", t);
}

/* Appends `bytes` bytes at `p` to the file named by POLYTUNE_DUMP, if set. */
static void polytune_dump(const void *p, size_t bytes)
{
  const char *path = getenv("POLYTUNE_DUMP");
  FILE *f;
  if (!path || !*path)
    return;
  f = fopen(path, "ab");
  if (!f || fwrite(p, 1, bytes, f) != bytes) {
    fprintf(stderr, "polytune harness: cannot write %s\n", path);
    exit(2);
  }
  fclose(f);
}

#endif
