#pragma once
#include "core/graph/ops/common.h"
