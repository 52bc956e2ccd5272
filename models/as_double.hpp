#pragma once

namespace capsim {

// Widens a count (layers, ranks, heads, sizes) to double for cost arithmetic; one name keeps the
// many formulas short and -Wconversion quiet.
inline double d(int v) {
  return static_cast<double>(v);
}

}  // namespace capsim
