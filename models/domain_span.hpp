#pragma once

namespace capsim {

// How the worst-placed of a kind of communication group lies on NVLink domains.
struct DomainSpan {
  int domains = 1;               // domains the group's ranks sit in
  int min_ranks_per_domain = 1;  // the fewest of its ranks in one of them: the slowest hop's share
};

// Returns the span of the worst group among the groups of `size` ranks `stride` apart that
// Megatron's rank order builds over `world` GPUs (members base + stride x i, bases t + stride x
// size x k for t < stride; parallel_state.py), on NVLink domains of `domain` consecutive GPUs:
// the group touching the most domains, of those the one with the fewest ranks in one domain.
// Groups that tile the domains give domains = ceil(size / ranks per domain). REQUIRES: size,
// stride, domain >= 1; world a multiple of stride x size.
[[nodiscard]] DomainSpan worst_domain_span(int size, int stride, int domain, int world);

}  // namespace capsim
