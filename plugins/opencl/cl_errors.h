#pragma once
// OpenCL status codes as names, and the one way this plugin turns a failed call into an Error:
// "opencl: clEnqueueWriteBuffer failed: CL_INVALID_VALUE (-30)".
#include <string>

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120  // the 1.2 API: what PoCL and every GPU driver offer
#endif
#include <CL/cl.h>

namespace tessel::opencl {

// "CL_OUT_OF_RESOURCES"; "unknown OpenCL error" for a code the headers do not name.
const char* cl_error_name(cl_int code);
// Throws Error "opencl: CALL failed: NAME (CODE)" (with ": context" appended when given) unless
// `code` is CL_SUCCESS.
void cl_check(cl_int code, const char* call, const std::string& context = "");

}  // namespace tessel::opencl
