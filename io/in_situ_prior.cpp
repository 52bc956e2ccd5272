#include "io/in_situ_prior.hpp"

#include <cmath>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "models/gpu_catalog.hpp"

#include "io/profile_io.hpp"
#include "io/text_format.hpp"

namespace capsim::io {
namespace {

// One GPU family capsim ships fitted profiles for: its architecture, its InfiniBand profile and
// that profile's factor (every profile of a family carries the same one, scripts/fit-profiles.sh).
struct ShippedFamily {
  std::string architecture;
  std::string file;
  double factor = 1.0;
};

// The shipped families, read once from the embedded profiles (in file order) rather than listed
// again here, so a family that ships a profile joins the prior by that alone.
const std::vector<ShippedFamily>& shipped_families() {
  static const std::vector<ShippedFamily> kFamilies = [] {
    std::vector<ShippedFamily> out;
    for (const EmbeddedProfile& e : embedded_profiles()) {
      const std::string file(e.file);
      const HardwareProfile profile = embedded_profile(file);
      const std::string architecture = profile.gpu.architecture;
      if (file == shipped_profile_file(architecture, "infiniband"))
        out.push_back({architecture, file, profile.software_efficiency});
    }
    return out;
  }();
  return kFamilies;
}

// Families capsim ships no measured kernel profile for, whose factor was fitted to published
// runs on them with `capsim calibrate step`: Blackwell (B200 nodes and GB200 trays;
// docs/validation.md, "Dense models on Blackwell"), once over every stack's runs (the family's
// default, `stack` empty) and once per stack that published runs on it. Each is fitted on the
// fixed third of the runs whose ids start `fit-`.
// CalibrateCommandTest.BlackwellPriorsAreTheFitsOfTheirRuns refits them: rerun the commands when
// the cost model moves.
struct FittedFamily {
  const char* architecture;
  const char* stack;  // the training stack whose runs fitted it; "": every stack's
  double factor;
  const char* runs;  // the command that fits it
};
constexpr FittedFamily kFittedFamilies[] = {
    {"blackwell", "", 0.658636,
     "capsim calibrate step scenarios/validation/dense-blackwell.json --cases fit-"},
    {"blackwell", "megatron-bridge", 0.696525,
     "capsim calibrate step scenarios/validation/dense-blackwell.json --cases fit-mbridge"},
    {"blackwell", "megatron-core", 0.62445,
     "capsim calibrate step scenarios/validation/dense-blackwell.json --cases fit-simumax"},
};

// The fitted factor of `architecture` for `stack`, else the family's default, else nullptr.
const FittedFamily* fitted_family(const std::string& architecture, const std::string& stack) {
  const FittedFamily* family_default = nullptr;
  for (const FittedFamily& family : kFittedFamilies) {
    if (architecture != family.architecture)
      continue;
    if (!stack.empty() && stack == family.stack)
      return &family;
    if (std::string(family.stack).empty())
      family_default = &family;
  }
  return family_default;
}

std::string factor_text(double factor) {
  return printf_string("%.6g", factor);
}

}  // namespace

InSituPrior in_situ_prior(const std::string& architecture, const std::string& stack) {
  double log_sum = 0.0;
  std::string names;
  for (const ShippedFamily& family : shipped_families()) {
    if (family.architecture == architecture) {
      return {family.factor, "software_efficiency " + factor_text(family.factor) +
                                 " borrowed from the shipped " + family.file +
                                 " (its family's, fitted to published runs on the catalog's "
                                 "GPUs); no step was measured on this GPU"};
    }
    log_sum += std::log(family.factor);
    names += (names.empty() ? "" : ", ") + family.file + " " + factor_text(family.factor);
  }
  if (const FittedFamily* family = fitted_family(architecture, stack)) {
    const std::string whose =
        std::string(family->stack).empty()
            ? "fitted to published runs on it"
            : "fitted to published " + std::string(family->stack) + " runs on it";
    return {family->factor, "software_efficiency " + factor_text(family->factor) + ": the " +
                                architecture + " family's, " + whose + " (" + family->runs +
                                "); no step of your stack was measured"};
  }
  // Rounded as a profile file holds it, so that a written profile reads back the same factor.
  const double factor = std::strtod(
      factor_text(std::exp(log_sum / static_cast<double>(shipped_families().size()))).c_str(),
      nullptr);
  return {factor, "software_efficiency " + factor_text(factor) +
                      ": the geometric mean of the shipped families' (" + names +
                      "; fitted to published runs), borrowed: no step was measured on this GPU"};
}

HardwareProfile with_in_situ_prior(HardwareProfile profile, const std::string& architecture,
                                   const std::string& stack) {
  InSituPrior prior = in_situ_prior(architecture, stack);
  profile.software_efficiency = prior.factor;
  profile.provenance.push_back(std::move(prior.source));
  return profile;
}

}  // namespace capsim::io
