// Warnings for a dataset that is valid but probably not what was meant (dataset.hpp): classes
// without examples, and events later than the window the network sees.
#include "spikeforge/train/dataset.hpp"

#include <cstdio>
#include <string>

namespace spikeforge::train {

std::vector<std::string> emptyClassWarnings(const EventDataset& data, const std::string& source) {
    constexpr size_t listed = 10;
    const std::vector<size_t> counts = data.classCounts();
    std::vector<uint32_t> empty;
    for (size_t c = 0; c < counts.size(); c++)
        if (counts[c] == 0) empty.push_back(static_cast<uint32_t>(c));
    if (empty.empty()) return {};
    std::string list;
    for (size_t k = 0; k < empty.size() && k < listed; k++)
        list += (k ? ", " : "") + std::to_string(empty[k]);
    if (empty.size() > listed) list += " and " + std::to_string(empty.size() - listed) + " more";
    return {source + ": " + (empty.size() == 1 ? "class " : "classes ") + list + " of " +
            std::to_string(data.numClasses()) + " ha" + (empty.size() == 1 ? "s" : "ve") +
            " no examples (among the " + std::to_string(data.size()) + " read)"};
}

std::vector<std::string> lateEventWarnings(const EventDataset& data, const std::string& source,
                                           double window) {
    if (!(window > 0.0) || data.numEvents() == 0) return {};
    const auto bound = static_cast<float>(window);
    size_t late = 0;
    for (const float t : data.times())
        late += t > bound ? 1 : 0;
    if (2 * late <= data.numEvents()) return {};
    char share[32];
    std::snprintf(share, sizeof share, "%.1f%%", 100.0 * double(late) / double(data.numEvents()));
    char ms[32];
    std::snprintf(ms, sizeof ms, "%g", window);
    return {source + ": " + std::to_string(late) + " of " + std::to_string(data.numEvents()) +
            " events (" + share + ") are later than " + ms +
            " ms and are never seen; were the times written in milliseconds instead of "
            "seconds?"};
}

} // namespace spikeforge::train
