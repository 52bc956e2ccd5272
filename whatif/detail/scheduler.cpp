#include "whatif/detail/scheduler.hpp"

#include <algorithm>
#include <cstddef>
#include <limits>
#include <vector>

#include "whatif/detail/placement.hpp"

namespace capsim::whatif::detail {
namespace {

// Places the job on the first pool and size that fits. `failed_size` gets the smallest size
// tried that did not fit: an elastic job held back from its smaller sizes while capacity boots
// says nothing about them.
bool place(Cluster& c, int j, double now, int& failed_size) {
  std::vector<Piece> pieces;
  for (std::size_t p = 0; p < c.pools.size(); ++p) {
    const auto options = sizes(c, c.job(j), static_cast<int>(p));
    for (int g : options) {
      // An elastic job starts below its request only when no capacity is on its way.
      if (g != options.front() && c.booting(static_cast<int>(p)) > 0)
        break;
      if (find_ready_place(c, static_cast<int>(p), g, pieces)) {
        take(c, j, static_cast<int>(p), pieces, now);
        return true;
      }
      failed_size = std::min(failed_size, g);
    }
  }
  return false;
}

}  // namespace

void schedule(Cluster& c, JobQueue& queue, double now, const std::function<void(int)>& start) {
  if (queue.empty())
    return;
  int total_free = 0;
  for (std::size_t p = 0; p < c.pools.size(); ++p)
    total_free += c.ready_free_gpus(static_cast<int>(p));
  if (total_free == 0)
    return;
  // Fits are monotone in size within a pass (free capacity only shrinks), so a job no
  // smaller than one that failed cannot fit either.
  int smallest_failed = std::numeric_limits<int>::max();
  const bool fifo = c.w.queue == QueueOrder::kFifo;
  for (auto it = queue.begin(); it != queue.end();) {
    const int j = std::get<2>(*it);
    Job& job = c.job(j);
    if (job.rec->min_gpus >= smallest_failed && job.rec->scenario_path.empty()) {
      if (fifo)
        break;
      ++it;
      continue;
    }
    int failed_size = std::numeric_limits<int>::max();
    if (!place(c, j, now, failed_size)) {
      if (job.rec->scenario_path.empty())
        smallest_failed = std::min(smallest_failed, failed_size);
      if (fifo || smallest_failed <= queue.min_start_gpus())
        break;
      ++it;
      continue;
    }
    it = queue.remove(it, job);
    job.state = JobState::kRunning;
    c.running_jobs.insert(j);
    ++job.attempts;
    if (job.first_start < 0)
      job.first_start = now;
    start(j);
  }
}

}  // namespace capsim::whatif::detail
