#include "backends/cpu/cache.hpp"

#include "backends/cpu/sha256.hpp"
#include "spikeforge/errors.hpp"

#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstring>
#include <elf.h>
#include <fcntl.h>
#include <fstream>
#include <link.h>
#include <pwd.h>
#include <random>
#include <sstream>
#include <sys/file.h>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

namespace fs = std::filesystem;

namespace spikeforge::cpu::cache {

namespace {

const char* nonEmptyEnv(const char* name) {
    const char* v = std::getenv(name);
    return v && *v ? v : nullptr;
}

std::string passwdHome() {
    long size = sysconf(_SC_GETPW_R_SIZE_MAX);
    std::vector<char> buf(size > 0 ? static_cast<size_t>(size) : 16384);
    passwd pw{}, *found = nullptr;
    if (getpwuid_r(getuid(), &pw, buf.data(), buf.size(), &found) != 0 || !found || !pw.pw_dir ||
        pw.pw_dir[0] != '/')
        return "";
    return pw.pw_dir;
}

std::string octal(mode_t mode) {
    char s[8];
    std::snprintf(s, sizeof s, "%04o", static_cast<unsigned>(mode & 07777));
    return s;
}

} // namespace

fs::path locate(const BackendPreferences& prefs) {
    if (!prefs.cacheDir.empty()) return prefs.cacheDir;
    if (const char* c = nonEmptyEnv("SPIKEFORGE_CACHE")) return c;
    // The XDG spec ignores relative values.
    if (const char* x = nonEmptyEnv("XDG_CACHE_HOME"); x && x[0] == '/')
        return fs::path(x) / "spikeforge";
    if (const char* h = nonEmptyEnv("HOME")) return fs::path(h) / ".cache" / "spikeforge";
    if (const std::string home = passwdHome(); !home.empty())
        return fs::path(home) / ".cache" / "spikeforge";
    throw BackendError("no per-user cache directory: HOME is unset and the user has no home "
                       "directory; set SPIKEFORGE_CACHE or BackendPreferences::cacheDir");
}

fs::path prepare(const BackendPreferences& prefs) {
    const fs::path dir = locate(prefs);
    const std::string where = "cache directory " + dir.string();
    std::error_code ec;
    if (dir.has_parent_path()) fs::create_directories(dir.parent_path(), ec);
    if (ec) throw BackendError("cannot create the parent of the " + where + ": " + ec.message());
    if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
        throw BackendError("cannot create the " + where + ": " + std::strerror(errno));
    struct stat st {};
    if (lstat(dir.c_str(), &st) != 0)
        throw BackendError("cannot inspect the " + where + ": " + std::strerror(errno));
    if (S_ISLNK(st.st_mode))
        throw BackendError("refusing the " + where +
                           ": it is a symbolic link (another user could redirect it); use the "
                           "real directory in SPIKEFORGE_CACHE");
    if (!S_ISDIR(st.st_mode)) throw BackendError("refusing the " + where + ": not a directory");
    if (st.st_uid != geteuid())
        throw BackendError("refusing the " + where + ": owned by uid " + std::to_string(st.st_uid) +
                           ", not by this user (uid " + std::to_string(geteuid()) + ")");
    if (st.st_mode & (S_IWGRP | S_IWOTH))
        throw BackendError("refusing the " + where + ": writable by group or others (mode " +
                           octal(st.st_mode) + "); run `chmod 700` on it");
    return dir;
}

std::string computeKey(const std::string& source, const CompilerIdentity& compiler,
                       const std::vector<std::string>& flags) {
    Sha256 h;
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

KeyLock::KeyLock(const fs::path& dir, const std::string& key, double timeout) {
    const fs::path path = dir / (key + ".lock");
    m_fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (m_fd < 0)
        throw BackendError("cannot open the lock file " + path.string() + ": " +
                           std::strerror(errno));
    // A generous bound: the holder's own compile is limited by the same timeout.
    const auto t0 = std::chrono::steady_clock::now();
    const double limit = timeout > 0 ? timeout + 60.0 : 0.0;
    while (flock(m_fd, LOCK_EX | LOCK_NB) != 0) {
        const int err = errno;
        // A filesystem without locks (some network mounts): builds stay correct, since
        // libraries are published by rename, but concurrent runs may each compile.
        if (err == ENOLCK || err == EOPNOTSUPP || err == ENOSYS) {
            close(m_fd);
            m_fd = -1;
            return;
        }
        const double waited =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        if ((err != EWOULDBLOCK && err != EINTR) || (limit > 0 && waited > limit)) {
            close(m_fd);
            throw BackendError(err == EWOULDBLOCK
                                   ? "waited " + std::to_string(static_cast<int>(waited)) +
                                         " s for " + path.string() +
                                         ", held by another build of the same model"
                                   : "cannot lock " + path.string() + ": " + std::strerror(err));
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
}

KeyLock::~KeyLock() {
    if (m_fd >= 0) close(m_fd); // releases the lock
}

std::string tempStem(const std::string& key) {
    static thread_local std::mt19937_64 rng{std::random_device{}()};
    char tail[17];
    std::snprintf(tail, sizeof tail, "%016llx", static_cast<unsigned long long>(rng()));
    return key + ".tmp." + std::to_string(getpid()) + "." + tail;
}

void removeStaleTemps(const fs::path& dir, const std::string& key, std::chrono::seconds maxAge) {
    const std::string prefix = key + ".tmp.";
    const auto now = fs::file_time_type::clock::now();
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        const std::string name = it->path().filename().string();
        if (name.rfind(prefix, 0) != 0) continue;
        const long pid = std::strtol(name.c_str() + prefix.size(), nullptr, 10);
        if (pid == getpid()) continue; // another thread of this process: its own build
        std::error_code e2;
        const auto mtime = fs::last_write_time(it->path(), e2);
        const bool old = !e2 && now - mtime > maxAge;
        const bool dead = pid <= 0 || (kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH);
        if (old || dead) fs::remove(it->path(), e2);
    }
}

} // namespace spikeforge::cpu::cache
