#pragma once

#include <deque>
#include <string>
#include <vector>

#include "models/gpu_catalog.hpp"
#include "models/instance_catalog.hpp"

namespace capsim {

// The GPUs and instance types inputs may name: the built-in ones, plus the hardware that inputs
// read into this value define (new GPUs, a plan's own nodes). A plain value: each command holds
// one and passes it to the readers; copies are independent. Not thread-safe while defining;
// const lookups may run concurrently.
class Catalog {
 public:
  // Returns the GPU named `name`, built in or defined here; nullptr when none is. The pointer
  // stays valid for the life of this Catalog.
  [[nodiscard]] const GpuSpec* find_gpu(const std::string& name) const;
  // Returns every GPU name, built in and defined, sorted, for error messages.
  [[nodiscard]] std::vector<std::string> gpu_names() const;
  // Adds a GPU the built-in catalog lacks (new hardware, described by its datasheet figures in
  // a scenario, profile or plan). Defining a name again with identical figures changes nothing.
  // Returns an empty string on success, else why not: a built-in name, or a name defined here
  // with other figures.
  [[nodiscard]] std::string define_gpu(const GpuSpec& gpu);

  // Returns the instance type named `name`, built in or defined here; nullptr when none is.
  // The pointer stays valid for the life of this Catalog.
  [[nodiscard]] const InstanceSpec* find_instance(const std::string& name) const;
  // Returns every instance name: the built-in ones in catalog order, then the defined ones.
  [[nodiscard]] std::vector<std::string> instance_names() const;
  // Adds an instance type the built-in catalog lacks (a plan's own node, new hardware or
  // another cloud), as define_gpu does for GPUs. Its GPU must be this catalog's GPU of that
  // name. Returns an empty string on success, else why not.
  [[nodiscard]] std::string define_instance(const InstanceSpec& instance);

 private:
  std::deque<GpuSpec> gpus_;  // defined here; a deque keeps find_gpu's pointers valid
  std::deque<InstanceSpec> instances_;
};

// Returns the catalog of the built-in GPUs and instance types alone.
[[nodiscard]] const Catalog& builtin_catalog();

}  // namespace capsim
