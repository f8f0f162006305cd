#include "commands.hpp"

#include "backend_options.hpp"
#include "config.hpp"
#include "info_devices.hpp"
#include "json.hpp"
#include "spike_output.hpp"
#include "train_command.hpp"

#include "spikeforge/simulation.hpp"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <functional>
#include <iomanip>
#include <iostream>
#include <limits>
#include <span>

namespace spikeforge::cli {

// "error: <message>" with control characters other than newlines shown as \xNN, so that text
// from a config or data file cannot drive the terminal (escape sequences) or fake output lines.
void printError(std::ostream& err, std::string_view message) {
    std::string text = "error: ";
    for (const char c : message) {
        const auto byte = static_cast<unsigned char>(c);
        if ((byte < 0x20 && c != '\n') || byte == 0x7f) {
            char escaped[8];
            std::snprintf(escaped, sizeof escaped, "\\x%02x", byte);
            text += escaped;
        } else {
            text += c;
        }
    }
    err << text << '\n';
}

namespace {

std::string formatTime(double ms) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.10g", ms);
    return buffer;
}

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
}

struct PopulationResult {
    std::string name;
    unsigned size = 0;
    bool recorded = false;
    uint64_t spikes = 0;
    double rateHz = 0.0; // mean over neurons and batch elements
};

struct RunResult {
    std::string model;
    std::string backend;
    uint64_t steps = 0;
    double dt = 0.0;         // [ms]
    double durationMs = 0.0; // steps * dt
    unsigned batch = 1;
    bool fastMath = false;
    uint64_t neurons = 0;
    uint64_t synapses = 0;
    BuildInfo build;
    double simWallSeconds = 0.0;
    double simCpuSeconds = 0.0; // all threads; on a busy machine closer to the work than wall
    std::vector<PopulationResult> populations;
    // Per projection: its matrix type, synapses and the device bytes of its arrays.
    struct ProjectionResult {
        std::string name, matrix;
        uint64_t synapses = 0;
        size_t bytes = 0; // [B]
    };
    std::vector<ProjectionResult> projections;
    std::vector<KernelTime> kernelTimes; // with --kernel-timing

    uint64_t totalSpikes() const {
        uint64_t total = 0;
        for (const PopulationResult& p : populations)
            total += p.spikes;
        return total;
    }
};

// More steps than this is surely a mistake (2^40 steps of 0.1 ms are 3.5 years).
constexpr double maxSteps = 0x1p40;

// Number of steps of the run: round(duration / dt), at least 1 and at most maxSteps.
uint64_t runSteps(const Config& cfg, const SimulateOptions& options) {
    const std::optional<double> duration = options.durationMs ? options.durationMs : cfg.durationMs;
    if (!duration)
        throw ConfigError(cfg.file, 0, 0,
                          "no run length: set duration_ms in [model] or pass --duration-ms");
    const double dt = cfg.model->dt();
    const std::string what = (options.durationMs ? "--duration-ms " : "[model] duration_ms = ") +
                             formatTime(*duration) + " ms with dt = " + formatTime(dt) + " ms";
    const double steps = std::round(*duration / dt);
    const auto fail = [&](const std::string& problem) {
        if (options.durationMs) throw UsageError(what + " " + problem);
        throw ConfigError(cfg.file, 0, 0, what + " " + problem);
    };
    if (!(steps >= 1.0))
        fail("gives 0 time steps (the run length is rounded to a whole number of steps)");
    if (!(steps <= maxSteps)) fail("gives more than 2^40 time steps (" + formatTime(steps) + ")");
    return static_cast<uint64_t>(steps);
}

// Given spike times the run ends before are legal but probably not meant: say so.
void warnUnreachedSpikes(const Config& cfg, uint64_t steps, std::ostream& err) {
    const double lastStep = double(steps - 1) * cfg.model->dt(); // [ms] time of the last step
    for (const SpikeSourceInput& in : cfg.spikeSources) {
        const auto late = std::count_if(in.spikeTimes.begin(), in.spikeTimes.end(),
                                        [&](double t) { return t > lastStep; });
        if (late > 0)
            err << "warning: population '" << in.population << "': " << late << " of "
                << in.spikeTimes.size() << " spike times are after the last step of the run ("
                << formatTime(lastStep) << " ms) and are never emitted\n";
    }
}

