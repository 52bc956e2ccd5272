#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <cstddef>
#include <mutex>
#include <span>
#include <string>
#include <vector>

namespace capsim {

// A catalog (GPUs, instance types): the built-in entries, then those inputs defined at run time
// for the rest of the process. The defined ones are append-only: a slot is written under the
// mutex before the count publishes it and never changes after, so readers scan the published
// slots without a lock while another thread defines (the planner's screen threads look GPUs up
// for every candidate). Entry needs a `name` and operator==.
template <typename Entry, size_t kCapacity>
class ExtensibleCatalog {
 public:
  // REQUIRES: `builtin` outlives the catalog (a static array).
  explicit ExtensibleCatalog(std::span<const Entry> builtin) : builtin_(builtin) {}

  [[nodiscard]] bool is_builtin(const std::string& name) const {
    return std::any_of(builtin_.begin(), builtin_.end(),
                       [&](const Entry& e) { return e.name == name; });
  }

  // The entry named `name`, built in or defined; nullptr when none is.
  [[nodiscard]] const Entry* find(const std::string& name) const {
    for (const Entry& e : builtin_) {
      if (e.name == name)
        return &e;
    }
    const size_t count = count_.load(std::memory_order_acquire);
    for (size_t i = 0; i < count; ++i) {
      if (slots_[i].name == name)
        return &slots_[i];
    }
    return nullptr;
  }

  // Every name: the built-in ones in catalog order, then the defined ones.
  [[nodiscard]] std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const Entry& e : builtin_)
      out.push_back(e.name);
    const size_t count = count_.load(std::memory_order_acquire);
    for (size_t i = 0; i < count; ++i)
      out.push_back(slots_[i].name);
    return out;
  }

  // Adds `entry`; the same name with identical fields again changes nothing. Returns an empty
  // string on success, else why not (`what` names the kind: "GPU", "instance").
  [[nodiscard]] std::string define(const Entry& entry, const std::string& what) {
    if (is_builtin(entry.name))
      return "\"" + entry.name + "\" is a built-in " + what + "; give the definition another name";
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
  std::span<const Entry> builtin_;
  std::array<Entry, kCapacity> slots_{};
  std::atomic<size_t> count_{0};
  std::mutex writing_;
};

}  // namespace capsim
