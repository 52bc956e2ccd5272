// The `capsim._capsim` extension: each function reads its input (a path or a JSON-shaped Python
// object), calls the library as the command of the same name does, and returns the JSON that
// command prints as Python objects (docs/python.md).
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <variant>
#include <vector>

#include "calibrate/profile_fit.hpp"
#include "models/byte_units.hpp"
#include "models/catalog.hpp"
#include "models/hardware_profile.hpp"
#include "models/scenario.hpp"
#include "planner/confirm.hpp"
#include "planner/plan_io.hpp"
#include "planner/plan_report.hpp"
#include "planner/planner.hpp"
#include "planner/validation_run.hpp"
#include "sim/isolated_simulation.hpp"

#include "estimate/analytic_estimator.hpp"
#include "estimate/iteration_model.hpp"
#include "io/input_error.hpp"
#include "io/json_reader.hpp"
#include "io/profile_io.hpp"
#include "io/rounding.hpp"
#include "io/scenario_io.hpp"
#include "io/simulate_output.hpp"
#include "io/simulation_input.hpp"
#include "io/units.hpp"
#include "io/validation_io.hpp"
#include "whatif/results.hpp"
#include "whatif/runner.hpp"
#include "whatif/whatif_io.hpp"
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

namespace py = pybind11;