// Actual synapse count (every pair for dense projections, the built rows for sparse ones), from
// each connectivity's host codec.
uint64_t countSynapses(Simulation& sim, const Model& model) {
    uint64_t total = 0;
    for (const auto& sg : model.synapseGroups())
        total += sim.synapseCount(sg->name());
    return total;
}

void collectSpikes(Simulation& sim, const SpikeOutput& output, RunResult& result) {
    const double seconds = result.durationMs / 1000.0;
    for (const auto& group : sim.model().neuronGroups()) {
        PopulationResult p;
        p.name = group->name();
        p.size = group->size();
        p.recorded = group->spikeRecording();
        if (p.recorded) {
            p.spikes = output.count(p.name);
            p.rateHz = static_cast<double>(p.spikes) / (double(p.size) * result.batch * seconds);
        }
        result.populations.push_back(std::move(p));
    }
}

// CPU time of this process, all threads [s].
double processCpuSeconds() {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}

RunResult simulate(Config& cfg, const SimulateOptions& options, uint64_t steps,
                   SpikeOutput& output) {
    const BackendPreferences prefs = preferencesOf(options.run);
    Simulation sim(*cfg.model, prefs);
    applyInputs(sim, cfg);

    bool anyRecorded = false;
    for (const auto& group : cfg.model->neuronGroups())
        anyRecorded = anyRecorded || group->spikeRecording();
    for (const auto& group : cfg.model->synapseGroups()) // spike-like events
        anyRecorded = anyRecorded || group->preEventRecording() || group->postEventRecording();
    // Recorded spikes go to `output` (the CSV, and the counts) chunk by chunk as the run goes,
    // so memory does not grow with the duration.
    if (anyRecorded) {
        sim.setSpikeSink([&output](const std::string& group, std::span<const SpikeEvent> spikes) {
            output(group, spikes);
        });
        sim.setRecordingWindow(steps);
    }
    const Clock::time_point start = Clock::now();
    const double cpuStart = processCpuSeconds();
    sim.run(steps);
    RunResult result;
    result.simWallSeconds = secondsSince(start);
    result.simCpuSeconds = processCpuSeconds() - cpuStart;
    if (anyRecorded) sim.pullRecording(); // delivers the last, partly filled chunk

    result.model = cfg.model->name();
    result.backend = sim.backendName();
    result.steps = steps;
    result.dt = cfg.model->dt();
    result.durationMs = double(steps) * cfg.model->dt();
    result.batch = cfg.model->batchSize();
    result.fastMath = options.run.fastMath;
    result.build = sim.buildInfo();
    for (const auto& group : cfg.model->neuronGroups())
        result.neurons += group->size();
    result.synapses = countSynapses(sim, *cfg.model);
    for (const auto& sg : cfg.model->synapseGroups())
        result.projections.push_back({sg->name(), matrixTypeName(sg->matrixType()),
                                      sim.synapseCount(sg->name()), sim.deviceBytes(sg->name())});
    collectSpikes(sim, output, result);
    if (options.run.kernelTiming) result.kernelTimes = sim.kernelTimes();
    return result;
}

