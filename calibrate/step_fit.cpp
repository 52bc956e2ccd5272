#include "calibrate/step_fit.hpp"

#include <cmath>

#include "models/analytic_estimator.hpp"
#include "models/gpu_catalog.hpp"
#include "models/io/input_error.hpp"

namespace capsim::calibrate {
namespace {

constexpr int kSearchSteps = 80;  // golden-section: the bracket shrinks to ~1e-16 of its width

double predicted_s(const ValidationCase& run, const HardwareProfile& profile) {
  return estimate_iteration(run.scenario, profile).iteration_time_s;
}

double squared_log_error(const std::vector<ValidationCase>& runs, HardwareProfile& profile,
                         double efficiency) {
  profile.software_efficiency = efficiency;
  double sum = 0.0;
  for (const auto& run : runs) {
    const double e = std::log(predicted_s(run, profile) / run.measured_iteration_time_s);
    sum += e * e;
  }
  return sum;
}

void check_runs(const std::vector<ValidationCase>& runs, const HardwareProfile& base,
                const std::string& file) {
  if (runs.empty())
    throw InputError(file, "/cases", "no measured runs to calibrate on");
  // A profile serves every GPU of its architecture (resolve_profile does the same).
  const std::string& arch = find_gpu(base.gpu)->architecture;
  for (size_t i = 0; i < runs.size(); ++i) {
    if (find_gpu(runs[i].scenario.cluster.gpu)->architecture != arch) {
      // The run's place in the file (runs may be a filtered subset of its cases).
      const std::string where =
          runs[i].pointer.empty() ? "/cases/" + std::to_string(i) : runs[i].pointer;
      throw InputError(file, where + "/scenario/cluster/gpu",
                       "run \"" + runs[i].id + "\" is on " + runs[i].scenario.cluster.gpu +
                           ", the profile \"" + base.name + "\" on " + base.gpu + " (" + arch +
                           ")");
    }
  }
}

}  // namespace

StepFit fit_software_efficiency(const std::vector<ValidationCase>& runs,
                                const HardwareProfile& base, const std::string& file) {
  check_runs(runs, base, file);
  HardwareProfile profile = base;
  // Golden-section search on log(efficiency): each run's log time falls monotonically and
  // nearly linearly in it (compute scales as 1/efficiency, communication not at all), so the
  // summed squared log error is close to a convex quadratic; the bracket covers every
  // physical value.
  const double phi = (std::sqrt(5.0) - 1.0) / 2.0;
  double lo = std::log(HardwareProfile::kMinSoftwareEfficiency);
  double hi = std::log(HardwareProfile::kMaxSoftwareEfficiency);
  double x1 = hi - phi * (hi - lo);
  double x2 = lo + phi * (hi - lo);
  double f1 = squared_log_error(runs, profile, std::exp(x1));
  double f2 = squared_log_error(runs, profile, std::exp(x2));
  for (int i = 0; i < kSearchSteps; ++i) {
    if (f1 <= f2) {
      hi = x2;
      x2 = x1;
      f2 = f1;
      x1 = hi - phi * (hi - lo);
      f1 = squared_log_error(runs, profile, std::exp(x1));
    } else {
      lo = x1;
      x1 = x2;
      f1 = f2;
      x2 = lo + phi * (hi - lo);
      f2 = squared_log_error(runs, profile, std::exp(x2));
    }
  }
  StepFit fit;
  fit.software_efficiency = std::exp(0.5 * (lo + hi));
  profile.software_efficiency = fit.software_efficiency;
  for (const auto& run : runs) {
    fit.predicted_before_s.push_back(predicted_s(run, base));
    fit.predicted_after_s.push_back(predicted_s(run, profile));
  }
  return fit;
}

std::vector<double> cross_validate_one_step(const std::vector<ValidationCase>& runs,
                                            const HardwareProfile& base, const std::string& file) {
  check_runs(runs, base, file);
  std::vector<double> mape;
  for (const auto& calibration_run : runs) {
    const StepFit fit = fit_software_efficiency({calibration_run}, base, file);
    HardwareProfile profile = base;
    profile.software_efficiency = fit.software_efficiency;
    double sum = 0.0;
    int n = 0;
    for (const auto& run : runs) {
      if (&run == &calibration_run)
        continue;
      sum += std::fabs(predicted_s(run, profile) / run.measured_iteration_time_s - 1.0);
      ++n;
    }
    mape.push_back(n > 0 ? 100.0 * sum / n : 0.0);
  }
  return mape;
}

}  // namespace capsim::calibrate
