/* fdtd-2d: TMAX steps of a 2-D finite-difference time-domain (Yee) update of the
 * electric fields ex, ey and the magnetic field hz on an NX x NY grid; at step t
 * the row ey[0][*] is driven by the source value _fict_[t]. */
#include "../harness/polytune.h"

#if defined(MINI_DATASET)
#define TMAX 20
#define NX 20
#define NY 30
#elif defined(SMALL_DATASET)
#define TMAX 40
#define NX 60
#define NY 80
#elif defined(MEDIUM_DATASET)
#define TMAX 100
#define NX 200
#define NY 240
#elif defined(LARGE_DATASET)
#define TMAX 500
#define NX 1000
#define NY 1200
#else
#define TMAX 1000
#define NX 2000
#define NY 2600
#endif

#ifndef DATA_TYPE
#define DATA_TYPE double
#endif

static void init(int tmax, int nx, int ny, DATA_TYPE ex[nx][ny], DATA_TYPE ey[nx][ny],
                 DATA_TYPE hz[nx][ny], DATA_TYPE _fict_[tmax])
{
  for (int t = 0; t < tmax; t++)
    _fict_[t] = (DATA_TYPE)t;
  for (int i = 0; i < nx; i++)
    for (int j = 0; j < ny; j++) {
      ex[i][j] = ((DATA_TYPE)i * (j + 1)) / nx;
      ey[i][j] = ((DATA_TYPE)i * (j + 2)) / ny;
      hz[i][j] = ((DATA_TYPE)i * (j + 3)) / nx;
    }
}

static void kernel_fdtd_2d(int tmax, int nx, int ny, DATA_TYPE ex[nx][ny], DATA_TYPE ey[nx][ny],
                           DATA_TYPE hz[nx][ny], DATA_TYPE _fict_[tmax])
{
  int t, i, j;
#pragma scop
  for (t = 0; t < tmax; t++) {
    for (j = 0; j < ny; j++)
      ey[0][j] = _fict_[t];
    for (i = 1; i < nx; i++)
      for (j = 0; j < ny; j++)
        ey[i][j] = ey[i][j] - 0.5 * (hz[i][j] - hz[i - 1][j]);
    for (i = 0; i < nx; i++)
      for (j = 1; j < ny; j++)
        ex[i][j] = ex[i][j] - 0.5 * (hz[i][j] - hz[i][j - 1]);
    for (i = 0; i < nx - 1; i++)
      for (j = 0; j < ny - 1; j++)
        hz[i][j] = hz[i][j] - 0.7 * (ex[i][j + 1] - ex[i][j] + ey[i + 1][j] - ey[i][j]);
  }
#pragma endscop
}

int main(void)
{
  int tmax = TMAX, nx = NX, ny = NY;
  DATA_TYPE(*ex)[ny] = polytune_alloc(sizeof(DATA_TYPE[nx][ny]));
  DATA_TYPE(*ey)[ny] = polytune_alloc(sizeof(DATA_TYPE[nx][ny]));
  DATA_TYPE(*hz)[ny] = polytune_alloc(sizeof(DATA_TYPE[nx][ny]));
  DATA_TYPE *_fict_ = polytune_alloc(sizeof(DATA_TYPE[tmax]));

  init(tmax, nx, ny, ex, ey, hz, _fict_);
  polytune_timer_start();
  kernel_fdtd_2d(tmax, nx, ny, ex, ey, hz, _fict_);
  polytune_timer_stop();
  polytune_dump(ex, sizeof(DATA_TYPE[nx][ny]));
  polytune_dump(ey, sizeof(DATA_TYPE[nx][ny]));
  polytune_dump(hz, sizeof(DATA_TYPE[nx][ny]));

  free(ex);
  free(ey);
  free(hz);
  free(_fict_);
  return 0;
}
