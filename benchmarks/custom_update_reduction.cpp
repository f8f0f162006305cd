// Custom-update benchmarks: batch reductions against a memory copy, and one optimiser step.
//
//   BM_BatchReduction/E/B  a neuron-shaped custom update summing a float variable of E elements
//                          over a batch of B (`sum = x;` with sum ReduceBatchSum). Bytes per call
//                          are the roofline's E·4·(B+1): every batch copy read once, the sum
//                          written once (../shared/REFERENCE.md, "Rooflines").
//   BM_MemCopy/N           std::memcpy of N = E·2·(B+1) bytes, one per (E, B) above.
//   BM_OptimiserStep       batch-summing the gradients of a 1000×1000 Dense weight at batch 32
//                          and zeroing them, then one (bias-corrected) Adam step on the shared
//                          weight, with the built-in models::Adam.
//
// After the runs a table gives, for each (E, B) measured with its copy, the reduction's bandwidth
// over the copy's and, for E ≥ 1M, PASS/FAIL for the target "≥ 50 % of copy bandwidth".
// Exit status: 0 every evaluated target met, 1 a target missed, 2 a benchmark failed or an
// argument was not understood.
//
// --quick runs only the configurations the target applies to (E ≥ 1M) and the optimiser step;
// every --benchmark_* flag of Google Benchmark works as usual.
//
// Environment: SPIKEFORGE_BENCH_THREADS (default 0 = all cores) sets the threads of the
// spikeforge CPU backend, and the copy uses as many; SPIKEFORGE_CACHE the kernel cache.
#include "spikeforge/model.hpp"
#include "spikeforge/models.hpp"
#include "spikeforge/simulation.hpp"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <barrier>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace spikeforge;
using A = CustomUpdateVarAccess;

namespace {

// ---- configuration --------------------------------------------------------------------------

int g_threadsPref = 0;     // BackendPreferences::threads (0 = all cores)
unsigned g_threads = 1;    // what that resolves to, as Simulation resolves it
bool g_anyFailure = false; // some benchmark skipped with an error
bool g_quick = false;      // --quick: only the configurations the target applies to

constexpr uint64_t kSizes[] = {4096, 65536, 1u << 20, 1u << 24};
constexpr unsigned kBatches[] = {1, 8, 32, 128, 512};
constexpr uint64_t kMaxDataBytes = uint64_t(1) << 30; // skip E·B·4 above 1 GiB
constexpr uint64_t kTargetMinElements = 1u << 20;     // the target applies from E = 1M
constexpr double kTargetRatio = 0.5;

uint64_t reductionBytes(uint64_t e, unsigned b) {
    return e * sizeof(float) * (uint64_t(b) + 1);
}

// What the copy is compared with, and why. The reduction reads E·B·4 bytes and writes E·4; its
// roofline is the sum, E·4·(B+1). A copy of N bytes reads N and writes N, so BM_MemCopy copies
// N = E·4·(B+1)/2 bytes and counts 2N bytes processed: both move the same total bytes, their
// bandwidth ratio is the ratio of their times, and both touch the same amount of memory, so they
// fall out of the caches at the same sizes. Copying E·B·4 bytes instead would move almost twice
// the bytes for large B and leave the caches earlier. At B = 1 the two do exactly the same
// traffic (read E·4, write E·4); for larger B the reduction is mostly reads, which memory serves
// at least as fast as a read+write mix, so ≥ 50 % is a conservative target. Neither counts the
// read-for-ownership of written lines (x86-64 glibc's memcpy skips it above a size threshold with
// non-temporal stores, the generated code does not), so at B = 1 the copy has an edge.
// The copy is split over the same number of threads as the reduction (a persistent pool, so no
// thread start-up is timed): one thread's memcpy cannot use the bandwidth of a many-core machine
// and would flatter the reduction. It stays on one thread where the generated kernel does, below
// E·B = 32768 (its `if (threads > 1 && sfN * B >= 32768)`).
uint64_t copyBytes(uint64_t e, unsigned b) {
    return reductionBytes(e, b) / 2;
}
bool copyInParallel(uint64_t e, unsigned b) {
    return e * b >= 32768;
}

// ---- a parallel memcpy ------------------------------------------------------------------------

class CopyPool {
public:
    explicit CopyPool(unsigned threads)
        : m_threads(std::max(1u, threads)), m_start(m_threads), m_done(m_threads) {
        for (unsigned t = 1; t < m_threads; t++)
            m_workers.emplace_back([this, t] { work(t); });
    }
    ~CopyPool() {
        m_stop = true;
        if (!m_workers.empty()) m_start.arrive_and_wait();
        for (auto& w : m_workers)
            w.join();
    }
    CopyPool(const CopyPool&) = delete;
    CopyPool& operator=(const CopyPool&) = delete;

