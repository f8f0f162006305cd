// checkGeneratedSize (dataset_limits.hpp).
#include "train/dataset_limits.hpp"

#include "spikeforge/errors.hpp"

#include <cstdio>
#include <unistd.h>

namespace spikeforge::train::detail {

namespace {

double physicalMemoryBytes() {
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    return pages > 0 && page > 0 ? double(pages) * double(page) : 0.0; // 0: unknown
}

std::string gib(double bytes) {
    char text[32];
    std::snprintf(text, sizeof text, "%.1f GiB", bytes / (1024.0 * 1024.0 * 1024.0));
    return text;
}

} // namespace

void checkGeneratedSize(const std::string& what, size_t examples, double eventsPerExample) {
    // Per event a time and a channel (8 bytes); per example an offset, a count and a label.
    const double bytes = double(examples) * (eventsPerExample * 8.0 + 16.0);
    const double memory = physicalMemoryBytes();
    if (memory > 0.0 && bytes > memory / 2.0)
        throw ModelError(what + " of " + std::to_string(examples) + " examples would need about " +
                         gib(bytes) + " of memory, more than half of this machine's " +
                         gib(memory) + "; ask for fewer examples");
}

} // namespace spikeforge::train::detail
