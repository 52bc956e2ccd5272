#pragma once

// The axes of capsim's SVG charts (the plan report's, the simulate sweep's): a drawing frame,
// "nice" ticks and their labels.

#include <string>

namespace capsim::io {

// A chart's drawing area inside its SVG viewBox: the plot's box and the margins for the axes'
// labels. The SVG scales to the page width (viewBox), so 760 units read at a normal width.
struct Frame {
  double width = 760.0;
  double height = 400.0;
  double left = 96.0;
  double right = 24.0;
  double top = 20.0;
  double bottom = 56.0;
  [[nodiscard]] double plot_width() const { return width - left - right; }
  [[nodiscard]] double plot_height() const { return height - top - bottom; }
};

// An axis from a rounded-down minimum to a rounded-up maximum on the tick step.
struct Axis {
  double lo = 0.0;
  double hi = 1.0;
  double step = 1.0;
};

// Returns a "nice" tick step (1, 2 or 5 times a power of ten) giving about `ticks` intervals.
// REQUIRES: span > 0, ticks >= 1.
[[nodiscard]] double tick_step(double span, int ticks);

// Returns the axis covering [lo, hi] on about five nice ticks (a zero-width range is padded by
// 10%; an axis of non-negative values does not dip below zero).
[[nodiscard]] Axis nice_axis(double lo, double hi);

// Returns a tick label: the value to three decimals, or dollars with k or M for large amounts.
[[nodiscard]] std::string tick_label(double v, bool dollars);

}  // namespace capsim::io
