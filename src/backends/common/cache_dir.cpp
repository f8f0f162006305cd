#include "backends/common/cache_dir.hpp"

#include "spikeforge/errors.hpp"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <pwd.h>
#include <random>
#include <sys/file.h>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace fs = std::filesystem;

namespace spikeforge::backends::cache {

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

} // namespace spikeforge::backends::cache