void printReport(std::ostream& out, const RunResult& r) {
    out << "model " << r.model << " on backend " << r.backend << (r.fastMath ? " (fast math)" : "")
        << ": batch " << r.batch << ", " << r.steps << " steps of " << formatTime(r.dt) << " ms ("
        << formatTime(r.durationMs) << " ms)\n\n";
    out << std::left << std::setw(20) << "population" << std::right << std::setw(12) << "size"
        << std::setw(14) << "spikes" << std::setw(14) << "rate [Hz]" << '\n';
    for (const PopulationResult& p : r.populations) {
        out << std::left << std::setw(20) << p.name << std::right << std::setw(12) << p.size;
        if (p.recorded)
            out << std::setw(14) << p.spikes << std::setw(14) << std::fixed << std::setprecision(3)
                << p.rateHz << std::defaultfloat << '\n';
        else
            out << std::setw(28) << "(not recorded)" << '\n';
    }
    out << std::left << std::setw(20) << "total" << std::right << std::setw(12) << r.neurons
        << std::setw(14) << r.totalSpikes() << "\n\n";
    out << std::left << std::setw(20) << "projection" << std::setw(14) << "matrix" << std::right
        << std::setw(14) << "synapses" << std::setw(12) << "MiB" << std::setw(12) << "B/synapse"
        << '\n';
    for (const auto& p : r.projections)
        out << std::left << std::setw(20) << p.name << std::setw(14) << p.matrix << std::right
            << std::setw(14) << p.synapses << std::fixed << std::setprecision(2) << std::setw(12)
            << double(p.bytes) / (1 << 20) << std::setw(12)
            << double(p.bytes) / double(std::max<uint64_t>(p.synapses, 1)) << std::defaultfloat
            << '\n';
    out << '\n';
    out << "synapses   " << r.synapses << '\n' << std::fixed << std::setprecision(3);
    out << "build      " << r.build.generateSeconds + r.build.compileSeconds << " s (generate "
        << r.build.generateSeconds << " s, compile " << r.build.compileSeconds << " s"
        << (r.build.cacheHit ? ", cached" : "") << ")\n";
    out << "init       " << r.build.initSeconds << " s\n";
    out << "simulate   " << r.simWallSeconds << " s wall, " << r.simCpuSeconds << " s cpu\n"
        << std::defaultfloat;
    if (r.kernelTimes.empty()) return;
    out << '\n'
        << std::left << std::setw(32) << "kernel" << std::right << std::setw(12) << "seconds"
        << std::setw(12) << "launches" << '\n';
    for (const KernelTime& k : r.kernelTimes)
        out << std::left << std::setw(32) << k.name << std::right << std::fixed
            << std::setprecision(6) << std::setw(12) << k.seconds << std::defaultfloat
            << std::setw(12) << k.launches << '\n';
}

std::string resultJson(const RunResult& r) {
    JsonObject rates;
    JsonObject counts;
    for (const PopulationResult& p : r.populations) {
        if (!p.recorded) continue;
        rates.addNumber(p.name, p.rateHz);
        counts.addInteger(p.name, p.spikes);
    }
    JsonObject o;
    o.addString("model", r.model).addString("backend", r.backend);
    o.addInteger("neurons", r.neurons).addInteger("synapses", r.synapses);
    JsonObject projectionBytes;
    for (const auto& p : r.projections)
        projectionBytes.addInteger(p.name, p.bytes);
    o.addObject("projection_bytes", projectionBytes);
    o.addNumber("dt_ms", r.dt).addInteger("steps", r.steps).addNumber("duration_ms", r.durationMs);
    o.addInteger("batch", r.batch).addBool("fast_math", r.fastMath);
    o.addNumber("build_s", r.build.generateSeconds + r.build.compileSeconds);
    o.addNumber("generate_s", r.build.generateSeconds)
        .addNumber("compile_s", r.build.compileSeconds);
    o.addBool("cache_hit", r.build.cacheHit).addNumber("init_s", r.build.initSeconds);
    o.addNumber("sim_wall_s", r.simWallSeconds).addNumber("sim_cpu_s", r.simCpuSeconds);
    o.addInteger("spikes", r.totalSpikes());
    o.addObject("rates_hz", rates).addObject("spike_counts", counts);
    if (!r.kernelTimes.empty()) { // with --kernel-timing
        JsonObject seconds, launches;
        for (const KernelTime& k : r.kernelTimes) {
            seconds.addNumber(k.name, k.seconds);
            launches.addInteger(k.name, k.launches);
        }
        o.addObject("kernel_s", seconds).addObject("kernel_launches", launches);
    }
    return o.str();
}

int simulateCommand(const SimulateOptions& options, std::ostream& out, std::ostream& err) {
    checkBackendOptions(options.run);
    Config cfg = loadConfig(options.config, options.sets);
    if (options.batch) cfg.model->setBatchSize(*options.batch);
    finaliseModel(cfg);
    const uint64_t steps = runSteps(cfg, options);
    warnUnreachedSpikes(cfg, steps, err);
    std::optional<SpikeCsvFile> csv;
    if (!options.recordPath.empty()) {
        std::vector<std::string> inputs = cfg.inputFiles;
        inputs.push_back(options.config);
        csv.emplace(options.recordPath, options.force, inputs);
    }
    SpikeOutput output(csv ? &*csv : nullptr);
    RunResult result;
    try {
        result = simulate(cfg, options, steps, output);
    } catch (const ModelError& e) { // initialisation and run-time checks
        rethrowAtGroup(cfg, e);
    }
    if (csv) csv->close();
    printReport(out, result);
    if (csv) out << "spikes written to " << options.recordPath << '\n';
    if (options.json) out << resultJson(result) << '\n';
    out.flush();
    return exitOk;
}

