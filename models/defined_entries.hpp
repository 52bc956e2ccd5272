#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <mutex>
#include <string>
#include <vector>

namespace capsim {

// Catalog entries (GPUs, instances) an input defined at run time, for the rest of the process.
// Append-only: a slot is written under the mutex before the count publishes it and never
// changes after, so readers scan the published slots without a lock while another thread
// defines (the planner's screen threads look GPUs up for every candidate). Entry needs a
// `name` and operator==.
template <typename Entry, size_t kCapacity>
class DefinedEntries {
 public:
  [[nodiscard]] const Entry* find(const std::string& name) const {
    const size_t count = count_.load(std::memory_order_acquire);
    for (size_t i = 0; i < count; ++i) {
      if (slots_[i].name == name)
        return &slots_[i];
    }
    return nullptr;
  }

  void append_names(std::vector<std::string>& names) const {
    const size_t count = count_.load(std::memory_order_acquire);
    for (size_t i = 0; i < count; ++i)
      names.push_back(slots_[i].name);
  }

  // Adds `entry`; the same name with identical fields again changes nothing. Returns an empty
  // string on success, else why not (`what` names the kind: "GPU", "instance").
  [[nodiscard]] std::string define(const Entry& entry, const std::string& what) {
    const std::lock_guard<std::mutex> lock(writing_);
    if (const Entry* known = find(entry.name)) {
      if (*known == entry)
        return "";
      return what + " \"" + entry.name + "\" is already defined with other figures";
    }
    const size_t count = count_.load(std::memory_order_relaxed);
    if (count == kCapacity)
      return "more than " + std::to_string(kCapacity) + " " + what + "s defined";
    slots_[count] = entry;
    count_.store(count + 1, std::memory_order_release);
    return "";
  }

 private:
  std::array<Entry, kCapacity> slots_{};
  std::atomic<size_t> count_{0};
  std::mutex writing_;
};

}  // namespace capsim