namespace capsim::python {
namespace {

// Returns a Python str as UTF-8; one with a lone surrogate (which json.loads makes of "\\ud800")
// has none and is an InputError.
std::string utf8(const py::handle& text, const std::string& file, const std::string& pointer) {
  Py_ssize_t size = 0;
  const char* bytes = PyUnicode_AsUTF8AndSize(text.ptr(), &size);
  if (bytes == nullptr) {
    PyErr_Clear();
    throw io::InputError(file, pointer, "holds a string that is not valid Unicode");
  }
  return {bytes, static_cast<size_t>(size)};
}

// Converts a Python int as nlohmann's parser converts a JSON integer: signed or unsigned 64-bit,
// else (beyond 64 bits) a double; one beyond a double's range is an InputError.
nlohmann::json integer_to_json(const py::handle& value, const std::string& file,
                               const std::string& pointer) {
  int overflow = 0;
  const long long signed_value = PyLong_AsLongLongAndOverflow(value.ptr(), &overflow);
  if (overflow == 0 && !PyErr_Occurred())
    return static_cast<std::int64_t>(signed_value);
  PyErr_Clear();
  if (overflow > 0) {
    const unsigned long long unsigned_value = PyLong_AsUnsignedLongLong(value.ptr());
    if (!PyErr_Occurred())
      return static_cast<std::uint64_t>(unsigned_value);
    PyErr_Clear();
  }
  const double number = PyLong_AsDouble(value.ptr());
  if (PyErr_Occurred()) {
    PyErr_Clear();
    throw io::InputError(file, pointer, "is an integer beyond the range of a double");
  }
  return number;
}

// Converts a JSON-shaped Python object (dict with str keys, list, tuple, str, bool, int, float,
// None) to JSON; `file` and `pointer` name it in the InputError any other value raises. Depth is
// bounded as for files (io::kMaxJsonDepth), which also stops a list that contains itself.
nlohmann::json to_json(const py::handle& value, const std::string& file, const std::string& pointer,
                       int depth = 0) {
  if (depth > io::kMaxJsonDepth)
    throw io::InputError(file, pointer, "nested deeper than " + std::to_string(io::kMaxJsonDepth));
  if (value.is_none())
    return nullptr;
  if (py::isinstance<py::bool_>(value))
    return value.cast<bool>();
  if (py::isinstance<py::int_>(value))
    return integer_to_json(value, file, pointer);
  if (py::isinstance<py::float_>(value)) {
    const auto number = value.cast<double>();
    if (!std::isfinite(number))
      throw io::InputError(file, pointer, "is not a finite number (JSON has no NaN or Infinity)");
    return number;
  }
  if (py::isinstance<py::str>(value))
    return utf8(value, file, pointer);
  if (py::isinstance<py::dict>(value)) {
    nlohmann::json object = nlohmann::json::object();
    for (const auto& [key, item] : value.cast<py::dict>()) {
      if (!py::isinstance<py::str>(key))
        throw io::InputError(
            file, pointer, "has a key that is not a string: " + py::repr(key).cast<std::string>());
      const std::string name = utf8(key, file, pointer);
      object[name] = to_json(item, file, pointer + "/" + name, depth + 1);
    }
    return object;
  }
  if (py::isinstance<py::list>(value) || py::isinstance<py::tuple>(value)) {
    nlohmann::json array = nlohmann::json::array();
    size_t index = 0;
    for (const auto& item : value)
      array.push_back(to_json(item, file, pointer + "/" + std::to_string(index++), depth + 1));
    return array;
  }
  throw io::InputError(file, pointer,
                       "expected a JSON value (dict, list, str, number, bool or None), got " +
                           py::str(py::type::of(value).attr("__name__")).cast<std::string>());
}

// Converts JSON to Python objects (objects keep their key order: nlohmann's is sorted, as in the
// CLI's output).
py::object to_python(const nlohmann::json& value) {
  switch (value.type()) {
    case nlohmann::json::value_t::null:
      return py::none();
    case nlohmann::json::value_t::boolean:
      return py::bool_(value.get<bool>());
    case nlohmann::json::value_t::number_integer:
      return py::int_(value.get<std::int64_t>());
    case nlohmann::json::value_t::number_unsigned:
      return py::int_(value.get<std::uint64_t>());
    case nlohmann::json::value_t::number_float:
      return py::float_(value.get<double>());
    case nlohmann::json::value_t::string:
      return py::str(value.get_ref<const std::string&>());
    case nlohmann::json::value_t::array: {
      py::list list;
      for (const auto& item : value)
        list.append(to_python(item));
      return list;
    }
    case nlohmann::json::value_t::object: {
      py::dict dict;
      for (const auto& [key, item] : value.items())
        dict[py::str(key)] = to_python(item);
      return dict;
    }
    case nlohmann::json::value_t::binary:
    case nlohmann::json::value_t::discarded:
      break;
  }
  return py::none();
}

// A path (str or os.PathLike) as os.fsencode gives it, or nullopt for any other object.
std::optional<std::string> as_path(const py::handle& input) {
  if (!py::isinstance<py::str>(input) && !py::hasattr(input, "__fspath__"))
    return std::nullopt;
  return std::string(py::bytes(py::module_::import("os").attr("fsencode")(input)));
}

// `engine` checked as the CLI's --engine option is.
void check_engine(const std::string& engine) {
  if (engine != "analytic" && engine != "event")
    throw io::InputError("engine", "", "must be event or analytic, got \"" + engine + "\"");
}

// The name errors give a document passed as a Python object rather than a file.
std::string object_name(const char* what) {
  return std::string("<") + what + ">";
}

io::SimulationInput simulation_input(const py::handle& scenario) {
  if (const auto path = as_path(scenario))
    return io::load_simulation_input(*path, {}, std::nullopt);
  const std::string name = object_name("scenario");
  return io::read_simulation_input(to_json(scenario, name, ""), name);
}

py::object simulate(const py::handle& scenario_input, const std::string& engine, bool kernels) {
  check_engine(engine);
  const io::SimulationInput input = simulation_input(scenario_input);
  const IterationCosts costs = estimate::compute_iteration_costs(input.scenario, input.profile);
  // SimGrid allows one simulation per process: the event engine runs in a child.
  SimulationResult result =
      engine == "event" ? sim::simulate_iteration_in_child(input.scenario, input.profile)
                        : estimate::estimate_iteration(input.scenario, costs, input.profile);
  if (const auto note = io::profile_note(input.profile))
    result.notes.push_back(*note);
  return to_python(io::simulate_output_json(result, input.scenario, costs, input.profile, kernels));
}

// The keys of estimate()'s figures and the last scenario name, made once per call rather than
// once per scenario (a sweep's layouts share one name).
class FigureKeys {
 public:
  const py::str scenario{"scenario"}, num_gpus{"num_gpus"}, iteration_time_s{"iteration_time_s"},
      tokens_per_s{"tokens_per_s"}, mfu{"mfu"}, peak_gib_per_gpu{"peak_gib_per_gpu"},
      capacity_gib{"capacity_gib"}, fits{"fits"};

