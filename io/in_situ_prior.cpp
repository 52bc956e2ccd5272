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

// Factors fitted to published runs with `capsim calibrate step`, per GPU family and training
// stack. Families capsim ships no measured kernel profile for (Blackwell: B200 nodes and GB200
// trays; docs/validation.md, "Dense models on Blackwell") have one over every stack's runs (the
// family's default, `stack` empty), each fitted on the fixed third of the runs whose ids start
// `fit-`. A family has one per stack whose published runs on it are in the data: A100 and H100
// from the calibration set's runs of that stack (docs/validation.md, "The in-situ factor"),
// fitted with the stack named, which a scenario naming the stack takes instead of its shipped
// profile's factor over every stack.
// CalibrateCommandTest.StackFactorsAreTheFitsOfTheirRuns refits them: rerun the commands when
// the cost model moves.
struct FittedFamily {
  const char* architecture;
  const char* stack;    // the training stack whose runs fitted it; "": every stack's
  const char* version;  // the stack's version those runs ran; "": every version
  double factor;
  const char* runs;  // the command that fits it
};
constexpr FittedFamily kFittedFamilies[] = {
    {"blackwell", "", "", 0.658636,
     "capsim calibrate step scenarios/validation/dense-blackwell.json --cases fit-"},
    {"blackwell", "megatron-bridge", "", 0.683079,
     "capsim calibrate step scenarios/validation/dense-blackwell.json --cases fit-mbridge"},
    {"blackwell", "megatron-core", "", 0.62445,
     "capsim calibrate step scenarios/validation/dense-blackwell.json --cases fit-simumax"},
    // BLOOM 176B (Megatron-DeepSpeed 2022) and MT-NLG 530B (DeepSpeed + Megatron, 2021).
    {"ampere", "megatron-deepspeed", "", 0.66657,
     "capsim calibrate step scenarios/validation/published-extra.json --cases bloom --cases mtnlg "
     "--set stack=megatron-deepspeed --profile scenarios/profiles/a100-ib.json"},
    // MT-NLG 530B: DeepSpeed's engine of 2021 running Megatron's GPT, the software the 2021
    // DeepSpeed ZeRO-3 runs of Megatron's GPT used.
    {"ampere", "deepspeed", "2021", 0.66657,
     "capsim calibrate step scenarios/validation/published-extra.json --cases mtnlg --set "
     "'stack={\"name\":\"deepspeed\",\"version\":\"2021\"}' --profile "
     "scenarios/profiles/a100-ib.json"},
    {"hopper", "megatron-bridge", "", 0.902434,
     "capsim calibrate step scenarios/validation/published-extra.json --cases mbridge --set "
     "stack=megatron-bridge --profile scenarios/profiles/h100-ib.json"},
    // NeMo 1 as dgxc-benchmarking v25.03 runs it, the recipes whose configure.sh leaves cuDNN's
    // attention on (Nemotron-4 340B's sets NVTE_FUSED_ATTN=0, so it ran FlashAttention-2).
    {"hopper", "nemo", "2023", 0.855329,
     "capsim calibrate step scenarios/validation/published-extra.json --cases dgxc2503-gpt3 "
     "--cases dgxc2503-llama31 --cases dgxc2503-nemotron4-15b --set stack.name=nemo --set "
     "stack.version=2023 --profile scenarios/profiles/h100-ib.json"},
};

// GPUs whose published runs outpace what their datasheet peaks and their family's in-situ factor
// predict, with the tensor speed those runs fitted (docs/validation.md, "Dense models on GB300";
// the dev set's MoE runs on GB300 judge it). GB300's datasheet gives it GB200's dense fp8 and
// bf16 peaks, yet Megatron-Bridge's runs of one layout on both measure it 5-27% faster per step;
// the speed multiplies the tensor-bound time only, so it exceeds that. Its faster fp4 is in its
// datasheet peak already. CalibrateCommandTest.TensorSpeedIsTheFitOfItsRuns refits it.
struct FittedTensorSpeed {
  const char* gpu;
  double speed;
  const char* runs;  // the command that fits it
};
constexpr FittedTensorSpeed kFittedTensorSpeeds[] = {
    {"GB300-NVL-288GB", 1.34324,
     "capsim calibrate step scenarios/validation/dense-gb300.json --tensor-speed"},
};

