# Included by ctest (TEST_INCLUDE_FILES, tests/CMakeLists.txt) before it registers the tests of
# tests/ and every folder below it: what is set here is in the environment of every test ctest
# starts, whether added by tessel_add_test or a plain add_test.
#
# The loop-IR verifier after every lowering pass (core/lower/pipeline.h): a pass that leaves a
# malformed loop program fails the test that lowered it, naming the pass.
set(ENV{TESSEL_VERIFY_LOOPIR} 1)
