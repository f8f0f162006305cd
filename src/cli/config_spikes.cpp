// Spike times of SpikeSourceArray populations (inline or from a CSV file) and the check that
// every extra global parameter (EGP) a model needs can be given by the config.
#include "config_parts.hpp"
#include "input_file.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <limits>
#include <utility>

namespace spikeforge::cli {

namespace {

// One given spike: (neuron, time [ms]). Kept as a flat list so that memory follows the number
// of spikes, not the population size.
using Spike = std::pair<uint32_t, double>;

std::string formatTime(double value) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.10g", value);
    return buffer;
}

// Sorts the spikes by neuron, then time.
SpikeSourceInput pack(const std::string& population, unsigned size, std::vector<Spike> spikes,
                      const std::function<void(const std::string&)>& fail) {
    if (spikes.size() > std::numeric_limits<uint32_t>::max())
        fail("too many spike times (" + std::to_string(spikes.size()) + "; at most 2^32 - 1)");
    std::sort(spikes.begin(), spikes.end());
    SpikeSourceInput in;
    in.population = population;
    in.size = size;
    in.neurons.reserve(spikes.size());
    in.spikeTimes.reserve(spikes.size());
    for (const auto& [neuron, time] : spikes) {
        in.neurons.push_back(neuron);
        in.spikeTimes.push_back(time);
    }
    return in;
}

// spike_times = [[1.0, 5.0], [], [2.5]]: one list per neuron.
std::vector<Spike> readInlineTimes(const Reader& r, const toml::node& node,
                                   const std::string& where, unsigned size) {
    const toml::array& lists = r.array(node, where);
    if (lists.size() != size)
        r.fail(node, where + ": expected one list of times per neuron (" + std::to_string(size) +
                         " lists), got " + std::to_string(lists.size()));
    std::vector<Spike> spikes;
    for (unsigned i = 0; i < size; ++i) {
        const std::string here = where + "[" + std::to_string(i) + "]";
        const toml::array& list = r.array(lists[i], here);
        for (std::size_t k = 0; k < list.size(); ++k) {
            const std::string at = here + "[" + std::to_string(k) + "]";
            const double time = r.number(list[k], at);
            if (time < 0.0)
                r.fail(list[k], at + ": a spike time must be >= 0 ms, got " + formatTime(time));
            spikes.emplace_back(i, time);
        }
    }
    return spikes;
}

std::string_view trimmed(std::string_view text) {
    const auto space = [](char c) { return c == ' ' || c == '\t' || c == '\r'; };
    while (!text.empty() && space(text.front()))
        text.remove_prefix(1);
    while (!text.empty() && space(text.back()))
        text.remove_suffix(1);
    return text;
}

// At most 40 bytes of a field, for a message (a CSV line may be megabytes long).
std::string excerpt(std::string_view text) {
    constexpr std::size_t limit = 40;
    return text.size() <= limit ? std::string(text) : std::string(text.substr(0, limit)) + "...";
}

// Rows "neuron,time_ms"; an optional header of exactly those names, blank lines and lines
// starting with '#' are skipped. Errors are reported as FILE:LINE.
std::vector<Spike> parseTimesCsv(const std::string& text, const std::string& file,
                                 const std::string& where, unsigned size) {
    std::vector<Spike> spikes;
    std::size_t lineStart = 0;
    unsigned line = 0;
    bool first = true;
    while (lineStart < text.size()) {
        std::size_t lineEnd = text.find('\n', lineStart);
        if (lineEnd == std::string::npos) lineEnd = text.size();
        const std::string_view row =
            trimmed(std::string_view(text).substr(lineStart, lineEnd - lineStart));
        lineStart = lineEnd + 1;
        ++line;
        const auto fail = [&](const std::string& what) {
            throw ConfigError(file, line, 0, where + ": " + what);
        };
        if (row.empty() || row.front() == '#') continue;
        const std::size_t comma = row.find(',');
        const std::string_view neuronText = trimmed(row.substr(0, comma));
        const std::string_view timeText =
            comma == std::string_view::npos ? std::string_view() : trimmed(row.substr(comma + 1));
        const bool header = neuronText == "neuron" && timeText == "time_ms";
        if (std::exchange(first, false) && header) continue;
        if (comma == std::string_view::npos || timeText.find(',') != std::string_view::npos)
            fail("expected a row 'neuron,time_ms', got '" + excerpt(row) + "'");
        uint64_t neuron = 0;
        const auto [nEnd, nErr] =
            std::from_chars(neuronText.data(), neuronText.data() + neuronText.size(), neuron);
        if (nErr != std::errc() || nEnd != neuronText.data() + neuronText.size())
            fail("neuron '" + excerpt(neuronText) + "' is not a whole number >= 0");
        if (neuron >= size)
            fail("neuron " + std::to_string(neuron) + " does not exist (the population has " +
                 std::to_string(size) + " neurons, 0 to " + std::to_string(size - 1) + ")");
        double time = 0.0;
        const auto [tEnd, tErr] =
            std::from_chars(timeText.data(), timeText.data() + timeText.size(), time);
        if (tErr != std::errc() || tEnd != timeText.data() + timeText.size() ||
            !std::isfinite(time))
            fail("time '" + excerpt(timeText) + "' is not a finite number [ms]");
        if (time < 0.0) fail("a spike time must be >= 0 ms, got " + formatTime(time));
        spikes.emplace_back(static_cast<uint32_t>(neuron), time);
    }
    return spikes;
}

// The file named by spike_times_file, relative to the config's directory.
std::string resolvePath(const std::string& configFile, const std::string& name) {
    const std::filesystem::path path(name);
    if (path.is_absolute()) return name;
    return (std::filesystem::path(configFile).parent_path() / path).string();
}

} // namespace

