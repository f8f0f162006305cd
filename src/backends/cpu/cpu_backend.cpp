// CPU backend: generated C++ compiled by the system compiler into a shared object (cached by
// content hash) and loaded with dlopen. Device memory is host memory.
#include "backends/cpu/cpu_backend.hpp"

#include "backends/cpu/cpu_generator.hpp"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <unistd.h>
#include <vector>

namespace fs = std::filesystem;

namespace spikeforge::cpu {

namespace {

using EntryFn = void (*)(const runtime::StepArgs*, void* const*);

class CpuDevice : public runtime::Device {
public:
    CpuDevice(void* handle, int threads, const codegen::Plan& plan) : m_handle(handle) {
        m_init = entry("sf_initialize");
        m_syn = entry("sf_synapse_update");
        m_neu = entry("sf_neuron_update");
        auto numTables = reinterpret_cast<unsigned (*)()>(dlsym(handle, "sf_num_tables"));
        if (!numTables) throw InternalError("generated code lacks sf_num_tables");
        if (numTables() != plan.mergedGroups.size())
            throw InternalError("generated code and plan disagree on the merged groups");
        for (size_t i = 0; i < plan.mergedGroups.size(); i++) {
            m_tableIndex[plan.mergedGroups[i].symbol] = i;
            m_tables.emplace_back(codegen::layoutOf(plan.mergedGroups[i].fields).size *
                                      plan.mergedGroups[i].groupNames.size(),
                                  0);
            m_tablePtrs.push_back(m_tables.back().data());
        }
        (void)threads;
    }
    // The library stays loaded (RTLD_NODELETE): OpenMP worker threads it started may outlive
    // this object, and unmapping their code under them would crash.
    ~CpuDevice() override = default;

