#pragma once
// The compile cache: a per-user directory of shared objects named by a SHA-256 key over
// everything that decides the compiled code, each library carrying its key, built at most once
// at a time per key (a lock file) and published by rename. See docs/internals.md, "Cache".
#include "backends/cpu/compiler.hpp"
#include "spikeforge/simulation.hpp"

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

namespace spikeforge::cpu::cache {

// BackendPreferences::cacheDir, else $SPIKEFORGE_CACHE, else $XDG_CACHE_HOME/spikeforge, else
// $HOME/.cache/spikeforge, else the home directory of the user's passwd entry. Never a shared
// directory: BackendError when none of these exists. Nothing is created.
std::filesystem::path locate(const BackendPreferences& prefs);

// locate(), created with mode 0700 when missing, then checked: a real directory (not a
// symlink), owned by this user, not writable by group or others. BackendError naming the path
// and the problem otherwise.
std::filesystem::path prepare(const BackendPreferences& prefs);

// SHA-256 (hex) over the source, the compiler's path, version and resolved target, and flags.
std::string computeKey(const std::string& source, const CompilerIdentity& compiler,
                       const std::vector<std::string>& flags);
// The text a library of `key` carries (the value of its exported `sf_cache_key`).
std::string keyMark(const std::string& key);
// The definition appended to the generated source to export that text.
std::string keySymbolSource(const std::string& key);

// What a file in the cache looks like, checked without loading it (dlopen of a truncated file
// can SIGBUS, and loading a foreign one runs its initialisers).
enum class FileState { Missing, Empty, NotElf, Truncated, WrongKey, Ok };
FileState inspectLibrary(const std::filesystem::path& lib, const std::string& key);
const char* describe(FileState state);

// An exclusive flock on `<dir>/<key>.lock`, held while a key is checked and built. Waits at
// most `timeout` seconds (0 = no limit) for another process, then BackendError.
class KeyLock {
public:
    KeyLock(const std::filesystem::path& dir, const std::string& key, double timeout);
    ~KeyLock();
    KeyLock(const KeyLock&) = delete;
    KeyLock& operator=(const KeyLock&) = delete;
    // False on a filesystem without locks: then nothing may be deleted on the lock's strength.
    bool held() const { return m_fd >= 0; }

private:
    int m_fd = -1;
};

// "<key>.tmp.<pid>.<random>": the stem of this build's temporary files.
std::string tempStem(const std::string& key);
// Removes temporary files of `key` left by a process that is gone or older than `maxAge`.
// Called with the key's lock held, so no live build of that key can own them.
void removeStaleTemps(const std::filesystem::path& dir, const std::string& key,
                      std::chrono::seconds maxAge);

} // namespace spikeforge::cpu::cache