  const py::str& name(const std::string& scenario_name) {
    if (!name_ || scenario_name != last_name_) {
      last_name_ = scenario_name;
      name_ = py::str(scenario_name);
    }
    return *name_;
  }

 private:
  std::string last_name_;
  std::optional<py::str> name_;
};

// The figures estimate() returns for one scenario, rounded as the CLI's JSON rounds them. With
// `memo`, layer costs of an earlier layout of the same model, cluster and profile are reused
// (bit-identical: estimate/iteration_model.hpp).
py::dict estimate_figures(const Scenario& scenario, const HardwareProfile& profile,
                          FigureKeys& keys, estimate::PartCostMemo* memo = nullptr) {
  const IterationCosts costs = estimate::compute_iteration_costs(scenario, profile, memo);
  const SimulationResult r = estimate::estimate_iteration(scenario, costs, profile, nullptr,
                                                          estimate::EstimateDetail::kTimeOnly);
  py::dict figures;
  figures[keys.scenario] = keys.name(r.scenario_name);
  figures[keys.num_gpus] = r.num_gpus;
  figures[keys.iteration_time_s] = io::round_significant(r.iteration_time_s);
  figures[keys.tokens_per_s] = io::round_significant(r.tokens_per_s);
  figures[keys.mfu] = io::round_significant(r.mfu);
  figures[keys.peak_gib_per_gpu] = io::round_significant(r.memory.peak_bytes / kGiB);
  figures[keys.capacity_gib] = io::round_significant(r.memory.capacity_bytes / kGiB);
  figures[keys.fits] = r.memory.fits;
  return figures;
}

py::dict estimate_figures(const io::SimulationInput& input, FigureKeys& keys) {
  return estimate_figures(input.scenario, input.profile, keys);
}

// One entry of estimate()'s answer for a scenario that failed its checks (errors="record").
py::dict error_entry(const io::InputError& error) {
  py::dict entry;
  entry["error"] = py::dict(py::arg("file") = error.file(), py::arg("pointer") = error.pointer(),
                            py::arg("message") = error.message(), py::arg("text") = error.what());
  return entry;
}

// Runs `evaluate(i)` for every i < count; an InputError raises, or with `record` becomes the
// entry's {"error": ...}.
template <typename Evaluate>
py::list estimate_each(size_t count, bool record, Evaluate&& evaluate) {
  py::list out;
  for (size_t i = 0; i < count; ++i) {
    try {
      out.append(evaluate(i));
    } catch (const io::InputError& error) {
      if (!record)
        throw;
      out.append(error_entry(error));
    }
  }
  return out;
}

// The base scenario's parallelism object with one layout's keys laid over it in place, returned
// to the base's by an Applied guard going out of scope (an error included): a sweep then copies
// no more than the keys each layout sets.
class LayoutOverlay {
 public:
  explicit LayoutOverlay(nlohmann::json& parallelism) : doc_(parallelism), base_(parallelism) {}

  // Restores the keys apply() set while it lived.
  class Applied {
   public:
    explicit Applied(LayoutOverlay& overlay) : overlay_(overlay) {}
    Applied(const Applied&) = delete;
    Applied& operator=(const Applied&) = delete;
    ~Applied() { overlay_.restore(); }

   private:
    LayoutOverlay& overlay_;
  };

  // Sets the keys of `layout` (a dict of JSON values, named `file` at `pointer` in errors).
  void apply(const py::handle& layout, const std::string& file, const std::string& pointer) {
    if (!py::isinstance<py::dict>(layout)) {
      (void)to_json(layout, file, pointer);  // a value JSON has no way to hold says so first
      throw io::InputError(file, pointer, "expected an object of parallelism keys");
    }
    for (const auto& [key, item] : layout.cast<py::dict>()) {
      if (!py::isinstance<py::str>(key))
        throw io::InputError(
            file, pointer, "has a key that is not a string: " + py::repr(key).cast<std::string>());
      std::string name = utf8(key, file, pointer);
      nlohmann::json value = to_json(item, file, pointer + "/" + name, 1);
      set_.push_back(name);
      doc_[std::move(name)] = std::move(value);
    }
  }

  [[nodiscard]] const nlohmann::json& document() const { return doc_; }

 private:
  void restore() {
    for (const std::string& key : set_) {
      const auto kept = base_.find(key);
      if (kept != base_.end())
        doc_[key] = *kept;
      else
        doc_.erase(key);
    }
    set_.clear();
  }

