#include "models/catalog.hpp"

#include <algorithm>
#include <span>

namespace capsim {
namespace {

// The entry named `name` among the built-in ones, then the defined ones; nullptr when none is.
template <typename Entry>
const Entry* find_entry(std::span<const Entry> builtin, const std::deque<Entry>& defined,
                        const std::string& name) {
  for (const Entry& e : builtin) {
    if (e.name == name)
      return &e;
  }
  for (const Entry& e : defined) {
    if (e.name == name)
      return &e;
  }
  return nullptr;
}

template <typename Entry>
std::vector<std::string> entry_names(std::span<const Entry> builtin,
                                     const std::deque<Entry>& defined) {
  std::vector<std::string> out;
  for (const Entry& e : builtin)
    out.push_back(e.name);
  for (const Entry& e : defined)
    out.push_back(e.name);
  return out;
}

// Adds `entry` to `defined`; the same name with identical fields again changes nothing. Returns
// an empty string on success, else why not (`what` names the kind: "GPU", "instance").
template <typename Entry>
std::string define_entry(std::span<const Entry> builtin, std::deque<Entry>& defined,
                         const Entry& entry, const std::string& what) {
  if (std::any_of(builtin.begin(), builtin.end(),
                  [&](const Entry& e) { return e.name == entry.name; }))
    return "\"" + entry.name + "\" is a built-in " + what + "; give the definition another name";
  if (const Entry* known = find_entry(std::span<const Entry>(), defined, entry.name)) {
    if (*known == entry)
      return "";
    return what + " \"" + entry.name + "\" is already defined with other figures";
  }
  defined.push_back(entry);
  return "";
}

}  // namespace

const GpuSpec* Catalog::find_gpu(const std::string& name) const {
  return find_entry(builtin_gpus(), gpus_, name);
}

std::vector<std::string> Catalog::gpu_names() const {
  std::vector<std::string> names = entry_names(builtin_gpus(), gpus_);
  std::sort(names.begin(), names.end());
  return names;
}

std::string Catalog::define_gpu(const GpuSpec& gpu) {
  return define_entry(builtin_gpus(), gpus_, gpu, "GPU");
}

const InstanceSpec* Catalog::find_instance(const std::string& name) const {
  return find_entry(builtin_instances(), instances_, name);
}

std::vector<std::string> Catalog::instance_names() const {
  return entry_names(builtin_instances(), instances_);
}

std::string Catalog::define_instance(const InstanceSpec& instance) {
  const GpuSpec* gpu = find_gpu(instance.gpu.name);
  if (gpu == nullptr || !(*gpu == instance.gpu))
    return "unknown GPU \"" + instance.gpu.name + "\"";
  return define_entry(builtin_instances(), instances_, instance, "instance");
}

const Catalog& builtin_catalog() {
  static const Catalog kBuiltin;
  return kBuiltin;
}

}  // namespace capsim
