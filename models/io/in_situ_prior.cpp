#include "models/io/in_situ_prior.hpp"

#include <cmath>
#include <cstdlib>
#include <utility>
#include <vector>

#include "models/io/profile_io.hpp"
#include "models/io/text_format.hpp"

namespace capsim {
namespace {

// The architectures capsim ships fitted profiles for; each family's InfiniBand profile carries
// the family's factor (every profile of a family carries the same one, scripts/fit-profiles.sh).
const std::vector<std::string>& shipped_architectures() {
  static const std::vector<std::string> kArchitectures{"ampere", "hopper"};
  return kArchitectures;
}

std::string factor_text(double factor) {
  return printf_string("%.6g", factor);
}

}  // namespace

InSituPrior in_situ_prior(const std::string& architecture) {
  std::vector<std::pair<std::string, double>> families;
  for (const std::string& arch : shipped_architectures()) {
    const std::string file = shipped_profile_file(arch, "infiniband");
    const HardwareProfile family = embedded_profile(file);
    if (arch == architecture) {
      return {family.software_efficiency,
              "software_efficiency " + factor_text(family.software_efficiency) +
                  " borrowed from the shipped " + file +
                  " (its family's, fitted to published runs on the catalog's GPUs); no step "
                  "was measured on this GPU"};
    }
    families.emplace_back(file, family.software_efficiency);
  }
  double log_sum = 0.0;
  std::string names;
  for (const auto& [file, factor] : families) {
    log_sum += std::log(factor);
    names += (names.empty() ? "" : ", ") + file + " " + factor_text(factor);
  }
  // Rounded as a profile file holds it, so that a written profile reads back the same factor.
  const double factor = std::strtod(
      factor_text(std::exp(log_sum / static_cast<double>(families.size()))).c_str(), nullptr);
  return {factor, "software_efficiency " + factor_text(factor) +
                      ": the geometric mean of the shipped families' (" + names +
                      "; fitted to published runs), borrowed: no step was measured on this GPU"};
}

HardwareProfile with_in_situ_prior(HardwareProfile profile, const std::string& architecture) {
  InSituPrior prior = in_situ_prior(architecture);
  profile.software_efficiency = prior.factor;
  profile.provenance.push_back(std::move(prior.source));
  return profile;
}

}  // namespace capsim