  nlohmann::json& doc_;
  const nlohmann::json base_;
  std::vector<std::string> set_;  // keys the current layout set
};

py::list estimate(const py::handle& scenarios, const py::object& parallelism,
                  const std::string& errors) {
  if (errors != "raise" && errors != "record")
    throw io::InputError("errors", "", "must be raise or record, got \"" + errors + "\"");
  const bool record = errors == "record";
  FigureKeys keys;
  if (parallelism.is_none()) {
    if (as_path(scenarios) || py::isinstance<py::dict>(scenarios))
      throw io::InputError("scenarios", "",
                           "expected a list of scenarios (or one with parallelism=[...])");
    const py::sequence list = py::reinterpret_borrow<py::sequence>(scenarios);
    return estimate_each(py::len(list), record, [&](size_t i) {
      const py::object item = list[i];
      if (const auto path = as_path(item))
        return estimate_figures(io::load_simulation_input(*path, {}, std::nullopt), keys);
      const std::string name = "<scenarios[" + std::to_string(i) + "]>";
      return estimate_figures(io::read_simulation_input(to_json(item, name, ""), name), keys);
    });
  }
  // A base and layouts: each layout replaces keys of the base's parallelism object. The first
  // layout that reads cleanly is read in full; its model, cluster and profile do not depend on
  // the layout, so each later layout reads only its parallelism object, by the scenario
  // reader's own rules and messages (io::read_parallelism_document). A base read from a file
  // keeps its name (its profile path resolves against its folder).
  nlohmann::json base;
  const std::optional<std::string> base_path = as_path(scenarios);
  if (base_path)
    base = io::JsonReader::parse_file(*base_path);
  else
    base = to_json(scenarios, object_name("scenario"), "");
  const std::string name = base_path.value_or(object_name("scenario"));
  if (!base.is_object() || !base.contains("parallelism") || !base.at("parallelism").is_object())
    throw io::InputError(name, "/parallelism", "expected the base scenario's parallelism object");
  const std::string layouts_name = object_name("parallelism");
  const py::sequence layouts = py::reinterpret_borrow<py::sequence>(parallelism);
  std::optional<io::SimulationInput> read_once;
  Scenario layout_scenario;     // read_once's scenario with the layout being estimated
  estimate::PartCostMemo memo;  // for read_once's profile, which stays at one address
  LayoutOverlay overlay(base.at("parallelism"));
  return estimate_each(py::len(layouts), record, [&](size_t i) {
    const std::string pointer = "/" + std::to_string(i);
    const LayoutOverlay::Applied applied(overlay);
    overlay.apply(layouts[i], layouts_name, pointer);
    const std::string file =
        base_path ? *base_path : "<scenario with parallelism[" + std::to_string(i) + "]>";
    if (read_once) {
      auto layout = io::read_parallelism_document(read_once->scenario, overlay.document(), file);
      if (const auto* broken = std::get_if<io::InputError>(&layout)) {
        if (!record)
          throw *broken;
        return error_entry(*broken);
      }
      layout_scenario.parallelism = std::get<Parallelism>(std::move(layout));
      return estimate_figures(layout_scenario, read_once->profile, keys, &memo);
    }
    read_once = io::read_simulation_input(base, file);
    layout_scenario = read_once->scenario;
    return estimate_figures(read_once->scenario, read_once->profile, keys, &memo);
  });
}

int default_jobs() {
  return static_cast<int>(std::max(1U, std::thread::hardware_concurrency()));
}

py::object plan(const py::handle& plan_input, const std::string& engine, int top, int jobs,
                bool sensitivity) {
  check_engine(engine);
  if (top < 0)
    throw io::InputError("top", "", "must be at least 0, got " + std::to_string(top));
  if (jobs < 1 || jobs > 1024)
    throw io::InputError("jobs", "", "must be in [1, 1024], got " + std::to_string(jobs));
  planner::PlanSpec spec;
  if (plan_input.is_none()) {
    spec = planner::read_plan_text(planner::default_plan_text(), "<default plan>");
  } else if (const auto path = as_path(plan_input)) {
    spec = planner::load_plan(*path);
  } else {
    const std::string name = object_name("plan");
    spec = planner::read_plan_text(to_json(plan_input, name, "").dump(), name);
  }
  planner::PlanOptions options;
  options.jobs = jobs;
  if (engine == "event")
    options.confirm = planner::forked_confirmer(jobs);
  planner::PlanResult result = planner::run_plan(spec, options);
  result.shared_fabric = planner::assess_shared_fabric(spec, result);
  if (sensitivity)
    result.sensitivity = planner::plan_sensitivity(spec, result);
  return to_python(planner::plan_to_json(spec, result, static_cast<size_t>(top), false));
}

py::object whatif(const py::handle& whatif_input, const std::optional<long long>& seed,
                  const std::optional<int>& seeds, int jobs, const std::string& base_dir,
                  bool allow_unmodelled) {
  whatif::WhatIf w;
  whatif::WhatIfReadOptions options;
  options.allow_unmodelled = allow_unmodelled;
  if (whatif_input.is_none()) {
    w = whatif::default_whatif();
  } else if (const auto path = as_path(whatif_input)) {
    w = whatif::load_whatif(*path, options);
  } else {
    const std::string name = object_name("whatif");
    w = whatif::read_whatif(to_json(whatif_input, name, ""), name, base_dir, options);
  }
  if (seed) {
    if (*seed < 0)
      throw io::InputError("seed", "", "must be >= 0, got " + std::to_string(*seed));
    w.seed = static_cast<std::uint64_t>(*seed);
  }
  int replicas = w.replicas;
  if (seeds) {
    if (*seeds < 1 || *seeds > 1000)
      throw io::InputError("seeds", "", "must be in [1, 1000], got " + std::to_string(*seeds));
    replicas = *seeds;
  }
  if (jobs < 1 || jobs > 1024)
    throw io::InputError("jobs", "", "must be in [1, 1024], got " + std::to_string(jobs));
  const auto runs = whatif::run_all(w, whatif::expand_policies(w), replicas, jobs);
  return to_python(whatif::summary_json(w, runs));
}

py::object validate(const py::handle& cases_input, const std::string& engine) {
  check_engine(engine);
  io::ValidationFile file;
  std::string name;
  if (const auto path = as_path(cases_input)) {
    name = *path;
    file = io::load_validation_file(name);
  } else {
    name = object_name("cases");
    file = io::read_validation_file(to_json(cases_input, name, ""), name);
  }
  const planner::Predictions predictions = planner::predict_cases(file, engine);
  if (predictions.outcomes.empty())
    throw io::InputError(name, "/cases", "no case could be predicted");
  return to_python(planner::validation_report_json(predictions, engine));
}

// The fit's options as the CLI's calibrate fit checks them.
calibrate::ProfileFitOptions fit_options(const std::optional<std::string>& gpu,
                                         const std::optional<std::string>& fabric,
                                         const std::optional<std::string>& node_nic_bandwidth,
                                         const std::optional<std::string>& name, int max_regimes) {
  calibrate::ProfileFitOptions options;
  options.name = name.value_or("");
  options.gpu = gpu.value_or("");
  if (fabric) {
    calibrate::check_fit_fabric(*fabric, "fabric");
    options.fabric = *fabric;
  }
  if (node_nic_bandwidth) {
    const auto bandwidth = io::units::parse_bandwidth_bytes_per_s(*node_nic_bandwidth);
    if (!bandwidth) {
      throw io::InputError(
          "node_nic_bandwidth", "",
          "expected a bandwidth like \"400Gbps\", got \"" + *node_nic_bandwidth + "\"");
    }
    options.node_nic_bandwidth_bytes_per_s = *bandwidth;
  }
  if (max_regimes < 1 || max_regimes > 4)
    throw io::InputError("max_regimes", "", "expected 1 to 4");
  options.max_regimes = max_regimes;
  return options;
}

py::object calibrate_fit(const std::vector<std::string>& logs,
                         const std::optional<std::string>& gpu,
                         const std::optional<std::string>& fabric,
                         const std::optional<std::string>& node_nic_bandwidth,
                         const std::optional<std::string>& name, int max_regimes) {
  if (logs.empty())
    throw io::InputError("logs", "", "missing: the measurement files to fit");
  const calibrate::ProfileFitOptions options =
      fit_options(gpu, fabric, node_nic_bandwidth, name, max_regimes);
  const Catalog& catalog = builtin_catalog();
  calibrate::CalibrationInputs inputs = calibrate::load_inputs(logs);
  const auto missing = calibrate::missing_fit_options(inputs, options, catalog);
  if (!missing.empty())
    throw calibrate::missing_options_error(missing);
  const auto result = calibrate::fit_profile(std::move(inputs), options, catalog);
  std::vector<std::string> warnings = result->warnings;
  const std::string text = io::profile_to_text(result->profile);
  const nlohmann::json profile = io::JsonReader::parse_text(text, "<profile>");
  try {
    io::JsonReader check(profile, "<profile>");
    (void)io::read_profile(check);
  } catch (const io::InputError& e) {
    warnings.push_back("the profile is for fit reports only; simulate and plan will reject it (" +
                       e.pointer() + ": " + e.message() + "); add the missing logs to use it");
  }
  py::dict out;
  out["profile"] = to_python(profile);
  out["warnings"] = warnings;
  return out;
}

// Raises capsim.InputError (a ValueError) with file, pointer, message and problems attributes.
void register_input_error(py::module_& module) {
  static py::exception<io::InputError> input_error(module, "InputError", PyExc_ValueError);
  py::register_exception_translator([](std::exception_ptr thrown) {
    try {
      if (thrown)
        std::rethrow_exception(thrown);
    } catch (const io::InputError& error) {
      py::list problems;
      for (const auto& p : error.problems())
        problems.append(py::make_tuple(p.file, p.pointer, p.message));
      py::object instance = py::handle(input_error.ptr())(error.what());
      instance.attr("file") = error.file();
      instance.attr("pointer") = error.pointer();
      instance.attr("message") = error.message();
      instance.attr("problems") = problems;
      PyErr_SetObject(input_error.ptr(), instance.ptr());
    }
  });
}

}  // namespace
}  // namespace capsim::python

