#pragma once

#include <functional>

#include "whatif/detail/cluster.hpp"
#include "whatif/detail/job_queue.hpp"

namespace capsim::whatif::detail {

// Starts the queued jobs that fit on ready nodes, in queue order (first fit, or strict FIFO),
// marking each running and calling `start(j)` in the order they start; `start` runs the job.
void schedule(Cluster& c, JobQueue& queue, double now, const std::function<void(int)>& start);

}  // namespace capsim::whatif::detail