std::optional<SpikeSourceInput> readSpikeTimes(const Reader& r, const toml::table& t,
                                               const std::string& where, const std::string& name,
                                               unsigned size, std::vector<std::string>& files) {
    const toml::node* inlineNode = t.get("spike_times");
    const toml::node* fileNode = t.get("spike_times_file");
    if (inlineNode && fileNode)
        r.fail(*fileNode, where + ": give either spike_times or spike_times_file, not both");
    if (inlineNode) {
        const std::string here = where + ": spike_times";
        return pack(name, size, readInlineTimes(r, *inlineNode, here, size),
                    [&](const std::string& what) { r.fail(*inlineNode, here + ": " + what); });
    }
    if (!fileNode) return std::nullopt;
    const std::string here = where + ": spike_times_file";
    const std::string path = resolvePath(r.file(), r.string(*fileNode, here));
    std::string text;
    try {
        text = readInputFile(path);
    } catch (const InputFileError& e) {
        r.fail(*fileNode, here + ": cannot " + (e.atOpen() ? "open" : "read") + " '" + path +
                              "': " + e.what());
    }
    files.push_back(path);
    return pack(name, size, parseTimesCsv(text, path, where, size),
                [&](const std::string& what) { r.fail(*fileNode, here + ": " + what); });
}

void checkEgpsGiven(const Reader& r, const toml::node& at, const std::string& where,
                    const SnippetBase& snippet, const std::string& desc,
                    const std::set<std::string>& given) {
    for (const EGPDecl& egp : snippet.egps)
        if (!given.count(egp.name))
            r.fail(at, where + ": " + desc + " needs the extra global parameter '" + egp.name +
                           "', which a config cannot give (build this model with the C++ API)");
}

void SpikeSourceInput::fillRanges(std::span<uint32_t> start, std::span<uint32_t> end) const {
    if (start.size() != size || end.size() != size)
        throw InternalError("population '" + population + "': spike-time ranges for " +
                            std::to_string(start.size()) + " neurons, expected " +
                            std::to_string(size));
    std::size_t next = 0;
    for (uint32_t neuron = 0; neuron < size; ++neuron) {
        start[neuron] = static_cast<uint32_t>(next);
        while (next < neurons.size() && neurons[next] == neuron)
            ++next;
        end[neuron] = static_cast<uint32_t>(next);
    }
}

void applyInputs(Simulation& sim, const Config& cfg) {
    const unsigned batch = cfg.model->batchSize();
    for (const SpikeSourceInput& in : cfg.spikeSources) {
        sim.pull(in.population, "startSpike"); // host copies exist once pulled
        sim.pull(in.population, "endSpike");
        const auto start = sim.view<uint32_t>(in.population, "startSpike");
        const auto end = sim.view<uint32_t>(in.population, "endSpike");
        if (start.size() != std::size_t{in.size} * batch || end.size() != start.size())
            throw InternalError("population '" + in.population +
                                "': startSpike/endSpike do not have one entry per neuron and "
                                "batch element");
        for (unsigned b = 0; b < batch; ++b) // every batch element replays the same times
            in.fillRanges(start.subspan(std::size_t{b} * in.size, in.size),
                          end.subspan(std::size_t{b} * in.size, in.size));
        sim.push(in.population, "startSpike");
        sim.push(in.population, "endSpike");
        // An empty array is never read (startSpike == endSpike), but the EGP is still set.
        const std::vector<double> placeholder{0.0};
        sim.setEGP(in.population, "spikeTimes",
                   in.spikeTimes.empty() ? placeholder : in.spikeTimes);
    }
}

} // namespace spikeforge::cli
