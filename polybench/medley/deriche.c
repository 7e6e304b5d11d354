/* deriche: Deriche recursive edge-detection filter on a W x H single-precision
 * image. A causal and an anti-causal first-order recursive pass run along each
 * row (j direction) and are summed into imgOut; the same pair of passes then
 * runs along each column (i direction) of that intermediate result. y1 and y2
 * hold the causal and anti-causal pass outputs. */
#include "../harness/polytune.h"

#if defined(MINI_DATASET)
#define W 64
#define H 64
#elif defined(SMALL_DATASET)
#define W 192
#define H 128
#elif defined(MEDIUM_DATASET)
#define W 720
#define H 480
#elif defined(LARGE_DATASET)
#define W 4096
#define H 2160
#else
#define W 7680
#define H 4320
#endif

#ifndef DATA_TYPE
#define DATA_TYPE float
#endif

/* Filter parameter alpha = 0.25; pixels are grey levels in [0, 1]. */
static void init(int w, int h, DATA_TYPE *alpha, DATA_TYPE imgIn[w][h])
{
  *alpha = 0.25f;
  for (int i = 0; i < w; i++)
    for (int j = 0; j < h; j++)
      imgIn[i][j] = (DATA_TYPE)((313 * i + 991 * j) % 65536) / 65535.0f;
}

static void kernel_deriche(int w, int h, DATA_TYPE alpha, DATA_TYPE imgIn[w][h],
                           DATA_TYPE imgOut[w][h], DATA_TYPE y1[w][h], DATA_TYPE y2[w][h])
{
  int i, j;
  DATA_TYPE xm1, tm1, ym1, ym2;
  DATA_TYPE xp1, xp2;
  DATA_TYPE tp1, tp2;
  DATA_TYPE yp1, yp2;
  DATA_TYPE k;
  DATA_TYPE a1, a2, a3, a4, a5, a6, a7, a8;
  DATA_TYPE b1, b2, c1, c2;
#pragma scop
  /* filter coefficients; the pairs (a1,a5), (a2,a6), (a3,a7), (a4,a8) and
   * (c1,c2) are equal (PolyBench sets each pair with one chained assignment) */
  k = (1.0f - expf(-alpha)) * (1.0f - expf(-alpha)) /
      (1.0f + 2.0f * alpha * expf(-alpha) - expf(2.0f * alpha));
  a1 = k;
  a5 = a1;
  a2 = k * expf(-alpha) * (alpha - 1.0f);
  a6 = a2;
  a3 = k * expf(-alpha) * (alpha + 1.0f);
  a7 = a3;
  a4 = -k * expf(-2.0f * alpha);
  a8 = a4;
  b1 = powf(2.0f, -alpha);
  b2 = -expf(-2.0f * alpha);
  c1 = 1.0f;
  c2 = c1;
  /* horizontal pass, causal */
  for (i = 0; i < w; i++) {
    ym1 = 0.0f;
    ym2 = 0.0f;
    xm1 = 0.0f;
    for (j = 0; j < h; j++) {
      y1[i][j] = a1 * imgIn[i][j] + a2 * xm1 + b1 * ym1 + b2 * ym2;
      xm1 = imgIn[i][j];
      ym2 = ym1;
      ym1 = y1[i][j];
    }
  }
  /* horizontal pass, anti-causal */
  for (i = 0; i < w; i++) {
    yp1 = 0.0f;
    yp2 = 0.0f;
    xp1 = 0.0f;
    xp2 = 0.0f;
    for (j = h - 1; j >= 0; j--) {
      y2[i][j] = a3 * xp1 + a4 * xp2 + b1 * yp1 + b2 * yp2;
      xp2 = xp1;
      xp1 = imgIn[i][j];
      yp2 = yp1;
      yp1 = y2[i][j];
    }
  }
  for (i = 0; i < w; i++)
    for (j = 0; j < h; j++)
      imgOut[i][j] = c1 * (y1[i][j] + y2[i][j]);
  /* vertical pass, causal */
  for (j = 0; j < h; j++) {
    tm1 = 0.0f;
    ym1 = 0.0f;
    ym2 = 0.0f;
    for (i = 0; i < w; i++) {
      y1[i][j] = a5 * imgOut[i][j] + a6 * tm1 + b1 * ym1 + b2 * ym2;
      tm1 = imgOut[i][j];
      ym2 = ym1;
      ym1 = y1[i][j];
    }
  }
  /* vertical pass, anti-causal */
  for (j = 0; j < h; j++) {
    tp1 = 0.0f;
    tp2 = 0.0f;
    yp1 = 0.0f;
    yp2 = 0.0f;
    for (i = w - 1; i >= 0; i--) {
      y2[i][j] = a7 * tp1 + a8 * tp2 + b1 * yp1 + b2 * yp2;
      tp2 = tp1;
      tp1 = imgOut[i][j];
      yp2 = yp1;
      yp1 = y2[i][j];
    }
  }
  for (i = 0; i < w; i++)
    for (j = 0; j < h; j++)
      imgOut[i][j] = c2 * (y1[i][j] + y2[i][j]);
#pragma endscop
}

int main(void)
{
  int w = W, h = H;
  DATA_TYPE alpha;
  DATA_TYPE(*imgIn)[h] = polytune_alloc(sizeof(DATA_TYPE[w][h]));
  DATA_TYPE(*imgOut)[h] = polytune_alloc(sizeof(DATA_TYPE[w][h]));
  DATA_TYPE(*y1)[h] = polytune_alloc(sizeof(DATA_TYPE[w][h]));
  DATA_TYPE(*y2)[h] = polytune_alloc(sizeof(DATA_TYPE[w][h]));

  init(w, h, &alpha, imgIn);
  polytune_timer_start();
  kernel_deriche(w, h, alpha, imgIn, imgOut, y1, y2);
  polytune_timer_stop();
  polytune_dump(imgOut, sizeof(DATA_TYPE[w][h]));
  polytune_dump(y1, sizeof(DATA_TYPE[w][h]));
  polytune_dump(y2, sizeof(DATA_TYPE[w][h]));

  free(imgIn);
  free(imgOut);
  free(y1);
  free(y2);
  return 0;
}