// CLI11 reports its own errors with a usage dump; ours are one line with the usual prefix.
int parseError(const CLI::App& app, const CLI::ParseError& e) {
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) { // --help, --version
        app.exit(e);
        return exitOk;
    }
    printError(std::cerr, e.what());
    return exitUsage;
}

} // namespace

int runInfo(bool json, std::ostream& out, std::ostream& err) {
    try {
        const std::vector<BackendStatus> backends = availableBackends();
        if (json) {
            std::string list;
            for (const BackendStatus& b : backends) {
                JsonObject o;
                o.addString("name", b.name)
                    .addBool("usable", b.usable)
                    .addString("reason", b.reason);
                list += (list.empty() ? "" : ", ") + o.str();
            }
            out << JsonObject()
                       .addRaw("backends", "[" + list + "]")
                       .addRaw("opencl", openclDevicesJson())
                       .str()
                << '\n';
            return exitOk;
        }
        out << std::left << std::setw(10) << "backend" << std::setw(8) << "usable"
            << "note\n";
        for (const BackendStatus& b : backends) {
            out << std::setw(10) << b.name;
            if (b.reason.empty())
                out << (b.usable ? "yes" : "no") << '\n';
            else
                out << std::setw(8) << (b.usable ? "yes" : "no") << b.reason << '\n';
        }
        printOpenclDevices(out);
        return exitOk;
    } catch (const std::exception& e) {
        printError(err, e.what());
        return exitFailure;
    }
}

int runGuarded(std::ostream& err, const std::function<int()>& command) {
    try {
        return command();
    } catch (const ModelError& e) { // ConfigError and checkpoint errors included
        printError(err, e.what());
        return exitUsage;
    } catch (const UsageError& e) {
        printError(err, e.what());
        return exitUsage;
    } catch (const std::exception& e) { // BackendError, InternalError, I/O
        printError(err, e.what());
        return exitFailure;
    } catch (...) {
        printError(err, "unknown failure");
        return exitFailure;
    }
}

int runSimulate(const SimulateOptions& options, std::ostream& out, std::ostream& err) {
    return runGuarded(err, [&] { return simulateCommand(options, out, err); });
}

int runCli(int argc, char** argv) {
    CLI::App app{"spikeforge: generate, compile and run spiking neural networks"};
    app.require_subcommand(1);
    app.set_version_flag("--version", std::string("spikeforge ") + SPIKEFORGE_VERSION,
                         "Print the version and exit");

    bool infoJson = false;
    CLI::App* info = app.add_subcommand("info", "List the backends and whether each is usable");
    info->add_flag("--json", infoJson, "Print one JSON object instead of a table");

    SimulateOptions options;
    double durationMs = 0.0;
    unsigned batch = 1;
    CLI::App* sim = app.add_subcommand("simulate", "Build and run a network from a TOML config");
    sim->add_option("config", options.config, "TOML network config (docs/config.md)")->required();
    addBackendOptions(*sim, options.run, BackendFlags::Simulate);
    CLI::Option* durationOpt = sim->add_option("--duration-ms", durationMs,
                                               "Run length [ms] (default: [model] duration_ms)")
                                   ->check(positiveNumber);
    CLI::Option* batchOpt = sim->add_option("--batch", batch, "Batch size (default: [model] batch)")
                                ->check(CLI::Range(1u, maxBatchSize));
    sim->add_option(
        "--record", options.recordPath,
        "Write every recorded spike to this CSV file (time_ms,population,neuron,batch)");
    sim->add_flag("--force", options.force, "Let --record overwrite an existing file");
    sim->add_option("--set", options.sets, "Override a [parameters] entry: NAME=VALUE (repeatable)")
        ->allow_extra_args(false);
    sim->add_flag("--json", options.json, "End the output with one JSON line of results");

    const auto runTraining = addTrainCommands(app);

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        return parseError(app, e);
    }
    if (info->parsed()) return runInfo(infoJson, std::cout, std::cerr);
    if (const std::optional<int> code = runTraining()) return *code;
    if (durationOpt->count() > 0) options.durationMs = durationMs;
    if (batchOpt->count() > 0) options.batch = batch;
    return runSimulate(options, std::cout, std::cerr);
}

} // namespace spikeforge::cli