    void copy(void* dst, const void* src, size_t bytes, bool parallel) {
        if (m_threads == 1 || !parallel) {
            std::memcpy(dst, src, bytes);
            return;
        }
        m_dst = static_cast<char*>(dst);
        m_src = static_cast<const char*>(src);
        m_bytes = bytes;
        m_start.arrive_and_wait(); // publishes the job to the workers
        chunk(0);
        m_done.arrive_and_wait(); // every chunk copied
    }

private:
    void work(unsigned t) {
        for (;;) {
            m_start.arrive_and_wait();
            if (m_stop) return;
            chunk(t);
            m_done.arrive_and_wait();
        }
    }
    void chunk(unsigned t) {
        const size_t per = (m_bytes / m_threads + 63) / 64 * 64; // cache-line aligned pieces
        const size_t begin = std::min(m_bytes, t * per);
        const size_t end = std::min(m_bytes, begin + per);
        if (end > begin) std::memcpy(m_dst + begin, m_src + begin, end - begin);
    }

    unsigned m_threads;
    std::barrier<> m_start, m_done;
    std::vector<std::thread> m_workers;
    char* m_dst = nullptr;
    const char* m_src = nullptr;
    size_t m_bytes = 0;
    bool m_stop = false; // read by the workers after m_start, which orders it
};

std::unique_ptr<CopyPool> g_copyPool;

struct FreeDeleter {
    void operator()(void* p) const { std::free(p); }
};
using Buffer = std::unique_ptr<char, FreeDeleter>;

Buffer touchedBuffer(size_t bytes, int fill) {
    Buffer b(static_cast<char*>(std::aligned_alloc(64, (bytes + 63) / 64 * 64)));
    if (!b) throw std::runtime_error("out of memory allocating " + std::to_string(bytes) + " B");
    std::memset(b.get(), fill, bytes); // fault the pages in before timing
    return b;
}

// ---- models -----------------------------------------------------------------------------------

NeuronModel holder() {
    NeuronModel n;
    n.name = "Holder";
    n.vars = {{"x", "scalar", VarAccess::ReadWrite}};
    return n;
}

BackendPreferences prefs() {
    BackendPreferences p;
    p.threads = g_threadsPref;
    return p;
}

// One model alive at a time: Google Benchmark calls a benchmark function several times (to size
// the iteration count), and the model is built on the first call of a configuration only.
struct Built {
    std::unique_ptr<Model> model;
    std::unique_ptr<Simulation> sim; // refers to *model: released first
    void release() {
        sim.reset();
        model.reset();
    }
};
Built g_reduction, g_optimiser;

Simulation& reductionSimulation(uint64_t e, unsigned b) {
    static uint64_t builtE = 0;
    static unsigned builtB = 0;
    Built& built = g_reduction;
    if (built.sim && builtE == e && builtB == b) return *built.sim;
    built.release(); // free the previous configuration first
    auto model = std::make_unique<Model>("bench_batch_reduction");
    model->setBatchSize(b);
    model->addNeuronGroup("Pop", unsigned(e), holder(), {}, {{"x", 1.0}});
    CustomUpdateModel sum;
    sum.name = "BatchSum";
    sum.vars = {{"sum", "scalar", A::ReduceBatchSum}};
    sum.varRefs = {{"x", "scalar", A::ReadOnly}};
    sum.updateCode = "sum = x;";
    model->addCustomUpdate("Reduce", "Reduce", sum, {}, {{"sum", 0.0}}, {{"x", {"Pop", "x"}}});
    auto sim = std::make_unique<Simulation>(*model, prefs());
    // Warm-up call, which also checks the result: every x is 1, so every sum is B.
    sim->customUpdate("Reduce");
    sim->pull("Reduce", "sum");
    const auto s = sim->view<float>("Reduce", "sum");
    if (s.size() != e || s.front() != float(b) || s.back() != float(b))
        throw std::runtime_error("wrong reduction result: sum[0] = " + std::to_string(s.front()) +
                                 ", expected " + std::to_string(b));
    built.model = std::move(model);
    built.sim = std::move(sim);
    builtE = e;
    builtB = b;
    return *built.sim;
}

// ---- benchmarks -------------------------------------------------------------------------------

void batchReduction(benchmark::State& state, uint64_t e, unsigned b) {
    Simulation* sim = nullptr;
    try {
        sim = &reductionSimulation(e, b);
    } catch (const std::exception& ex) {
        g_anyFailure = true;
        state.SkipWithError(ex.what());
        return;
    }
    for (auto _ : state)
        sim->customUpdate("Reduce");
    state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(reductionBytes(e, b)));
}

