// The projection layer of a late-interaction head, for training code that keeps everything on the device:
// Y = X W (forward) and dW = X^T dY (the weight's gradient), fp32, row-major. Small, plain tiled SGEMM:
// 16 x 16 output tiles, both operands staged through shared memory, every output summed over k in
// ascending order (deterministic; the same bits on every run).
#include <stdint.h>

constexpr int LINEAR_TILE = 16;

// grid (ceil(out / 16), ceil(rows / 16)), 256 threads: Y[r, c] = sum_f X[r, f] W[f, c]
extern "C" __global__ void __launch_bounds__(256) maxsim_linear_forward(const float* __restrict__ x,
                                                                       const float* __restrict__ w, float* y,
                                                                       int rows, int in, int out) {
  __shared__ float xs[LINEAR_TILE][LINEAR_TILE + 1];
  __shared__ float ws[LINEAR_TILE][LINEAR_TILE + 1];
  const int tx = threadIdx.x % LINEAR_TILE, ty = threadIdx.x / LINEAR_TILE;
  const int r = blockIdx.y * LINEAR_TILE + ty, c = blockIdx.x * LINEAR_TILE + tx;
  float acc = 0.f;
  for (int f0 = 0; f0 < in; f0 += LINEAR_TILE) {
    xs[ty][tx] = r < rows && f0 + tx < in ? x[(size_t)r * in + f0 + tx] : 0.f;
    ws[ty][tx] = f0 + ty < in && c < out ? w[(size_t)(f0 + ty) * out + c] : 0.f;
    __syncthreads();
#pragma unroll
    for (int k = 0; k < LINEAR_TILE; k++) acc = fmaf(xs[ty][k], ws[k][tx], acc);
    __syncthreads();
  }
  if (r < rows && c < out) y[(size_t)r * out + c] = acc;
}

// grid (ceil(out / 16), ceil(in / 16)), 256 threads: dW[f, c] = sum_r X[r, f] dY[r, c]
extern "C" __global__ void __launch_bounds__(256) maxsim_linear_weight_gradient(const float* __restrict__ x,
                                                                               const float* __restrict__ dy,
                                                                               float* dw, int rows, int in,
                                                                               int out) {
  __shared__ float xs[LINEAR_TILE][LINEAR_TILE + 1];  // [f][r]
  __shared__ float ds[LINEAR_TILE][LINEAR_TILE + 1];  // [r][c]
  const int tx = threadIdx.x % LINEAR_TILE, ty = threadIdx.x / LINEAR_TILE;
  const int f = blockIdx.y * LINEAR_TILE + ty, c = blockIdx.x * LINEAR_TILE + tx;
  const int fLoad = blockIdx.y * LINEAR_TILE + tx;  // the loads read X rows along f: coalesced
  float acc = 0.f;
  for (int r0 = 0; r0 < rows; r0 += LINEAR_TILE) {
    xs[tx][ty] = r0 + ty < rows && fLoad < in ? x[(size_t)(r0 + ty) * in + fLoad] : 0.f;
    ds[ty][tx] = r0 + ty < rows && c < out ? dy[(size_t)(r0 + ty) * out + c] : 0.f;
    __syncthreads();
#pragma unroll
    for (int k = 0; k < LINEAR_TILE; k++) acc = fmaf(xs[ty][k], ds[k][tx], acc);
    __syncthreads();
  }
  if (f < in && c < out) dw[(size_t)f * out + c] = acc;
}
