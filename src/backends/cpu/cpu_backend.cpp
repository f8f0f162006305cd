// CPU backend: generated C++ compiled by the system compiler into a shared object (cached under
// a SHA-256 key, see cache.hpp; the compiler process is in compiler.hpp) and loaded with dlopen
// after checking that the library is complete and carries its key. Device memory is host memory.
#include "backends/cpu/cpu_backend.hpp"

#include "backends/common/optimisation.hpp"
#include "backends/cpu/cache.hpp"
#include "backends/cpu/compiler.hpp"
#include "backends/cpu/cpu_generator.hpp"
#include "backends/cpu/precompiled_prelude.hpp"
#include "codegen/ctype.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <filesystem>
#include <fstream>
#include <limits>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>
#include <unistd.h>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace fs = std::filesystem;

namespace spikeforge::cpu {

namespace {

constexpr size_t kNoLimit = std::numeric_limits<size_t>::max();

// The first number in `path` ("max" and unreadable files mean no limit) [B].
size_t readLimit(const fs::path& path) {
    std::ifstream in(path);
    unsigned long long v = 0;
    if (!(in >> v)) return kNoLimit;
    return v > kNoLimit ? kNoLimit : static_cast<size_t>(v);
}

// `MemAvailable` of /proc/meminfo: free memory plus what the kernel can reclaim [B].
size_t memAvailable() {
    std::ifstream in("/proc/meminfo");
    std::string line;
    while (std::getline(in, line)) {
        std::istringstream fields(line); // "MemAvailable:   23838408 kB"
        std::string key;
        unsigned long long kib = 0;
        if (fields >> key >> kib && key == "MemAvailable:")
            return kib > kNoLimit / 1024 ? kNoLimit : static_cast<size_t>(kib * 1024);
    }
    return kNoLimit;
}

// The memory limit of this process's cgroup and of every cgroup above it (v2 `memory.max`, v1
// `memory.limit_in_bytes`); no limit when there is no cgroup file system [B].
size_t cgroupLimit() {
    size_t limit = kNoLimit;
    std::ifstream in("/proc/self/cgroup");
    std::string line;
    while (std::getline(in, line)) {
        // "<hierarchy>:<controllers>:<path>": v2 has no controllers, v1 lists "memory".
        const size_t a = line.find(':'), b = line.find(':', a + 1);
        if (a == std::string::npos || b == std::string::npos) continue;
        const std::string controllers = line.substr(a + 1, b - a - 1);
        fs::path base = "/sys/fs/cgroup", file = "memory.max";
        if (controllers.empty()) {
            if (!fs::exists(base / "cgroup.controllers")) base /= "unified";
        } else if (("," + controllers + ",").find(",memory,") != std::string::npos) {
            base /= "memory";
            file = "memory.limit_in_bytes";
        } else {
            continue;
        }
        fs::path dir = base / fs::path(line.substr(b + 1)).relative_path();
        for (;; dir = dir.parent_path()) {
            limit = std::min(limit, readLimit(dir / file));
            if (dir == base || !dir.has_relative_path() || dir == dir.parent_path()) break;
        }
    }
    return limit;
}

// Physical memory, lowered to what is available now and to the cgroup limit when smaller [B].
// Swap does not count: a simulation that pages would run orders of magnitude slower.
size_t hostMemoryCapacity() {
    size_t cap = kNoLimit;
    const long pages = sysconf(_SC_PHYS_PAGES), pageSize = sysconf(_SC_PAGESIZE);
    if (pages > 0 && pageSize > 0 && size_t(pages) <= kNoLimit / size_t(pageSize))
        cap = size_t(pages) * size_t(pageSize);
    return std::min({cap, memAvailable(), cgroupLimit()});
}

// The entry-point signature of generated code (cpu_generator.cpp prints it): the step
// arguments, the merged-group tables, and the thread count, which is this backend's own option.
using EntryFn = void (*)(const codegen::abi::StepArgs*, void* const*, unsigned);
// codegen::abi::kBatchStepsEntry: first step, step count, dt [ms], tables, threads.
using BatchStepsFn = void (*)(const codegen::abi::StepArgs*, uint64_t, double, void* const*,
                              unsigned);

// The batch-major entry point when `order` and the plan allow it (BackendPreferences::
// cpuStepOrder), else none: Auto takes it when every thread gets a whole batch element.
bool useBatchSteps(BackendPreferences::StepOrder order, const codegen::Plan& plan,
                   unsigned threads) {
    const bool allowed = codegen::stepsAreBatchLocal(plan);
    switch (order) {
    case BackendPreferences::StepOrder::Auto:
        return allowed && plan.batchSize >= threads;
    case BackendPreferences::StepOrder::ByStep:
        return false;
    case BackendPreferences::StepOrder::ByBatch:
        if (!allowed)
            throw ModelError("cpuStepOrder ByBatch needs a batched model (batch size above 1) "
                             "whose step code writes no extra global parameter and which has no "
                             "block-sparse group in the matrix form (it reads each tile once "
                             "for the whole batch)");
        return true;
    }
    throw InternalError("unknown step order");
}

static_assert(sizeof(void*) == 8, "merged-group structs hold 8-byte pointers (codegen/layout)");

class CpuDevice : public backends::Device {
public:
    CpuDevice(void* handle, unsigned threads, const codegen::Plan& plan, bool batchSteps)
        : m_handle(handle), m_threads(threads), m_stepKernels(codegen::stepKernels(plan)) {
        auto numTables = reinterpret_cast<unsigned (*)()>(dlsym(handle, "sf_num_tables"));
        if (!numTables) throw InternalError("generated code lacks sf_num_tables");
        if (numTables() != plan.mergedGroups.size())
            throw InternalError("generated code and plan disagree on the merged groups");
        for (const auto& t : plan.mergedGroups) {
            Table table;
            table.layout = codegen::layoutOf(t.fields);
            for (const auto& f : t.fields)
                table.types.push_back(codegen::cTypeOf(f.ctype));
            table.groups = t.groupNames.size();
            table.bytes.assign(table.layout.size * table.groups, 0);
            m_tables.push_back(std::move(table));
        }
        for (auto& t : m_tables)
            m_tablePtrs.push_back(t.bytes.data());
        // Every entry point is resolved now: a missing one is a generator bug, found at build.
        for (const auto& k : plan.kernels)
            m_entries.push_back(entry(k.entry));
        if (batchSteps) {
            m_batchSteps =
                reinterpret_cast<BatchStepsFn>(dlsym(m_handle, codegen::abi::kBatchStepsEntry));
            if (!m_batchSteps)
                throw InternalError(std::string("generated code lacks ") +
                                    codegen::abi::kBatchStepsEntry);
        }
    }
    // The library stays loaded (RTLD_NODELETE): OpenMP worker threads it started may outlive
    // this object, and unmapping their code under them would crash.
    ~CpuDevice() override = default;