void memCopy(benchmark::State& state, uint64_t bytes, bool parallel) {
    static uint64_t builtBytes = 0;
    static Buffer src, dst;
    if (builtBytes != bytes) {
        src.reset();
        dst.reset();
        try {
            src = touchedBuffer(bytes, 1);
            dst = touchedBuffer(bytes, 0);
        } catch (const std::exception& ex) {
            builtBytes = 0;
            g_anyFailure = true;
            state.SkipWithError(ex.what());
            return;
        }
        builtBytes = bytes;
    }
    for (auto _ : state) {
        g_copyPool->copy(dst.get(), src.get(), bytes, parallel);
        benchmark::ClobberMemory();
    }
    state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(2 * bytes));
}

constexpr unsigned kOptPre = 1000, kOptPost = 1000, kOptBatch = 32;
constexpr float kGrad = 1e-3f;
constexpr double kBeta1 = 0.9, kBeta2 = 0.999, kEpsilon = 1e-8, kAlpha = 1e-3;

// Bytes an optimiser step moves at least, per synapse: the reduction reads and zeroes every batch
// copy of grad (2·B·4) and writes reduced (4); Adam reads reduced, m, v and g and writes m, v and
// g (7·4).
constexpr uint64_t kOptBytes = uint64_t(kOptPre) * kOptPost * sizeof(float) * (2 * kOptBatch + 8);

