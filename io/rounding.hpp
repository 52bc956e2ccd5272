#pragma once

// Rounding of the numbers written to JSON outputs, so that files stay readable and
// byte-stable across platforms. Two rules, as the outputs need them: significant digits
// (simulate, validate, plan, profiles) and a fixed count of decimals (what-if results, whose
// money and hour totals keep every digit before the point).

namespace capsim::io {

// Returns `value` rounded to `digits` significant digits, halves away from zero (2.390625 GiB
// -> 2.39063), as the double nearest that decimal: a value read back from an output rounds to
// itself, so regenerated files are byte-identical. Zero, infinities, NaN and magnitudes below
// about 1e-302 are returned as they are.
// REQUIRES: 1 <= digits <= 17
[[nodiscard]] double round_significant(double value, int digits = 6);

// Returns `value` rounded to `decimals` places after the point, halves away from zero
// (std::round of value * 10^decimals).
// REQUIRES: 0 <= decimals <= 15
[[nodiscard]] double round_decimals(double value, int decimals);

}  // namespace capsim::io