// The factor of `architecture` fitted to the runs of `stack` ("": none) at `version`, else to
// its runs of every version, else nullptr.
const FittedFamily* stack_family(const std::string& architecture, const std::string& stack,
                                 const std::string& version) {
  if (stack.empty())
    return nullptr;
  const FittedFamily* any_version = nullptr;
  for (const FittedFamily& family : kFittedFamilies) {
    if (architecture != family.architecture || stack != family.stack)
      continue;
    if (std::string(family.version).empty())
      any_version = &family;
    else if (version == family.version)
      return &family;
  }
  return any_version;
}

// The factor of `architecture` fitted over every stack's runs, else nullptr.
const FittedFamily* family_default(const std::string& architecture) {
  for (const FittedFamily& family : kFittedFamilies) {
    if (architecture == family.architecture && std::string(family.stack).empty())
      return &family;
  }
  return nullptr;
}

std::string factor_text(double factor) {
  return printf_string("%.6g", factor);
}

// The provenance line of a fitted factor.
std::string fitted_source(const FittedFamily& family, const std::string& what) {
  const std::string version =
      std::string(family.version).empty() ? "" : " " + std::string(family.version);
  const std::string whose =
      std::string(family.stack).empty()
          ? "fitted to published runs on it"
          : "fitted to published " + std::string(family.stack) + version + " runs on it";
  return "software_efficiency " + factor_text(family.factor) + ": the " + family.architecture +
         " family's, " + whose + " (" + family.runs + "); " + what;
}

}  // namespace

InSituPrior in_situ_prior(const std::string& architecture, const std::string& stack,
                          const std::string& version) {
  if (const FittedFamily* family = stack_family(architecture, stack, version))
    return {family->factor, fitted_source(*family, "no step of your stack was measured")};
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
  if (const FittedFamily* family = family_default(architecture))
    return {family->factor, fitted_source(*family, "no step of your stack was measured")};
  // Rounded as a profile file holds it, so that a written profile reads back the same factor.
  const double factor = std::strtod(
      factor_text(std::exp(log_sum / static_cast<double>(shipped_families().size()))).c_str(),
      nullptr);
  return {factor, "software_efficiency " + factor_text(factor) +
                      ": the geometric mean of the shipped families' (" + names +
                      "; fitted to published runs), borrowed: no step was measured on this GPU"};
}

std::optional<InSituPrior> tensor_speed_prior(const std::string& gpu_name) {
  for (const FittedTensorSpeed& fitted : kFittedTensorSpeeds) {
    if (gpu_name == fitted.gpu) {
      return InSituPrior{fitted.speed, "tensor_speed " + factor_text(fitted.speed) + ": " +
                                           fitted.gpu +
                                           "'s tensor cores over its datasheet peaks, fitted to "
                                           "published runs on it (" +
                                           fitted.runs + ")"};
    }
  }
  return std::nullopt;
}

HardwareProfile with_in_situ_prior(HardwareProfile profile, const std::string& architecture,
                                   const std::string& stack, const std::string& version) {
  InSituPrior prior = in_situ_prior(architecture, stack, version);
  profile.software_efficiency = prior.factor;
  profile.provenance.push_back(std::move(prior.source));
  if (std::optional<InSituPrior> speed = tensor_speed_prior(profile.gpu.name)) {
    profile.tensor_speed = speed->factor;
    profile.provenance.push_back(std::move(speed->source));
  }
  return profile;
}

bool has_stack_factor(const std::string& architecture, const std::string& stack,
                      const std::string& version) {
  return stack_family(architecture, stack, version) != nullptr;
}

HardwareProfile with_stack_factor(HardwareProfile profile, const std::string& stack,
                                  const std::string& version) {
  const FittedFamily* family = stack_family(profile.gpu.architecture, stack, version);
  if (family == nullptr)
    return profile;
  profile.software_efficiency = family->factor;
  profile.provenance.push_back(
      fitted_source(*family, "the scenario's stack, in place of the shipped profile's factor"));
  return profile;
}

}  // namespace capsim::io
