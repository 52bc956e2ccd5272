#include "calibrate/step_fit.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <set>
#include <string>

#include "models/gpu_catalog.hpp"

#include "estimate/analytic_estimator.hpp"
#include "io/input_error.hpp"

namespace capsim::calibrate {
namespace {

constexpr int kSearchSteps = 80;       // golden-section: the bracket shrinks to ~1e-16 of its width
constexpr int kMaxAlternations = 300;  // coordinate descent rounds when attention is fitted
constexpr double kConverged = 1e-9;    // stop when neither log factor moves more than this
constexpr double kMinAttentionScale = 0.1;
constexpr double kMaxAttentionScale = 2.0;

double predicted_s(const io::ValidationCase& run, const HardwareProfile& profile) {
  return estimate::estimate_iteration(run.scenario, profile, estimate::EstimateDetail::kTimeOnly)
      .iteration_time_s;
}

// The summed absolute log error: the fit's objective. Absolute rather than squared, so one run
// of an odd stack (a 2021 framework among 2024 ones) moves the fit as much as any other run, not
// quadratically more: for a pure scale factor its minimiser is the median log ratio. It is also
// the error capsim is judged by (MAPE) to first order.
double absolute_log_error(const std::vector<io::ValidationCase>& runs,
                          const HardwareProfile& profile) {
  double sum = 0.0;
  for (const auto& run : runs)
    sum += std::fabs(std::log(predicted_s(run, profile) / run.measured_iteration_time_s));
  return sum;
}

// Returns the minimiser of f on [lo, hi] by golden-section search (f unimodal there).
double golden_section(const std::function<double(double)>& f, double lo, double hi) {
  const double phi = (std::sqrt(5.0) - 1.0) / 2.0;
  double x1 = hi - phi * (hi - lo);
  double x2 = lo + phi * (hi - lo);
  double f1 = f(x1);
  double f2 = f(x2);
  for (int i = 0; i < kSearchSteps; ++i) {
    if (f1 <= f2) {
      hi = x2;
      x2 = x1;
      f2 = f1;
      x1 = hi - phi * (hi - lo);
      f1 = f(x1);
    } else {
      lo = x1;
      x1 = x2;
      f1 = f2;
      x2 = lo + phi * (hi - lo);
      f2 = f(x2);
    }
  }
  return 0.5 * (lo + hi);
}

void check_runs(const std::vector<io::ValidationCase>& runs, const HardwareProfile& base,
                const std::string& file) {
  if (runs.empty())
    throw io::InputError(file, "/cases", "no measured runs to calibrate on");
  // A profile serves every GPU of its architecture (resolve_profile does the same).
  const std::string& arch = base.gpu.architecture;
  for (size_t i = 0; i < runs.size(); ++i) {
    if (runs[i].scenario.cluster.gpu.architecture != arch) {
      // The run's place in the file (runs may be a filtered subset of its cases).
      const std::string where =
          runs[i].pointer.empty() ? "/cases/" + std::to_string(i) : runs[i].pointer;
      throw io::InputError(file, where + "/scenario/cluster/gpu",
                           "run \"" + runs[i].id + "\" is on " + runs[i].scenario.cluster.gpu.name +
                               ", the profile \"" + base.name + "\" on " + base.gpu.name + " (" +
                               arch + ")");
    }
  }
}

// The fit's predictions of every run, before (the base profile) and after (the fitted one).
void fill_predictions(StepFit& fit, const std::vector<io::ValidationCase>& runs,
                      const HardwareProfile& base) {
  for (const auto& run : runs) {
    fit.predicted_before_s.push_back(predicted_s(run, base));
    fit.predicted_after_s.push_back(predicted_s(run, fit.profile));
  }
}

// The base profile with its four attention efficiencies times `scale` (at most 1).
HardwareProfile with_attention_scale(const HardwareProfile& base, double scale) {
  HardwareProfile p = base;
  for (double* e :
       {&p.attention.forward_efficiency_hd128, &p.attention.forward_efficiency_hd64,
        &p.attention.backward_efficiency_hd128, &p.attention.backward_efficiency_hd64}) {
    *e = std::min(1.0, *e * scale);
  }
  return p;
}

// Whether a provenance line is the one stating software_efficiency (every such line starts so:
// profile_fit's "software_efficiency 1: ...", calibrate step's "software_efficiency X fitted ...").
bool states_software_efficiency(const std::string& provenance_line) {
  return provenance_line.starts_with("software_efficiency ");
}

}  // namespace

StepFit fit_software_efficiency(const std::vector<io::ValidationCase>& runs,
                                const HardwareProfile& base, const std::string& file,
                                bool fit_attention) {
  check_runs(runs, base, file);
  if (fit_attention) {
    std::set<int> lengths;
    for (const auto& run : runs)
      lengths.insert(run.scenario.model.seq_length);
    if (lengths.size() < 2) {
      throw io::InputError(file, "/cases",
                           "fitting attention needs runs at two or more sequence lengths");
    }
  }
  // Golden-section searches on the logarithms: each run's log time falls monotonically and
  // nearly linearly in log(efficiency) (compute scales as 1/efficiency, communication not at
  // all), so the summed absolute log error is close to convex and piecewise linear; the brackets
  // cover every physical value. With attention, the two scalars are fitted in turn (coordinate
  // descent): attention's share of the time differs across sequence lengths, which separates
  // them.
  double efficiency = base.software_efficiency;
  double attention = 1.0;
  for (int round = 0; round < (fit_attention ? kMaxAlternations : 1); ++round) {
    const HardwareProfile scaled = with_attention_scale(base, attention);
    const double previous_efficiency = efficiency;
    const double previous_attention = attention;
    efficiency = std::exp(golden_section(
        [&](double x) {
          HardwareProfile p = scaled;
          p.software_efficiency = std::exp(x);
          return absolute_log_error(runs, p);
        },
        std::log(HardwareProfile::kMinSoftwareEfficiency),
        std::log(HardwareProfile::kMaxSoftwareEfficiency)));
    if (!fit_attention)
      break;
    attention = std::exp(golden_section(
        [&](double x) {
          HardwareProfile p = with_attention_scale(base, std::exp(x));
          p.software_efficiency = efficiency;
          return absolute_log_error(runs, p);
        },
        std::log(kMinAttentionScale), std::log(kMaxAttentionScale)));
    if (std::fabs(std::log(efficiency / previous_efficiency)) < kConverged &&
        std::fabs(std::log(attention / previous_attention)) < kConverged) {
      break;
    }
  }
  StepFit fit;
  fit.software_efficiency = efficiency;
  fit.attention_scale = attention;
  fit.tensor_speed = base.tensor_speed;
  fit.profile = with_attention_scale(base, attention);
  fit.profile.software_efficiency = efficiency;
  fill_predictions(fit, runs, base);
  return fit;
}

StepFit fit_tensor_speed(const std::vector<io::ValidationCase>& runs, const HardwareProfile& base,
                         const std::string& file) {
  check_runs(runs, base, file);
  // As for the efficiency: each run's log time falls monotonically in log(speed), the
  // compute-bound part as 1/speed and the rest not at all.
  const double speed = std::exp(golden_section(
      [&](double x) {
        HardwareProfile p = base;
        p.tensor_speed = std::exp(x);
        return absolute_log_error(runs, p);
      },
      std::log(HardwareProfile::kMinTensorSpeed), std::log(HardwareProfile::kMaxTensorSpeed)));
  StepFit fit;
  fit.software_efficiency = base.software_efficiency;
  fit.tensor_speed = speed;
  fit.profile = base;
  fit.profile.tensor_speed = speed;
  fill_predictions(fit, runs, base);
  return fit;
}

void set_tensor_speed(HardwareProfile& profile, double speed, const std::string& provenance) {
  profile.tensor_speed = speed;
  std::erase_if(profile.provenance,
                [](const std::string& line) { return line.starts_with("tensor_speed "); });
  profile.provenance.push_back(provenance);
}

bool one_factor_serves(const HardwareProfile& base, const HardwareProfile& other) {
  if (other.name == base.name)
    return true;
  return base.is_datasheet_default && other.is_datasheet_default &&
         base.gpu.architecture == other.gpu.architecture && base.fabric == other.fabric &&
         base.tensor_speed == other.tensor_speed;
}

void set_software_efficiency(HardwareProfile& profile, double efficiency,
                             const std::string& provenance) {
  profile.software_efficiency = efficiency;
  std::erase_if(profile.provenance, states_software_efficiency);
  profile.provenance.push_back(provenance);
}

std::string software_efficiency_origin(const HardwareProfile& profile) {
  const auto line = std::find_if(profile.provenance.begin(), profile.provenance.end(),
                                 states_software_efficiency);
  return line == profile.provenance.end()
             ? "software_efficiency " + std::to_string(profile.software_efficiency)
             : *line;
}

std::vector<double> cross_validate_one_step(const std::vector<io::ValidationCase>& runs,
                                            const HardwareProfile& base, const std::string& file) {
  check_runs(runs, base, file);
  std::vector<double> mape;
  for (const auto& calibration_run : runs) {
    const StepFit fit = fit_software_efficiency({calibration_run}, base, file, false);
    const HardwareProfile& profile = fit.profile;
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
