#!/bin/sh
# Runs `tessel inspect` on every model of the ONNX test data (node/, pytorch-converted/,
# pytorch-operator/, simple/) and fails when one is refused or crashes: any well-formed model
# must open, its unknown ops as opaque nodes. ctest does the same (test_onnx_conformance,
# inspect_opens_every_model); this runs it from a shell, without the test harness, in a few minutes.
#
#   tests/conformance/inspect_all.sh [TESSEL] [DATA_DIR]
tessel=${1:-build/app/cli/tessel}
data=${2:-/usr/share/libonnx-testdata/data}
total=0
failed=0
for model in "$data"/node/test_*/model.onnx "$data"/pytorch-converted/test_*/model.onnx \
             "$data"/pytorch-operator/test_*/model.onnx "$data"/simple/test_*/model.onnx; do
  [ -f "$model" ] || continue
  total=$((total + 1))
  if ! message=$("$tessel" inspect "$model" 2>&1 >/dev/null); then
    failed=$((failed + 1))
    echo "FAIL $model: $(echo "$message" | tail -n 1)"
  fi
done
echo "inspect_all: $((total - failed)) of $total models open"
[ "$failed" -eq 0 ]
