#pragma once

#include <csignal>

#include <sys/prctl.h>
#include <unistd.h>

namespace capsim::sim::detail {

// Called first thing in a forked simulation child: the kernel kills it when the parent dies
// (Linux PR_SET_PDEATHSIG), so a `capsim` killed by a signal sent to it alone leaves no
// simulations running; `parent` is the pid before the fork, which catches a parent that died
// in between.
inline void die_with_parent(pid_t parent) {
  (void)prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent)
    _exit(1);
}

}  // namespace capsim::sim::detail