Simulation& optimiserSimulation() {
    Built& built = g_optimiser;
    if (built.sim) return *built.sim;
    auto model = std::make_unique<Model>("bench_optimiser_step");
    model->setBatchSize(kOptBatch);
    model->addNeuronGroup("Pre", kOptPre, holder(), {}, {{"x", 0.0}});
    model->addNeuronGroup("Post", kOptPost, holder(), {}, {{"x", 0.0}});
    WeightUpdateModel wu;
    wu.name = "Trainable";
    wu.vars = {{"g", "scalar", VarAccess::ReadOnly},      // the weight, shared by the batch
               {"grad", "scalar", VarAccess::ReadWrite}}; // its gradient, one per batch element
    model->addSynapseGroup("Syn", MatrixType::Dense, 0, "Pre", "Post",
                           {wu, {}, {{"g", 0.0}, {"grad", double(kGrad)}}, {}, {}},
                           {models::DeltaCurr(), {}, {}});

    CustomUpdateModel reduce;
    reduce.name = "ReduceAndZero";
    reduce.vars = {{"reduced", "scalar", A::ReduceBatchSum}};
    reduce.varRefs = {{"grad", "scalar", A::ReadWrite}};
    reduce.updateCode = "reduced = grad;\ngrad = 0.0;";
    model->addCustomUpdateWU("ReduceGrad", "Reduce", reduce, {}, {{"reduced", 0.0}},
                             {{"grad", {"Syn", "grad"}}});

    // The built-in Adam: bias corrections from its device-side run counter. Every reference is
    // shared by the batch, so this update is not batched.
    model->addCustomUpdateWU(
        "AdamStep", "Adam", models::Adam(),
        {{"beta1", kBeta1}, {"beta2", kBeta2}, {"epsilon", kEpsilon}, {"alpha", kAlpha}},
        {{"m", 0.0}, {"v", 0.0}},
        {{"gradient", {"ReduceGrad", "reduced"}}, {"variable", {"Syn", "g"}}});

    auto sim = std::make_unique<Simulation>(*model, prefs());
    // Warm-up step, which also checks the result: from m = v = g = 0 with every gradient kGrad,
    // reduced = B·kGrad and the bias-corrected first step is g = −α·reduced / (|reduced| + ε)
    // ≈ −α.
    sim->customUpdate("Reduce");
    sim->customUpdate("Adam");
    sim->pull("Syn", "g");
    sim->pull("Syn", "grad");
    const double reduced = kOptBatch * double(kGrad);
    const double expected = -kAlpha * reduced / (std::abs(reduced) + kEpsilon);
    const float g = sim->view<float>("Syn", "g").front();
    const float grad = sim->view<float>("Syn", "grad").back();
    if (std::abs(g - expected) > 1e-4 * std::abs(expected) || grad != 0.0f)
        throw std::runtime_error("wrong optimiser step: g = " + std::to_string(g) + " (expected " +
                                 std::to_string(expected) + "), grad = " + std::to_string(grad) +
                                 " (expected 0)");
    // The host copy of grad keeps kGrad from here on, to be pushed again (see below).
    const auto gradView = sim->view<float>("Syn", "grad");
    std::fill(gradView.begin(), gradView.end(), kGrad);
    sim->push("Syn", "grad");
    built.model = std::move(model);
    built.sim = std::move(sim);
    return *built.sim;
}

void optimiserStep(benchmark::State& state) {
    Simulation* sim = nullptr;
    try {
        sim = &optimiserSimulation();
    } catch (const std::exception& ex) {
        g_anyFailure = true;
        state.SkipWithError(ex.what());
        return;
    }
    // The reduction zeroes the gradients, after which m decays by β1 every step and would reach
    // float denormals (slow arithmetic) after ~800 steps; pushing the gradients again every 256
    // steps, untimed, keeps every step's arithmetic the same.
    uint64_t step = 0;
    for (auto _ : state) {
        sim->customUpdate("Reduce");
        sim->customUpdate("Adam");
        if (++step % 256 == 0) {
            state.PauseTiming();
            sim->push("Syn", "grad");
            state.ResumeTiming();
        }
    }
    state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(kOptBytes));
}

// ---- reporting --------------------------------------------------------------------------------

// Prints as the console reporter does and keeps each run's bandwidth by benchmark name.
class CollectingReporter : public benchmark::ConsoleReporter {
public:
    using benchmark::ConsoleReporter::ConsoleReporter;
    std::map<std::string, uint64_t> bytesPerIteration; // filled at registration
    std::map<std::string, std::vector<double>> bandwidth;

