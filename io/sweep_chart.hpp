#pragma once

// The SVG chart of `capsim simulate --sweep`: throughput against the swept value.

#include <optional>
#include <string>
#include <vector>

namespace capsim::io {

// One run of a sweep as the chart draws it.
struct SweepChartPoint {
  std::string label;        // the value as given on the command line
  std::optional<double> x;  // the value, when every value of the sweep is a number
  double tokens_per_s = 0.0;
  double iteration_time_s = 0.0;
  bool fits = true;  // peak memory within the GPU's capacity
};

// Returns a standalone SVG document: tokens per second against the swept value (a numeric axis
// when every point has `x`, else the values evenly spaced in the order given), the points joined,
// each labelled with its iteration time, those that do not fit in memory drawn hollow and red.
// `path` names the swept key in the title and the axis. REQUIRES: !points.empty().
[[nodiscard]] std::string sweep_chart_svg(const std::string& path,
                                          const std::vector<SweepChartPoint>& points);

}  // namespace capsim::io
