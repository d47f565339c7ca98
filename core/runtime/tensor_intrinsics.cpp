#include "core/runtime/tensor_intrinsics.h"

namespace {

// One row of C at a time: the k loop outside the j loop keeps the inner loop a contiguous
// multiply-add over B's and C's rows, which the compiler vectorizes for a fixed N.
template <int N, class In, class Acc>
void gemm_block(const In* a, int64_t lda, const In* b, int64_t ldb, Acc* c, int64_t ldc) {
  for (int i = 0; i < N; ++i) {
    Acc row[N];
    for (int j = 0; j < N; ++j) row[j] = c[i * ldc + j];
    for (int k = 0; k < N; ++k) {
      Acc aik = a[i * lda + k];
      const In* brow = b + k * ldb;
      for (int j = 0; j < N; ++j) row[j] += aik * brow[j];
    }
    for (int j = 0; j < N; ++j) c[i * ldc + j] = row[j];
  }
}

template <int N, class Acc>
void fill_zero(Acc* c, int64_t ldc) {
  for (int i = 0; i < N; ++i)
    for (int j = 0; j < N; ++j) c[i * ldc + j] = Acc{0};
}

}  // namespace

extern "C" {

void tessel_intrin_gemm_16x16x16_f32(const float* a, int64_t lda, const float* b, int64_t ldb, float* c, int64_t ldc) {
  gemm_block<16>(a, lda, b, ldb, c, ldc);
}
void tessel_intrin_gemm_16x16x16_f32_reset(float* c, int64_t ldc) { fill_zero<16>(c, ldc); }
void tessel_intrin_gemm_8x8x8_f32(const float* a, int64_t lda, const float* b, int64_t ldb, float* c, int64_t ldc) {
  gemm_block<8>(a, lda, b, ldb, c, ldc);
}
void tessel_intrin_gemm_8x8x8_f32_reset(float* c, int64_t ldc) { fill_zero<8>(c, ldc); }
void tessel_intrin_gemm_16x16x16_i8(const int8_t* a, int64_t lda, const int8_t* b, int64_t ldb, int32_t* c,
                                    int64_t ldc) {
  gemm_block<16>(a, lda, b, ldb, c, ldc);
}
void tessel_intrin_gemm_16x16x16_i8_reset(int32_t* c, int64_t ldc) { fill_zero<16>(c, ldc); }
void tessel_intrin_gemm_8x8x8_i8(const int8_t* a, int64_t lda, const int8_t* b, int64_t ldb, int32_t* c, int64_t ldc) {
  gemm_block<8>(a, lda, b, ldb, c, ldc);
}
void tessel_intrin_gemm_8x8x8_i8_reset(int32_t* c, int64_t ldc) { fill_zero<8>(c, ldc); }
void tessel_intrin_dot_16x4_u8i8_i32(const uint8_t* a, const int8_t* b, int64_t ldb, int32_t* c) {
  for (int j = 0; j < 16; ++j) {
    // Unsigned arithmetic wraps as vpdpbusd does; the products themselves always fit.
    uint32_t acc = static_cast<uint32_t>(c[j]);
    for (int k = 0; k < 4; ++k) acc += static_cast<uint32_t>(int32_t{a[k]} * int32_t{b[j * ldb + k]});
    c[j] = static_cast<int32_t>(acc);
  }
}
void tessel_intrin_dot_16x4_u8i8_i32_reset(int32_t* c) {
  for (int j = 0; j < 16; ++j) c[j] = 0;
}

}  // extern "C"
