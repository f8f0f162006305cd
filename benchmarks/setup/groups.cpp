// Model set-up time against the number of groups (docs/internals.md, "Set-up cost"):
//   bench_setup_groups [--groups 1000,3000,10000] [--size 10] [--backend cpu] [--repeats 3]
// A model of N identical small LIF populations, each driven by its own DC source. For each N
// it builds the model, then constructs the Simulation twice: the first fills the compile cache,
// the second is timed (finalise, lower, merge, generate, hash, cache hit, allocate, upload).
// Prints one line per N (medians of the repeats) and the growth ratio between successive sizes
// over the ratio of sizes (1.0 = linear), then one JSON line.
#include "spikeforge/model.hpp"
#include "spikeforge/models.hpp"
#include "spikeforge/simulation.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

using namespace spikeforge;

namespace {

double secondsSince(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void buildModel(Model& m, uint32_t groups, uint32_t size) {
    m.setDT(0.1);
    for (uint32_t g = 0; g < groups; g++) {
        const std::string name = "Pop" + std::to_string(g);
        m.addNeuronGroup(name, size, models::LIF(),
                         {{"C", 1.0},
                          {"TauM", 20.0},
                          {"Vrest", -65.0},
                          {"Vreset", -65.0},
                          {"Vthresh", -50.0},
                          {"Ioffset", 0.0},
                          {"TauRefrac", 2.0}},
                         {{"V", -65.0}, {"RefracTime", 0.0}});
        m.addCurrentSource("Drive" + std::to_string(g), models::DC(), name,
                           {{"amp", 0.5 + 0.001 * g}}, {});
    }
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

struct Row {
    uint32_t groups;
    double modelSeconds;   // [s] adding the groups to the Model
    double setupSeconds;   // [s] Simulation construction with the compile cache warm
    double compileSeconds; // [s] the first construction's compile (reported, not counted)
};

Row measure(uint32_t groups, uint32_t size, const BackendPreferences& prefs, int repeats) {
    Row row{groups, 0.0, 0.0, 0.0};
    std::vector<double> model, setup;
    for (int r = 0; r <= repeats; r++) {
        auto t0 = std::chrono::steady_clock::now();
        Model m("groups");
        buildModel(m, groups, size);
        const double built = secondsSince(t0);
        t0 = std::chrono::steady_clock::now();
        Simulation sim(m, prefs);
        const double constructed = secondsSince(t0);
        if (r == 0) { // fills the cache
            row.compileSeconds = sim.buildInfo().compileSeconds;
            continue;
        }
        if (!sim.buildInfo().cacheHit) throw std::runtime_error("the compile cache missed");
        sim.run(10); // it must run
        model.push_back(built);
        setup.push_back(constructed);
    }
    row.modelSeconds = median(model);
    row.setupSeconds = median(setup);
    return row;
}

std::vector<uint32_t> parseList(const std::string& text) {
    std::vector<uint32_t> out;
    std::stringstream in(text);
    for (std::string item; std::getline(in, item, ',');)
        out.push_back(uint32_t(std::stoul(item)));
    return out;
}

} // namespace

int main(int argc, char** argv) {
    std::string groupsText = "1000,3000,10000", backend = "cpu";
    uint32_t size = 10;
    int repeats = 3;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string k = argv[i], v = argv[i + 1];
        if (k == "--groups")
            groupsText = v;
        else if (k == "--size")
            size = uint32_t(std::stoul(v));
        else if (k == "--backend")
            backend = v;
        else if (k == "--repeats")
            repeats = std::max(1, std::stoi(v));
        else {
            std::cerr << "unknown option " << k << "\n";
            return 2;
        }
    }
    try {
        BackendPreferences prefs;
        prefs.backend = backend;
        std::vector<Row> rows;
        for (uint32_t n : parseList(groupsText)) {
            rows.push_back(measure(n, size, prefs, repeats));
            const Row& r = rows.back();
            std::printf("groups %6u: model %.3f s, set-up %.3f s (compile, not counted: %.1f s)",
                        r.groups, r.modelSeconds, r.setupSeconds, r.compileSeconds);
            if (rows.size() > 1) {
                const Row& p = rows[rows.size() - 2];
                std::printf(", growth %.2f of linear",
                            (r.setupSeconds / p.setupSeconds) / (double(r.groups) / p.groups));
            }
            std::printf("\n");
            std::fflush(stdout);
        }
        std::printf("{\"backend\": \"%s\", \"size\": %u, \"rows\": [", backend.c_str(), size);
        for (size_t i = 0; i < rows.size(); i++)
            std::printf("%s{\"groups\": %u, \"model_s\": %.4f, \"setup_s\": %.4f}", i ? ", " : "",
                        rows[i].groups, rows[i].modelSeconds, rows[i].setupSeconds);
        std::printf("]}\n");
    } catch (const std::exception& e) {
        std::cerr << "error: " << e.what() << "\n";
        return 1;
    }
    return 0;
}
