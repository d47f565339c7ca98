#pragma once
// Host implementations of the declared tensor intrinsics (core/te/tensor_intrinsic.h), with the
// C ABI that compiled kernels call: the llvm_cpu and c_source backends emit a call to
// tessel_intrin_<name> where a schedule tensorized a loop nest, and resolve it in this library.
//
//   tessel_intrin_gemm_16x16x16_f32(A, lda, B, ldb, C, ldc):  C[i*ldc + j] += sum_k A[i*lda + k] * B[k*ldb + j]
//   tessel_intrin_gemm_16x16x16_f32_reset(C, ldc):           C[i*ldc + j] = 0
//
// Strides are in elements; rows are contiguous. The interpreter does not call these: it runs the
// declared computation, so a backend test that compares the two checks these implementations.
#include <cstdint>

extern "C" {
void tessel_intrin_gemm_16x16x16_f32(const float* a, int64_t lda, const float* b, int64_t ldb, float* c, int64_t ldc);
void tessel_intrin_gemm_16x16x16_f32_reset(float* c, int64_t ldc);
void tessel_intrin_gemm_8x8x8_f32(const float* a, int64_t lda, const float* b, int64_t ldb, float* c, int64_t ldc);
void tessel_intrin_gemm_8x8x8_f32_reset(float* c, int64_t ldc);
// int8 operands, int32 accumulator.
void tessel_intrin_gemm_16x16x16_i8(const int8_t* a, int64_t lda, const int8_t* b, int64_t ldb, int32_t* c,
                                    int64_t ldc);
void tessel_intrin_gemm_16x16x16_i8_reset(int32_t* c, int64_t ldc);
void tessel_intrin_gemm_8x8x8_i8(const int8_t* a, int64_t lda, const int8_t* b, int64_t ldb, int32_t* c, int64_t ldc);
void tessel_intrin_gemm_8x8x8_i8_reset(int32_t* c, int64_t ldc);
// One VNNI dot step in scalar code: c[j] += sum_k a[k] * b[j*ldb + k], j < 16, k < 4 (u8 x s8 -> s32).
void tessel_intrin_dot_16x4_u8i8_i32(const uint8_t* a, const int8_t* b, int64_t ldb, int32_t* c);
void tessel_intrin_dot_16x4_u8i8_i32_reset(int32_t* c);
}
