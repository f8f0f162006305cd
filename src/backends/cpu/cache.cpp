#include "backends/cpu/cache.hpp"

#include "backends/common/sha256.hpp"

#include <cstring>
#include <elf.h>
#include <fstream>
#include <link.h>
#include <sstream>

namespace fs = std::filesystem;

namespace spikeforge::cpu::cache {

std::string computeKey(const std::string& source, const CompilerIdentity& compiler,
                       const std::vector<std::string>& flags) {
    backends::Sha256 h;
    h.field("spikeforge-cpu-cache-1"); // bump when the library ABI or this key's layout changes
    h.field(source);
    h.field(compiler.path);
    h.field(compiler.version);
    h.field(compiler.target);
    for (const auto& f : flags)
        h.field(f);
    return h.hexDigest();
}

std::string keyMark(const std::string& key) {
    return "sf-cache-key:" + key;
}

std::string keySymbolSource(const std::string& key) {
    return "extern \"C\" __attribute__((visibility(\"default\"), used)) const char "
           "sf_cache_key[] = \"" +
           keyMark(key) + "\";\n";
}

namespace {

constexpr char kNativeClass = sizeof(void*) == 8 ? ELFCLASS64 : ELFCLASS32;

// Every part of the file the loader maps or reads lies inside it.
bool elfComplete(const std::string& bytes) {
    using Ehdr = ElfW(Ehdr);
    using Phdr = ElfW(Phdr);
    const uint64_t size = bytes.size();
    if (size < sizeof(Ehdr)) return false;
    Ehdr eh;
    std::memcpy(&eh, bytes.data(), sizeof eh);
    auto within = [size](uint64_t offset, uint64_t count, uint64_t each) {
        return offset <= size && (each == 0 || count <= (size - offset) / each);
    };
    if (eh.e_phentsize != sizeof(Phdr) || !within(eh.e_phoff, eh.e_phnum, sizeof(Phdr)))
        return false;
    if (eh.e_shoff != 0 && !within(eh.e_shoff, eh.e_shnum, eh.e_shentsize)) return false;
    for (unsigned i = 0; i < eh.e_phnum; i++) {
        Phdr ph;
        std::memcpy(&ph, bytes.data() + eh.e_phoff + i * sizeof(Phdr), sizeof ph);
        if (ph.p_type == PT_LOAD && !within(ph.p_offset, ph.p_filesz, 1)) return false;
    }
    return true;
}

} // namespace

FileState inspectLibrary(const fs::path& lib, const std::string& key) {
    std::ifstream in(lib, std::ios::binary);
    if (!in) return FileState::Missing;
    std::ostringstream ss;
    ss << in.rdbuf();
    const std::string bytes = ss.str();
    if (bytes.empty()) return FileState::Empty;
    const bool nativeClass = bytes.size() > EI_CLASS && bytes[EI_CLASS] == kNativeClass;
    if (bytes.size() < SELFMAG || bytes.compare(0, SELFMAG, ELFMAG) != 0 || !nativeClass)
        return FileState::NotElf;
    if (!elfComplete(bytes)) return FileState::Truncated;
    if (bytes.find(keyMark(key)) == std::string::npos) return FileState::WrongKey;
    return FileState::Ok;
}

const char* describe(FileState state) {
    switch (state) {
    case FileState::Missing:
        return "missing";
    case FileState::Empty:
        return "empty";
    case FileState::NotElf:
        return "not a shared library for this machine";
    case FileState::Truncated:
        return "truncated";
    case FileState::WrongKey:
        return "built for another key";
    case FileState::Ok:
        return "valid";
    }
    return "unknown";
}

} // namespace spikeforge::cpu::cache