PYBIND11_MODULE(_capsim, module) {
  using namespace capsim::python;
  namespace py = pybind11;
  module.doc() = "capsim: simulate, estimate and plan GPU training clusters (docs/python.md)";
  register_input_error(module);
  module.def("simulate", &simulate, py::arg("scenario"), py::arg("engine") = "event",
             py::arg("kernels") = false,
             "Simulates one iteration of a scenario (path or dict); returns the JSON of "
             "`capsim simulate --json` as a dict.");
  module.def("estimate", &estimate, py::arg("scenarios"), py::arg("parallelism") = py::none(),
             py::arg("errors") = "raise",
             "Estimates many scenarios with the analytic estimator; returns one dict per "
             "scenario (or per parallelism override of one base scenario).");
  module.def("plan", &plan, py::arg("plan") = py::none(), py::arg("engine") = "event",
             py::arg("top") = 10, py::arg("jobs") = default_jobs(), py::arg("sensitivity") = false,
             "Runs a capacity plan (path, dict or None for the default plan); returns the JSON "
             "of `capsim plan --json` (with sensitivity=True, of `--sensitivity --json`).");
  module.def("validate", &validate, py::arg("cases"), py::arg("engine") = "event",
             "Predicts the measured runs of a validation file (path or dict); returns the JSON "
             "of `capsim validate --json`.");
  module.def("calibrate_fit", &calibrate_fit, py::arg("logs"), py::arg("gpu") = py::none(),
             py::arg("fabric") = py::none(), py::arg("node_nic_bandwidth") = py::none(),
             py::arg("name") = py::none(), py::arg("max_regimes") = 4,
             "Fits a capsim.profile/v1 to measurement files (nccl-tests logs, measurement JSON, "
             "the GEMM CSV); returns {\"profile\": ..., \"warnings\": [...]} and writes nothing.");
  module.def("whatif", &whatif, py::arg("whatif") = py::none(), py::arg("seed") = py::none(),
             py::arg("seeds") = py::none(), py::arg("jobs") = 2, py::arg("base_dir") = ".",
             py::arg("allow_unmodelled") = false,
             "Replays a what-if's job trace under each policy; returns the JSON of "
             "`capsim whatif --json`. allow_unmodelled: as --allow-unmodelled, keys of a "
             "policy's configuration file that capsim cannot model become notes.");
}