    void ReportRuns(const std::vector<Run>& runs) override {
        for (const auto& r : runs) {
            if (r.run_type != Run::RT_Iteration || r.error_occurred) continue;
            // run_name.function_name is the registered name, without the "/real_time" suffix.
            const std::string& name = r.run_name.function_name;
            const auto it = bytesPerIteration.find(name);
            if (it == bytesPerIteration.end() || r.real_accumulated_time <= 0) continue;
            bandwidth[name].push_back(double(it->second) * double(r.iterations) /
                                      r.real_accumulated_time);
        }
        ConsoleReporter::ReportRuns(runs);
    }

    // Median over repetitions (one value without --benchmark_repetitions); 0 when not run.
    double median(const std::string& name) const {
        const auto it = bandwidth.find(name);
        if (it == bandwidth.end() || it->second.empty()) return 0.0;
        auto v = it->second;
        std::sort(v.begin(), v.end());
        const size_t n = v.size();
        return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
    }
};

std::string cpuModel() {
    std::ifstream in("/proc/cpuinfo");
    std::string line;
    while (std::getline(in, line))
        if (line.rfind("model name", 0) == 0) {
            const auto colon = line.find(':');
            if (colon != std::string::npos)
                return line.substr(line.find_first_not_of(" ", colon + 1));
        }
    return "unknown CPU";
}

std::string loadAverage() {
    std::ifstream in("/proc/loadavg");
    std::string one, five, fifteen;
    if (!(in >> one >> five >> fifteen)) return "unknown";
    return one + " " + five + " " + fifteen;
}

std::string reductionName(uint64_t e, unsigned b) {
    return "BM_BatchReduction/" + std::to_string(e) + "/" + std::to_string(b);
}
std::string copyName(uint64_t bytes) {
    return "BM_MemCopy/" + std::to_string(bytes);
}

std::vector<std::pair<uint64_t, unsigned>> configurations() {
    std::vector<std::pair<uint64_t, unsigned>> out;
    for (uint64_t e : kSizes)
        for (unsigned b : kBatches)
            if (e * b * sizeof(float) <= kMaxDataBytes && (!g_quick || e >= kTargetMinElements))
                out.emplace_back(e, b);
    return out;
}

// Each reduction is followed by its copy, so the two run close together in time (on a shared
// machine the load drifts between the start and the end of a run).
void registerBenchmarks(CollectingReporter& reporter) {
    for (const auto& [e, b] : configurations()) {
        const auto unit =
            e >= kTargetMinElements ? benchmark::kMillisecond : benchmark::kMicrosecond;
        benchmark::RegisterBenchmark(
            reductionName(e, b).c_str(),
            [e = e, b = b](benchmark::State& s) { batchReduction(s, e, b); })
            ->Unit(unit)
            ->UseRealTime();
        reporter.bytesPerIteration[reductionName(e, b)] = reductionBytes(e, b);
        const uint64_t n = copyBytes(e, b);
        const bool parallel = copyInParallel(e, b);
        benchmark::RegisterBenchmark(
            copyName(n).c_str(), [n, parallel](benchmark::State& s) { memCopy(s, n, parallel); })
            ->Unit(unit)
            ->UseRealTime();
        reporter.bytesPerIteration[copyName(n)] = 2 * n;
    }
    benchmark::RegisterBenchmark("BM_OptimiserStep", optimiserStep)
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
    reporter.bytesPerIteration["BM_OptimiserStep"] = kOptBytes;
}

std::string sizeName(uint64_t e) {
    if (e % (1u << 20) == 0) return std::to_string(e >> 20) + "M";
    if (e % (1u << 10) == 0) return std::to_string(e >> 10) + "K";
    return std::to_string(e);
}

