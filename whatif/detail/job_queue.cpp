#include "whatif/detail/job_queue.hpp"

#include <limits>

namespace capsim::whatif::detail {
namespace {

// Scenario jobs start at any size their throughput table lists, so they count as 1 GPU.
int start_gpus(const Job& job) {
  return job.rec->scenario_path.empty() ? job.rec->min_gpus : 1;
}

}  // namespace

void JobQueue::add(int j, const Job& job) {
  entries_.insert({-job.rec->priority, job.rec->submit_s, j});
  ++by_start_gpus_[start_gpus(job)];
}

JobQueue::Iterator JobQueue::remove(Iterator it, const Job& job) {
  const auto next = entries_.erase(it);
  const auto count = by_start_gpus_.find(start_gpus(job));
  if (--count->second == 0)
    by_start_gpus_.erase(count);
  return next;
}

int JobQueue::min_start_gpus() const {
  return by_start_gpus_.empty() ? std::numeric_limits<int>::max() : by_start_gpus_.begin()->first;
}

}  // namespace capsim::whatif::detail
