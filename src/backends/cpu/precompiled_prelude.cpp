#include "backends/cpu/precompiled_prelude.hpp"

#include "backends/cpu/cache.hpp"

#include <fstream>
#include <mutex>
#include <unordered_set>

namespace fs = std::filesystem;

namespace spikeforge::cpu {

namespace {

bool writeFile(const fs::path& path, const std::string& text) {
    std::ofstream out(path, std::ios::binary);
    out << text;
    return static_cast<bool>(out.flush());
}

// Builds `header` and `header.gch` through temporary files; false when the compiler fails.
bool build(const std::string& compiler, const std::vector<std::string>& flags,
           const std::string& includes, const fs::path& dir, const std::string& key,
           const fs::path& header, double timeout) {
    const std::string stem = cache::tempStem(key);
    const fs::path tmpHeader = dir / (stem + ".h"), tmpPch = dir / (stem + ".h.gch");
    std::error_code ec;
    if (!writeFile(tmpHeader, includes)) {
        fs::remove(tmpHeader, ec);
        return false;
    }
    std::vector<std::string> argv{compiler};
    for (const auto& f : flags)
        if (f != "-shared") argv.push_back(f); // a link option: no meaning for a header
    argv.insert(argv.end(), {"-x", "c++-header", tmpHeader.string(), "-o", tmpPch.string()});
    ProcessOptions options;
    options.timeout = timeout;
    const ProcessResult r = runProcess(argv, options);
    if (r.interrupted) {
        fs::remove(tmpHeader, ec);
        fs::remove(tmpPch, ec);
        reraisePendingSignal();
        return false;
    }
    // The header first: a reader that finds the .gch finds the header it belongs to.
    bool ok = r.ok();
    if (ok) fs::rename(tmpHeader, header, ec);
    ok = ok && !ec;
    if (ok) fs::rename(tmpPch, fs::path(header.string() + ".gch"), ec);
    ok = ok && !ec;
    fs::remove(tmpHeader, ec);
    fs::remove(tmpPch, ec);
    return ok;
}

} // namespace

bool precompilesPrelude(const CompilerIdentity& identity) {
    return identity.version.find("clang") == std::string::npos &&
           (identity.version.find("GCC") != std::string::npos ||
            identity.version.find("g++") != std::string::npos ||
            identity.version.find("Free Software Foundation") != std::string::npos);
}

fs::path precompiledPrelude(const std::string& compiler, const CompilerIdentity& identity,
                            const std::vector<std::string>& flags, const std::string& includes,
                            const fs::path& dir, double timeout) {
    if (!precompilesPrelude(identity)) return {};
    // Over everything GCC checks before it uses a precompiled header (the compiler, the target
    // and the options) and the header's text, as a library's key is; the leading line keeps it
    // apart from every library's (a generated source starts with its own comment).
    const std::string key =
        cache::computeKey("// spikeforge precompiled prelude 1\n" + includes, identity, flags);
    const fs::path header = dir / (key + ".prelude.h");
    const fs::path pch = header.string() + ".gch";
    std::error_code ec;
    if (fs::is_regular_file(pch, ec)) return header;
    cache::KeyLock lock(dir, key, timeout);
    if (lock.held()) cache::removeStaleTemps(dir, key, std::chrono::hours(1));
    if (fs::is_regular_file(pch, ec)) return header;
    // A header that did not build is not tried again in this process (each try costs a compile).
    static std::mutex mutex;
    static std::unordered_set<std::string> failed;
    {
        std::lock_guard<std::mutex> guard(mutex);
        if (failed.count(key)) return {};
    }
    if (build(compiler, flags, includes, dir, key, header, timeout)) return header;
    std::lock_guard<std::mutex> guard(mutex);
    failed.insert(key);
    return {};
}

void discardPrecompiledPrelude(const fs::path& header) {
    std::error_code ec;
    fs::remove(fs::path(header.string() + ".gch"), ec);
}

} // namespace spikeforge::cpu
