#include "cli/launcher_rank.hpp"

#include <cstdlib>
#include <initializer_list>

namespace capsim::cli {

int launcher_rank() {
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"}) {
    const char* value = std::getenv(name);
    if (value != nullptr && *value != '\0')
      return std::atoi(value);
  }
  return 0;
}

}  // namespace capsim::cli