    std::string name() const override { return "cpu"; }
    void* allocate(size_t bytes) override {
        if (bytes == 0) return nullptr;
        void* p = std::aligned_alloc(64, (bytes + 63) / 64 * 64);
        if (!p) throw BackendError("out of memory allocating " + std::to_string(bytes) + " bytes");
        std::memset(p, 0, bytes);
        return p;
    }
    void release(void* p) override { std::free(p); }
    void zero(void* p, size_t bytes) override {
        if (p) std::memset(p, 0, bytes);
    }
    void copyToDevice(void* dst, const void* src, size_t n) override {
        if (n) std::memcpy(dst, src, n);
    }
    void copyFromDevice(void* dst, const void* src, size_t n) override {
        if (n) std::memcpy(dst, src, n);
    }
    void writeTable(const std::string& symbol, const void* bytes, size_t size) override {
        auto it = m_tableIndex.find(symbol);
        if (it == m_tableIndex.end() || m_tables[it->second].size() != size)
            throw InternalError("no merged-group table " + symbol + " of that size");
        std::memcpy(m_tables[it->second].data(), bytes, size);
    }
    void launch(const std::string& e, const runtime::StepArgs& a) override {
        void* const* t = m_tablePtrs.data();
        if (e == "sf_synapse_update")
            m_syn(&a, t);
        else if (e == "sf_neuron_update")
            m_neu(&a, t);
        else if (e == "sf_initialize")
            m_init(&a, t);
        else
            customEntry(e)(&a, t);
    }
    void synchronise() override {}

private:
    // Custom-update entry points are looked up once, on first use.
    EntryFn customEntry(const std::string& e) {
        auto it = m_custom.find(e);
        if (it != m_custom.end()) return it->second;
        if (e.rfind("sf_custom_update_", 0) != 0)
            throw InternalError("unknown entry point " + e);
        return m_custom[e] = entry(e.c_str());
    }
    EntryFn entry(const char* n) {
        auto f = reinterpret_cast<EntryFn>(dlsym(m_handle, n));
        if (!f) throw InternalError(std::string("generated code lacks ") + n);
        return f;
    }
    void* m_handle;
    EntryFn m_init, m_syn, m_neu;
    std::map<std::string, size_t> m_tableIndex;
    std::map<std::string, EntryFn> m_custom;
    std::vector<std::vector<unsigned char>> m_tables; // merged-group structs, runtime-owned
    std::vector<void*> m_tablePtrs;
};

std::string compilerCommand(const BackendPreferences& prefs) {
    if (!prefs.compiler.empty()) return prefs.compiler;
    if (const char* cxx = std::getenv("CXX"); cxx && *cxx) return cxx;
    return "c++";
}

// SPIKEFORGE_DEBUG_CODE=1 builds generated code for a debugger without touching the program.
bool debugCode(const BackendPreferences& prefs) {
    const char* env = std::getenv("SPIKEFORGE_DEBUG_CODE");
    return prefs.debugCode || (env && std::string(env) == "1");
}

std::string flags(const BackendPreferences& prefs) {
    return debugCode(prefs) ? "-std=c++17 -O0 -g -fopenmp -fPIC -shared"
                            // No trapping maths and no errno: results are unchanged (spikeforge
                            // never enables FP exceptions or reads errno) but conditional
                            // arithmetic in snippets can be if-converted and vectorised.
                            : "-std=c++17 -O3 -march=native -fno-trapping-math -fno-math-errno "
                              "-fopenmp -fPIC -shared";
}

// Lines of the compiler output that point into a user's snippet ("Group.field:L:C: error").
std::string snippetErrors(const std::string& log) {
    static const std::regex userLine(R"(^[A-Za-z_][A-Za-z0-9_]*\.[A-Za-z_.]+:\d+:\d+: error: .*$)");
    std::istringstream in(log);
    std::string line, out;
    while (std::getline(in, line))
        if (std::regex_match(line, userLine)) out += "  " + line + "\n";
    return out;
}

std::string readFile(const fs::path& p) {
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

} // namespace

fs::path cacheDirectory(const BackendPreferences& prefs) {
    if (!prefs.cacheDir.empty()) return prefs.cacheDir;
    if (const char* c = std::getenv("SPIKEFORGE_CACHE"); c && *c) return c;
    if (const char* h = std::getenv("HOME"); h && *h) return fs::path(h) / ".cache" / "spikeforge";
    return fs::temp_directory_path() / "spikeforge-cache";
}

codegen::Plan CpuBackend::generate(const Model& model) {
    return cpu::generate(model);
}

std::unique_ptr<runtime::Device> CpuBackend::build(const codegen::Plan& plan, BuildInfo& info) {
    const fs::path dir = cacheDirectory(m_prefs);
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec)
        throw BackendError("cannot create cache directory " + dir.string() + ": " + ec.message());
    const std::string compiler = compilerCommand(m_prefs);
    // The key covers the source, the flags and the compiler, so a change to any recompiles.
    const std::string key =
        plan.sourceHash + "_" +
        std::to_string(std::hash<std::string>{}(flags(m_prefs) + compiler) % 0xFFFFFFu);
    const fs::path src = dir / (key + ".cpp"), lib = dir / (key + ".so");
    info.sourcePath = src.string();
    if (!fs::exists(lib)) {
        const auto t0 = std::chrono::steady_clock::now();
        const std::string tag =
            std::to_string(getpid()) + "_" + std::to_string(reinterpret_cast<uintptr_t>(this));
        const fs::path tmpSrc = dir / (key + "." + tag + ".cpp");
        const fs::path tmpLib = dir / (key + "." + tag + ".so");
        const fs::path log = dir / (key + "." + tag + ".log");
        {
            std::ofstream out(tmpSrc);
            out << plan.source;
            if (!out) throw BackendError("cannot write " + tmpSrc.string());
        }
        const std::string cmd = compiler + " " + flags(m_prefs) + " -o '" + tmpLib.string() +
                                "' '" + tmpSrc.string() + "' > '" + log.string() + "' 2>&1";
        const int rc = std::system(cmd.c_str());
        if (rc != 0) {
            const std::string text = readFile(log);
            fs::rename(tmpSrc, src, ec);
            const std::string user = snippetErrors(text);
            if (!user.empty())
                throw ModelError("generated code does not compile; in your snippets:\n" + user);
            throw BackendError("compiling generated code failed (" + compiler + ", source " +
                               src.string() + "):\n" + text.substr(0, 4000));
        }
        fs::rename(tmpSrc, src, ec);
        fs::rename(tmpLib, lib, ec); // atomic: concurrent builds of one model are safe
        fs::remove(log, ec);
        info.compileSeconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        info.cacheHit = false;
    } else {
        info.cacheHit = true;
        info.compileSeconds = 0.0;
    }
    // OpenMP threads spin a long time by default before sleeping; with per-step kernels of
    // microseconds on a shared machine that spinning starves the threads doing the work. A short
    // spin is the better default; the user's own OMP_WAIT_POLICY / GOMP_SPINCOUNT win. libgomp
    // reads these when the first generated library pulls it in, i.e. at this dlopen.
    if (!std::getenv("OMP_WAIT_POLICY") && !std::getenv("GOMP_SPINCOUNT"))
        setenv("GOMP_SPINCOUNT", "10000", 0);
    void* handle = dlopen(lib.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (!handle) throw BackendError(std::string("dlopen failed: ") + dlerror());
    return std::make_unique<CpuDevice>(handle, m_prefs.threads, plan);
}

std::string compilerStatus(const BackendPreferences& prefs) {
    const std::string cmd = compilerCommand(prefs) + " --version > /dev/null 2>&1";
    if (std::system(cmd.c_str()) != 0)
        return "C++ compiler '" + compilerCommand(prefs) + "' not found (set CXX)";
    return "";
}

} // namespace spikeforge::cpu
