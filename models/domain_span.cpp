#include "models/domain_span.hpp"

#include <algorithm>
#include <cstdint>
#include <numeric>

namespace capsim {
namespace {

// The span of the group with members base + stride x i, i < size. Members are in increasing
// order, so a domain's members are consecutive.
DomainSpan span_of(std::int64_t base, int size, int stride, int domain) {
  DomainSpan span{0, size};
  std::int64_t current = -1;
  int in_current = 0;
  for (int i = 0; i < size; ++i) {
    const std::int64_t d = (base + std::int64_t{stride} * i) / domain;
    if (d != current) {
      if (in_current > 0)
        span.min_ranks_per_domain = std::min(span.min_ranks_per_domain, in_current);
      current = d;
      in_current = 0;
      ++span.domains;
    }
    ++in_current;
  }
  span.min_ranks_per_domain = std::min(span.min_ranks_per_domain, in_current);
  return span;
}

}  // namespace

DomainSpan worst_domain_span(int size, int stride, int domain, int world) {
  const std::int64_t block = std::int64_t{stride} * size;
  // Groups repeat with the domains every lcm(domain, block) GPUs; later blocks add none.
  const std::int64_t period = std::lcm(std::int64_t{domain}, block);
  const std::int64_t blocks =
      std::max<std::int64_t>(1, std::min<std::int64_t>(world, period) / block);
  DomainSpan worst{1, size};
  for (std::int64_t k = 0; k < blocks; ++k) {
    for (int t = 0; t < stride; ++t) {
      const DomainSpan s = span_of(k * block + t, size, stride, domain);
      if (s.domains > worst.domains ||
          (s.domains == worst.domains && s.min_ranks_per_domain < worst.min_ranks_per_domain)) {
        worst = s;
      }
    }
  }
  return worst;
}

}  // namespace capsim