    std::string name() const override { return "cpu"; }
    // Each buffer starts at a different cache-line offset within a page (its colour): a neuron
    // update reads and writes one element of a dozen or more arrays per neuron, and arrays that
    // all start on a page boundary put those lines in the same L1 set, more than its ways hold,
    // so they would evict one another every few neurons. Buffers smaller than a page are only
    // cache-line aligned: a model of 10,000 small groups has 100,000 of them, and a page each
    // cost 400 MB of zeroed pages and a fifth of its set-up time.
    backends::Buffer allocate(size_t bytes) override {
        if (bytes == 0) return nullptr;
        const bool small = bytes < 4096;
        const size_t colour = small ? 0 : 64 * (m_nextColour++ % kColours);
        const size_t alignment = small ? 64 : 4096;
        auto* base = static_cast<unsigned char*>(std::aligned_alloc(
            alignment, (bytes + colour + alignment - 1) / alignment * alignment));
        if (!base)
            throw BackendError("out of memory allocating " + std::to_string(bytes) + " bytes");
        unsigned char* p = base + colour;
        std::memset(p, 0, bytes);
        m_bases.emplace(p, base);
        return p;
    }
    void release(backends::Buffer p) override {
        if (!p) return;
        const auto it = m_bases.find(p);
        if (it == m_bases.end()) throw InternalError("releasing a buffer this device did not make");
        std::free(it->second);
        m_bases.erase(it);
    }
    size_t memoryCapacity() const override { return hostMemoryCapacity(); }
    void zero(backends::Buffer p, size_t bytes) override {
        if (p) timed([&] { std::memset(p, 0, bytes); });
    }
    void copyBuffer(backends::Buffer dst, backends::Buffer src, size_t bytes) override {
        if (bytes) timed([&] { std::memcpy(dst, src, bytes); });
    }
    void bindTable(size_t index,
                   const std::vector<std::vector<backends::FieldValue>>& values) override {
        if (index >= m_tables.size())
            throw InternalError("no merged-group table " + std::to_string(index));
        Table& t = m_tables[index];
        if (values.size() != t.groups)
            throw InternalError("merged-group table " + std::to_string(index) + " has " +
                                std::to_string(t.groups) + " groups, not " +
                                std::to_string(values.size()));
        for (size_t g = 0; g < t.groups; g++) {
            if (values[g].size() != t.types.size())
                throw InternalError("merged-group table " + std::to_string(index) +
                                    ": wrong number of field values");
            unsigned char* base = t.bytes.data() + g * t.layout.size;
            for (size_t f = 0; f < t.types.size(); f++)
                store(base + t.layout.offsets[f], t.types[f], values[g][f]);
        }
    }
    void launch(size_t kernel, const codegen::abi::StepArgs& a) override {
        if (kernel >= m_entries.size()) throw InternalError("no kernel " + std::to_string(kernel));
        void* const* t = m_tablePtrs.data();
        if (!kernelTiming()) return timed([&] { m_entries[kernel](&a, t, m_threads); });
        // The entry point returns when its work is done (OpenMP's team joins before): wall time.
        using Clock = std::chrono::steady_clock;
        const Clock::time_point start = Clock::now();
        timed([&] { m_entries[kernel](&a, t, m_threads); });
        addKernelTime(kernel, std::chrono::duration<double>(Clock::now() - start).count());
    }
    void runSteps(const std::vector<size_t>& kernels, const codegen::abi::StepArgs& first,
                  uint64_t steps, double dt) override {
        if (m_batchSteps && kernels == m_stepKernels && !kernelTiming()) {
            void* const* t = m_tablePtrs.data();
            timed([&] { m_batchSteps(&first, steps, dt, t, m_threads); });
            return;
        }
        timed([&] { Device::runSteps(kernels, first, steps, dt); });
    }
    void runSequence(const std::vector<backends::SequenceItem>& items) override {
        timed([&] { Device::runSequence(items); });
    }
    void synchronise() override {}
    bool buffersAreHostMemory() const override { return true; }
    std::optional<double> busySeconds() override { return m_busySeconds; }

protected:
    void writeBuffer(backends::Buffer dst, const void* src, size_t n) override {
        if (n) std::memcpy(dst, src, n);
    }
    void readBuffer(void* dst, backends::Buffer src, size_t n) override {
        if (n) std::memcpy(dst, src, n);
    }

private:
    struct Table {
        codegen::StructLayout layout;
        std::vector<codegen::CType> types; // per field
        size_t groups = 0;
        std::vector<unsigned char> bytes; // the structs generated code reads
    };

