// Losses over a score matrix [rows][columns] that stays on the device: each writes one loss term per row
// (the host sums the rows in a fixed order, in float64) and dL/dscores for the backward. One block per
// row; the row's reductions (max, sum of exponentials) run in a fixed tree order, so the result does not
// depend on scheduling. The formulas (and the CPU versions they must equal) are in dev.maxsim4j.Loss. A row whose
// scores hold an infinity or a NaN gets a NaN loss and NaN gradients in every column, not the formula's limit.
#include <math.h>
#include <stdint.h>

namespace maxsim4j {

constexpr int LOSS_THREADS = 256;

// Block-wide reduction in a fixed order (per-thread strided partials, then a shared-memory tree).
template <bool MAX>
__device__ float blockReduce(float v, float* scratch) {
  scratch[threadIdx.x] = v;
  __syncthreads();
  for (int stride = LOSS_THREADS / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) {
      float o = scratch[threadIdx.x + stride];
      scratch[threadIdx.x] = MAX ? fmaxf(scratch[threadIdx.x], o) : scratch[threadIdx.x] + o;
    }
    __syncthreads();
  }
  float r = scratch[0];
  __syncthreads();
  return r;
}

// Whether any of the row's n scores is an infinity or a NaN (every thread gets the answer).
__device__ bool rowNotFinite(const float* x, int n, float* scratch) {
  float bad = 0.f;
  for (int j = threadIdx.x; j < n; j += LOSS_THREADS) bad = isfinite(x[j]) ? bad : 1.f;
  return blockReduce<true>(bad, scratch) != 0.f;
}

// Writes the row's NaN loss and gradients (see rowNotFinite).
__device__ void writeNotFiniteRow(float* rowLoss, float* dScores, int i, int columns) {
  if (threadIdx.x == 0) rowLoss[i] = NAN;
  for (int j = threadIdx.x; j < columns; j += LOSS_THREADS) dScores[(size_t)i * columns + j] = NAN;
}

// log-sum-exp of x * scale over a row, and the row's maximum.
__device__ float logSumExp(const float* x, int n, float scale, float* scratch) {
  float m = -INFINITY;
  for (int j = threadIdx.x; j < n; j += LOSS_THREADS) m = fmaxf(m, x[j] * scale);
  m = blockReduce<true>(m, scratch);
  float s = 0.f;
  for (int j = threadIdx.x; j < n; j += LOSS_THREADS) s += expf(x[j] * scale - m);
  return m + logf(blockReduce<false>(s, scratch));
}

}  // namespace maxsim4j

using namespace maxsim4j;

// Cross-entropy of each row against its positive column (in-batch contrastive: positives[i] = i by
// default; candidates: the positive candidate): loss_i = logsumexp(s_i / T) - s_i,pos / T, averaged over
// rows; dL/ds_ij = (softmax(s_i / T)_j - [j == pos]) / (T * rows). positives == nullptr: the diagonal.
extern "C" __global__ void __launch_bounds__(LOSS_THREADS)
    maxsim_loss_cross_entropy(const float* scores, int rows, int columns, const int* positives, float temperature,
                              float* rowLoss, float* dScores) {
  __shared__ float scratch[LOSS_THREADS];
  const int i = blockIdx.x;
  const float* s = scores + (size_t)i * columns;
  const float scale = 1.f / temperature;
  const int positive = positives == nullptr ? i : positives[i];
  if (rowNotFinite(s, columns, scratch)) {
    writeNotFiniteRow(rowLoss, dScores, i, columns);
    return;
  }
  float lse = logSumExp(s, columns, scale, scratch);
  if (threadIdx.x == 0) rowLoss[i] = lse - s[positive] * scale;
  for (int j = threadIdx.x; j < columns; j += LOSS_THREADS) {
    float p = expf(s[j] * scale - lse);
    dScores[(size_t)i * columns + j] = (p - (j == positive ? 1.f : 0.f)) * scale / rows;
  }
}

// KL distillation: KL(softmax(t_i / T) || softmax(s_i / T)) per row, averaged over rows;
// dL/ds_ij = (softmax(s_i / T)_j - softmax(t_i / T)_j) / (T * rows).
extern "C" __global__ void __launch_bounds__(LOSS_THREADS)
    maxsim_loss_kl(const float* scores, const float* teacher, int rows, int columns, float temperature, float* rowLoss,
                   float* dScores) {
  __shared__ float scratch[LOSS_THREADS];
  const int i = blockIdx.x;
  const float* s = scores + (size_t)i * columns;
  const float* t = teacher + (size_t)i * columns;
  const float scale = 1.f / temperature;
  if (rowNotFinite(s, columns, scratch)) {
    writeNotFiniteRow(rowLoss, dScores, i, columns);
    return;
  }
  float lseS = logSumExp(s, columns, scale, scratch);
  float lseT = logSumExp(t, columns, scale, scratch);
  float kl = 0.f;
  for (int j = threadIdx.x; j < columns; j += LOSS_THREADS) {
    float logPt = t[j] * scale - lseT;
    float logPs = s[j] * scale - lseS;
    float pt = expf(logPt);
    if (pt > 0.f) kl += pt * (logPt - logPs);  // 0 log 0 = 0: a teacher score of -inf is probability 0
    dScores[(size_t)i * columns + j] = (expf(logPs) - pt) * scale / rows;
  }
  kl = blockReduce<false>(kl, scratch);
  // KL is never negative: where the distributions (nearly) agree, the terms' rounding may sum below 0 (NaN stays)
  if (threadIdx.x == 0) rowLoss[i] = kl < 0.f ? 0.f : kl;
}

// Margin-MSE over (positive, negative) candidate pairs, scores [rows][2]:
// loss_i = ((s_i0 - s_i1) - teacherMargin_i)^2, averaged; dL/ds_i0 = -dL/ds_i1 = 2 (margin - teacher) / rows.
extern "C" __global__ void maxsim_loss_margin_mse(const float* scores, const float* teacherMargins, int rows,
                                                  float* rowLoss, float* dScores) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= rows) return;
  if (!isfinite(scores[2 * i]) || !isfinite(scores[2 * i + 1])) {
    rowLoss[i] = NAN;
    dScores[2 * i] = dScores[2 * i + 1] = NAN;
    return;
  }
  float diff = scores[2 * i] - scores[2 * i + 1] - teacherMargins[i];
  rowLoss[i] = diff * diff;
  dScores[2 * i] = 2.f * diff / rows;
  dScores[2 * i + 1] = -2.f * diff / rows;
}