// Returns the exit status: 0 every evaluated target met (or none evaluated), 1 one missed.
int printSummary(const CollectingReporter& reporter) {
    if (reporter.bandwidth.empty()) return 0; // --benchmark_list_tests, or nothing matched
    std::printf("\nMachine: %s, %u logical cores, load average %s; spikeforge CPU backend and "
                "copy on %u thread(s)\n",
                cpuModel().c_str(), std::thread::hardware_concurrency(), loadAverage().c_str(),
                g_threads);
    std::printf("Batch reduction vs copy of the same bytes (roofline E*4*(B+1) bytes per call); "
                "target: reduction >= %.0f%% of copy bandwidth for E >= %s. GB/s here are 1e9 B/s "
                "(the bytes_per_second column above uses 2^30).\n",
                kTargetRatio * 100, sizeName(kTargetMinElements).c_str());
    std::printf("%6s %5s %14s %14s %7s  %s\n", "E", "B", "reduce GB/s", "copy GB/s", "ratio",
                "target");
    int rows = 0, evaluated = 0, missed = 0;
    for (const auto& [e, b] : configurations()) {
        const double red = reporter.median(reductionName(e, b));
        const double cpy = reporter.median(copyName(copyBytes(e, b)));
        if (red <= 0 || cpy <= 0) continue;
        rows++;
        const double ratio = red / cpy;
        const char* verdict = "-";
        if (e >= kTargetMinElements) {
            evaluated++;
            const bool pass = ratio >= kTargetRatio;
            missed += !pass;
            verdict = pass ? "PASS" : "FAIL";
        }
        std::printf("%6s %5u %14.2f %14.2f %7.2f  %s\n", sizeName(e).c_str(), b, red * 1e-9,
                    cpy * 1e-9, ratio, verdict);
    }
    if (rows == 0) std::printf("(no reduction was measured together with its copy)\n");
    if (const double opt = reporter.median("BM_OptimiserStep"); opt > 0)
        std::printf("Optimiser step (%ux%u Dense, batch %u, reduce + Adam): %.2f ms, %.2f GB/s "
                    "of %.0f MB moved at least\n",
                    kOptPre, kOptPost, kOptBatch, double(kOptBytes) / opt * 1e3, opt * 1e-9,
                    double(kOptBytes) * 1e-6);
    if (evaluated > 0)
        std::printf("Target: %s (%d of %d configurations with E >= %s met it)\n",
                    missed ? "FAIL" : "PASS", evaluated - missed, evaluated,
                    sizeName(kTargetMinElements).c_str());
    return missed ? 1 : 0;
}

} // namespace

int main(int argc, char** argv) {
    if (const char* t = std::getenv("SPIKEFORGE_BENCH_THREADS"); t && *t) {
        char* end = nullptr;
        const long v = std::strtol(t, &end, 10);
        if (*end != '\0' || v < 0 || v > 4096) {
            std::fprintf(stderr,
                         "SPIKEFORGE_BENCH_THREADS must be 0 (all cores) or a positive "
                         "thread count, not '%s'\n",
                         t);
            return 2;
        }
        g_threadsPref = int(v);
    }
    // --quick is ours; Google Benchmark must not see it.
    int kept = 1;
    for (int i = 1; i < argc; i++) {
        if (std::strcmp(argv[i], "--quick") == 0)
            g_quick = true;
        else
            argv[kept++] = argv[i];
    }
    argc = kept;
    g_threads = g_threadsPref > 0 ? unsigned(g_threadsPref)
                                  : std::max(1u, std::thread::hardware_concurrency());
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
    g_copyPool = std::make_unique<CopyPool>(g_threads);

    CollectingReporter reporter(isatty(STDOUT_FILENO) ? benchmark::ConsoleReporter::OO_Defaults
                                                      : benchmark::ConsoleReporter::OO_Tabular);
    registerBenchmarks(reporter);
    benchmark::RunSpecifiedBenchmarks(&reporter);
    const int status = printSummary(reporter);
    benchmark::Shutdown();
    g_reduction.release();
    g_optimiser.release();
    g_copyPool.reset();
    return g_anyFailure ? 2 : status;
}