    // Runs `work` and adds its wall time to the busy time, unless an enclosing call is timed
    // already (a sequence's launches are inside the sequence's time). The kernels run on the
    // calling thread and OpenMP's team joins before an entry point returns, so wall time inside
    // them is the device's time: two clock reads per sequence, none per work item.
    template <typename F> void timed(F&& work) {
        if (m_timing) return work();
        using Clock = std::chrono::steady_clock;
        struct Stop { // also when `work` throws: the time was spent
            CpuDevice& device;
            Clock::time_point start;
            ~Stop() {
                device.m_busySeconds += std::chrono::duration<double>(Clock::now() - start).count();
                device.m_timing = false;
            }
        } stop{*this, Clock::now()};
        m_timing = true;
        work();
    }

    static void store(unsigned char* dst, codegen::CType type, const backends::FieldValue& v) {
        using K = backends::FieldValue::Kind;
        switch (v.kind) {
        case K::Buffer:
            if (type != codegen::CType::Pointer)
                throw InternalError("a buffer bound to a non-pointer field");
            std::memcpy(dst, &v.buffer, sizeof v.buffer);
            return;
        case K::Number:
            codegen::storeNumber(dst, type, v.number);
            return;
        }
    }
    EntryFn entry(const std::string& n) {
        auto f = reinterpret_cast<EntryFn>(dlsym(m_handle, n.c_str()));
        if (!f) throw InternalError("generated code lacks " + n);
        return f;
    }
    void* m_handle;
    unsigned m_threads;
    std::vector<Table> m_tables;           // merged-group structs, one table per plan table
    std::vector<void*> m_tablePtrs;        // what entry points receive
    std::vector<EntryFn> m_entries;        // per plan kernel
    static constexpr size_t kColours = 61; // cache-line offsets used (prime: no short cycles)
    size_t m_nextColour = 0;
    std::unordered_map<void*, void*> m_bases; // buffer -> its allocation
    std::vector<size_t> m_stepKernels;        // codegen::stepKernels of the plan
    BatchStepsFn m_batchSteps = nullptr;      // set when steps run batch-major
    double m_busySeconds = 0.0;               // [s] wall time inside timed calls
    bool m_timing = false;                    // inside a timed call
};

// SPIKEFORGE_DEBUG_CODE=1 builds generated code for a debugger without touching the program.
bool debugCode(const BackendPreferences& prefs) {
    const char* env = std::getenv("SPIKEFORGE_DEBUG_CODE");
    return prefs.debugCode || (env && std::string(env) == "1");
}

// -fwrapv: signed integer overflow in a snippet wraps (two's complement) as on the GPUs, rather
// than being undefined behaviour the optimiser may build on.
std::vector<std::string> compileFlags(const BackendPreferences& prefs) {
    if (debugCode(prefs))
        return {"-std=c++17", "-O0", "-g", "-fwrapv", "-fopenmp", "-fPIC", "-shared"};
    // No trapping maths and no errno: results are unchanged (spikeforge never enables FP
    // exceptions or reads errno) but conditional arithmetic in snippets can be if-converted and
    // vectorised. No contraction of a*b+c into one fused operation: the GPU backends do not
    // contract either, so one model computes the same numbers on every backend.
    // Quick builds (BackendPreferences::optimisation): -Og keeps the same arithmetic (the same
    // no-trapping, no-errno and no-contraction flags) at about a third of the compile time of
    // -O3 (three quarters of -O1's, docs/backends.md "Quick builds").
    const char* level = backends::quickBuild(prefs) ? "-Og" : "-O3";
    if (prefs.fastMath) // as Brian2's default: finite-math-only stays off, so NaN is still NaN
        return {"-std=c++17", level,      "-march=native", "-ffast-math", "-fno-finite-math-only",
                "-fwrapv",    "-fopenmp", "-fPIC",         "-shared"};
    return {"-std=c++17",      level,     "-march=native", "-fno-trapping-math",
            "-fno-math-errno", "-fwrapv", "-fopenmp",      "-ffp-contract=off",
            "-fPIC",           "-shared"};
}

// Removes this build's temporary files however the build ends.
struct TempFiles {
    std::vector<fs::path> paths;
    ~TempFiles() { removeAll(); }
    void removeAll() {
        std::error_code ec;
        for (const auto& p : paths)
            fs::remove(p, ec);
    }
};

std::string timeoutText(double seconds) {
    std::ostringstream s;
    s << seconds;
    return s.str();
}

// The error for a compile that timed out or failed: the user's snippet lines when the compiler
// points at them (each once), else the start of the log and where the source was kept.
[[noreturn]] void reportFailure(const ProcessResult& r, const std::string& compiler,
                                const fs::path& src, double timeout) {
    if (r.timedOut)
        throw BackendError("compiling generated code (" + compiler + ", source " + src.string() +
                           ") took longer than the limit of " + timeoutText(timeout) +
                           " s and was stopped; raise the limit with "
                           "BackendPreferences::compileTimeout (--compile-timeout on the "
                           "command line; 0 = no limit)");
    const std::string user = snippetErrors(r.output);
    if (!user.empty())
        throw ModelError("generated code does not compile; in your snippets:\n" + user);
    const std::string how = r.signal ? "was killed by signal " + std::to_string(r.signal)
                                     : "exited with status " + std::to_string(r.exitCode);
    std::string log = r.output.substr(0, 4000);
    if (r.output.size() > log.size()) log += "\n[… compiler output cut]";
    throw BackendError("compiling generated code failed (" + compiler + " " + how +
                       "; source kept at " + src.string() + "):\n" + log);
}

// Compiles `source` into `lib` (through temporary files, published by rename); the source is kept
// next to it as `src` for inspection, also when the compile fails. `prelude`, where not empty, is
// included first (`-include`): the precompiled standard headers (precompiled_prelude.hpp).
void compile(const std::string& compiler, const std::vector<std::string>& flags,
             const fs::path& prelude, const std::string& source, const fs::path& dir,
             const std::string& key, const fs::path& src, const fs::path& lib, double timeout) {
    const std::string stem = cache::tempStem(key);
    TempFiles temps{{dir / (stem + ".cpp"), dir / (stem + ".so")}};
    const fs::path& tmpSrc = temps.paths[0];
    const fs::path& tmpLib = temps.paths[1];
    {
        std::ofstream out(tmpSrc, std::ios::binary);
        out << source;
        if (!out.flush()) throw BackendError("cannot write " + tmpSrc.string());
    }
    std::vector<std::string> argv{compiler};
    argv.insert(argv.end(), flags.begin(), flags.end());
    if (!prelude.empty()) argv.insert(argv.end(), {"-include", prelude.string()});
    argv.insert(argv.end(), {"-o", tmpLib.string(), tmpSrc.string()});
    ProcessOptions options;
    options.timeout = timeout;
    const ProcessResult r = runProcess(argv, options);
    std::error_code ec;
    if (r.interrupted) {
        temps.removeAll();
        reraisePendingSignal();
        throw BackendError("compiling generated code was interrupted by a signal");
    }
    // GCC passes over a precompiled header it does not recognise but fails on one it cannot
    // read (a damaged file: "cannot read PCH file", "while reading precompiled header"): that one
    // is removed, to be built again by the next model, and this compile runs without it.
    if (!r.ok() && !prelude.empty() &&
        (r.output.find("precompiled header") != std::string::npos ||
         r.output.find("PCH file") != std::string::npos)) {
        temps.removeAll();
        discardPrecompiledPrelude(prelude);
        compile(compiler, flags, {}, source, dir, key, src, lib, timeout);
        return;
    }
    fs::rename(tmpSrc, src, ec);
    if (!r.ok()) reportFailure(r, compiler, src, timeout);
    fs::rename(tmpLib, lib, ec); // atomic: a reader sees the old file or the whole new one
    if (ec) throw BackendError("cannot publish " + lib.string() + ": " + ec.message());
}

// Loads `lib` if it is a complete library carrying `key`; otherwise returns null with the reason
// in `why` and, when `locked` (the key's lock is held: no one is publishing it right now),
// removes the file. A library that fails a check is never run. After a library with the wrong key
// has been loaded, its path names that library in this process (dlopen matches loaded objects by
// name), so a rebuilt file is then loaded through a fresh hard link.
void* loadChecked(const fs::path& lib, const std::string& key, bool locked, bool& pathPoisoned,
                  std::string& why) {
    std::error_code ec;
    const cache::FileState state = cache::inspectLibrary(lib, key);
    if (state != cache::FileState::Ok) {
        why = lib.string() + " is " + cache::describe(state);
        if (locked && state != cache::FileState::Missing) fs::remove(lib, ec);
        return nullptr;
    }
    fs::path path = lib;
    if (pathPoisoned) {
        path = lib.parent_path() / (cache::tempStem(key) + ".load.so");
        fs::create_hard_link(lib, path, ec);
        if (ec) fs::copy_file(lib, path, ec);
        if (ec) throw BackendError("cannot link " + lib.string() + ": " + ec.message());
    }
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    const char* err = handle ? nullptr : dlerror();
    if (path != lib) fs::remove(path, ec);
    if (!handle) {
        why = std::string("dlopen failed: ") + (err ? err : "unknown error");
        if (locked) fs::remove(lib, ec);
        return nullptr;
    }
    const auto* mark = static_cast<const char*>(dlsym(handle, "sf_cache_key"));
    if (mark && cache::keyMark(key) == mark) return handle;
    why = lib.string() + (mark ? " carries another key" : " lacks sf_cache_key");
    pathPoisoned = true;
    if (locked) fs::remove(lib, ec);
    return nullptr;
}

} // namespace

fs::path cacheDirectory(const BackendPreferences& prefs) {
    return cache::locate(prefs);
}

namespace {
// OpenMP threads spin a long time by default before sleeping; with per-step kernels of
// microseconds on a shared machine that spinning starves the threads doing the work. A short spin
// is the better default; the user's own OMP_WAIT_POLICY / GOMP_SPINCOUNT win. libgomp reads these
// when the first generated library pulls it in. The variable is set here, while the program (or
// the library, when it is loaded) starts: setenv races with getenv in any other thread, and two
// simulations built at once from two threads crashed when it was set at build time.
const bool kShortOpenMpSpinSet = [] {
    if (std::getenv("OMP_WAIT_POLICY") || std::getenv("GOMP_SPINCOUNT")) return false;
    return setenv("GOMP_SPINCOUNT", "10000", 0) == 0;
}();
} // namespace

CpuBackend::CpuBackend(BackendPreferences prefs) : m_prefs(std::move(prefs)) {
    if (m_prefs.threads < 0) throw ModelError("threads must be 0 (all cores) or positive");
    m_threads = m_prefs.threads > 0 ? static_cast<unsigned>(m_prefs.threads)
                                    : std::max(1u, std::thread::hardware_concurrency());
}

std::unique_ptr<backends::Device> CpuBackend::build(const codegen::Plan& plan, BuildInfo& info) {
    const double timeout = m_prefs.compileTimeout; // [s]
    if (!std::isfinite(timeout) || timeout < 0)
        throw ModelError("compileTimeout must be a number of seconds ≥ 0 (0 = no limit), not " +
                         timeoutText(timeout));
    const bool batchSteps = useBatchSteps(m_prefs.cpuStepOrder, plan, m_threads);
    const fs::path dir = cache::prepare(m_prefs);
    const std::string compiler = resolveProgram(compilerName(m_prefs.compiler));
    const std::vector<std::string> flags = compileFlags(m_prefs);
    const std::string source = generateSource(plan);
    const CompilerIdentity identity = identifyCompiler(compiler, flags, timeout);
    // The key leaves out the precompiled prelude: it changes the time a compile takes, never
    // the code it makes.
    const std::string key = cache::computeKey(source, identity, flags);
    const fs::path src = dir / (key + ".cpp"), lib = dir / (key + ".so");
    info.sourcePath = src.string();
    info.cacheHit = true;
    info.compileSeconds = 0.0;
    bool poisoned = false;
    std::string why;
    if (void* h = loadChecked(lib, key, false, poisoned, why))
        return std::make_unique<CpuDevice>(h, m_threads, plan, batchSteps);
    // Build under the key's lock; whoever waited for it finds the library built.
    cache::KeyLock lock(dir, key, timeout);
    if (lock.held()) cache::removeStaleTemps(dir, key, std::chrono::hours(1));
    if (void* h = loadChecked(lib, key, lock.held(), poisoned, why))
        return std::make_unique<CpuDevice>(h, m_threads, plan, batchSteps);
    const auto t0 = std::chrono::steady_clock::now();
    const fs::path prelude =
        precompiledPrelude(compiler, identity, flags, standardIncludes(plan), dir, timeout);
    compile(compiler, flags, prelude, source + cache::keySymbolSource(key), dir, key, src, lib,
            timeout);
    info.compileSeconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    info.cacheHit = false;
    void* handle = loadChecked(lib, key, lock.held(), poisoned, why);
    if (!handle) throw BackendError("the freshly compiled library cannot be used: " + why);
    return std::make_unique<CpuDevice>(handle, m_threads, plan, batchSteps);
}

// A compiler that ran once is not run again in this process while its file is unchanged: the
// backend list is asked for by every parameterised test suite at start (~15 ms a probe, ~190
// probes in the test binary), and a compiler does not come and go under a running program.
// The key is the resolved program and its file's identity, so another $CXX or a replaced file is
// probed afresh; failures are never remembered.
std::string compilerStatus(const BackendPreferences& prefs) {
    const std::string name = compilerName(prefs.compiler);
    try {
        const std::string program = resolveProgram(name);
        std::error_code ec;
        const auto stamp = fs::last_write_time(program, ec);
        const auto size = ec ? 0 : fs::file_size(fs::canonical(program, ec), ec);
        const std::string key = program + '\n' +
                                std::to_string(ec ? 0 : stamp.time_since_epoch().count()) + '\n' +
                                std::to_string(ec ? 0 : size);
        static std::mutex mutex;
        static std::unordered_set<std::string> working;
        {
            std::lock_guard<std::mutex> lock(mutex);
            if (!ec && working.count(key)) return "";
        }
        ProcessOptions options;
        options.timeout = 30.0;
        options.maxOutput = 64 * 1024;
        const ProcessResult r = runProcess({program, "--version"}, options);
        if (r.interrupted) reraisePendingSignal();
        if (!r.ok()) return "C++ compiler '" + name + "' does not run (`--version` failed)";
        if (!ec) {
            std::lock_guard<std::mutex> lock(mutex);
            working.insert(key);
        }
    } catch (const BackendError& e) {
        return e.what();
    }
    return "";
}

} // namespace spikeforge::cpu
